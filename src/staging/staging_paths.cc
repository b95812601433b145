// Pure path builders for the staging layout (tree in staging_paths.h).
#include "staging/staging_paths.h"

#include "common/text_checks.h"
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

namespace {

Status checkRoot(std::string_view staging_root) {
  if (isCleanAbsolutePath(staging_root)) return ok();
  return fail("staging.invalid_root", "staging_root",
              "staging root '" + std::string(staging_root) +
                  "' must be an absolute path without '.', '..' or empty components");
}

std::string joined(std::string_view root, std::string_view a, std::string_view b) {
  std::string dir(root);
  if (dir != "/") dir += '/';
  dir += a;
  dir += '/';
  dir += b;
  return dir;
}

}  // namespace

Result<std::string> userDir(std::string_view staging_root, std::string_view user) {
  if (auto root = checkRoot(staging_root); !root) return fail(root.error());
  if (!isUnixUserName(user)) {
    return fail("staging.invalid_user", "run_as",
                "'" + std::string(user) +
                    "' is not a Unix user name ([a-z_] then [a-z0-9_-], at most 32 characters)");
  }
  return joined(staging_root, kUsersDir, user);
}

Result<std::string> jobDir(std::string_view staging_root, std::string_view job_id,
                           std::string_view run_as) {
  std::string base(staging_root);
  if (run_as.empty()) {
    if (auto root = checkRoot(staging_root); !root) return fail(root.error());
  } else {
    auto user = userDir(staging_root, run_as);
    if (!user) return user;
    base = std::move(*user);
  }
  if (!launch::isValidJobId(job_id)) {
    return fail("staging.invalid_job_id", "job_id",
                "job id '" + std::string(job_id) +
                    "' is not of the form <dns-label>-<8 lower-case hex digits>");
  }
  return joined(base, kJobsDir, job_id);
}

Result<std::string> checkpointDir(std::string_view staging_root, std::string_view job_id,
                                  std::string_view run_as) {
  auto job = jobDir(staging_root, job_id, run_as);
  if (!job) return job;
  return *job + "/" + std::string(kCheckpointsDir);
}

Result<std::string> attemptDir(std::string_view staging_root, std::string_view job_id, int attempt,
                               std::string_view run_as) {
  auto job = jobDir(staging_root, job_id, run_as);
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
