// Pure path builders for the staging layout (tree in staging_paths.h).
#include "staging/staging_paths.h"

#include "launch/attempt_identity.h"

namespace tuneplane::staging {

bool isCleanAbsolutePath(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  if (path == "/") return true;
  std::string_view rest = path.substr(1);
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    if (part.empty() || part == "." || part == "..") return false;
    if (part.find('\0') != std::string_view::npos) return false;
    if (slash == std::string_view::npos) return true;
    rest = rest.substr(slash + 1);
  }
}

Result<std::string> jobDir(std::string_view staging_root, std::string_view job_id) {
  if (!isCleanAbsolutePath(staging_root)) {
    return fail("staging.invalid_root", "staging_root",
                "staging root '" + std::string(staging_root) +
                    "' must be an absolute path without '.', '..' or empty components");
  }
  if (!launch::isValidJobId(job_id)) {
    return fail("staging.invalid_job_id", "job_id",
                "job id '" + std::string(job_id) +
                    "' is not of the form <dns-label>-<8 lower-case hex digits>");
  }
  std::string dir(staging_root);
  if (dir != "/") dir += '/';
  dir += kJobsDir;
  dir += '/';
  dir += job_id;
  return dir;
}

Result<std::string> checkpointDir(std::string_view staging_root, std::string_view job_id) {
  auto job = jobDir(staging_root, job_id);
  if (!job) return job;
  return *job + "/" + std::string(kCheckpointsDir);
}

Result<std::string> attemptDir(std::string_view staging_root, std::string_view job_id,
                               int attempt) {
  auto job = jobDir(staging_root, job_id);
  if (!job) return job;
  if (attempt < 1) {
    return fail("staging.invalid_attempt", "attempt",
                "attempt " + std::to_string(attempt) + " is not >= 1");
  }
  return *job + "/" + std::string(kAttemptsDir) + "/" + std::to_string(attempt);
}

std::string attemptFile(std::string_view attempt_dir, std::string_view name) {
  std::string path(attempt_dir);
  path += '/';
  path += name;
  return path;
}

std::string parentDir(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  if (slash == 0 || slash == std::string_view::npos) return "/";
  return std::string(path.substr(0, slash));
}

std::string stagingTempPrefix(std::string_view attempt_dir) {
  const std::size_t slash = attempt_dir.rfind('/');
  const std::string_view base =
      slash == std::string_view::npos ? attempt_dir : attempt_dir.substr(slash + 1);
  std::string parent = parentDir(attempt_dir);
  if (parent != "/") parent += '/';
  return parent + "." + std::string(base) + ".staging-";
}

}  // namespace tuneplane::staging
