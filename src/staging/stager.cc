// stageAttempt: build in a temporary sibling, seal (fsync + read-only), rename into place.
#include "staging/stager.h"

#include <openssl/evp.h>

#include <memory>
#include <utility>
#include <vector>

#include "staging/error_codes.h"
#include "staging/job_fence.h"
#include "staging/launch_request_json.h"
#include "staging/staging_paths.h"

namespace tuneplane::staging {
namespace {

// Removes the temporary directory unless the stage was committed.
class TempDirGuard {
 public:
  TempDirGuard(StagingFs& fs, std::string path) : fs_(fs), path_(std::move(path)) {}
  ~TempDirGuard() {
    if (!committed_) fs_.removeTree(path_);
  }
  TempDirGuard(const TempDirGuard&) = delete;
  TempDirGuard& operator=(const TempDirGuard&) = delete;
  void commit() { committed_ = true; }

 private:
  StagingFs& fs_;
  std::string path_;
  bool committed_ = false;
};

// logs/ and output/: writable by the job user, whichever way the site gives it access. In a
// shared group the group comes first: chmod cannot set setgid on a file of another group.
Status makeWritableDir(const std::string& path, const JobAccess& access, StagingFs& fs) {
  if (auto made = fs.makeDir(path, kSameUserWritableDirMode); !made) return made;
  if (access.mode == JobAccessMode::kSharedGroup && access.group) {
    if (auto given = fs.changeGroup(path, access.group->gid); !given) return given;
    return fs.changeMode(path, access.writableDirMode());
  }
  return ok();
}

}  // namespace

std::string sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kDigits[digest[i] >> 4]);
    hex.push_back(kDigits[digest[i] & 0x0f]);
  }
  return hex;
}

nlohmann::json manifestJson(const StagedAttempt& attempt) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [name, file] : attempt.files) {
    files[name] = {{"sha256", file.sha256}, {"bytes", file.bytes}};
  }
  return {{"version", 1}, {"files", std::move(files)}};
}

Result<StagedAttempt> stageAttempt(const launch::LaunchRequest& request, const std::string& script,
                                   const nlohmann::json& submit_body, const JobAccess& access,
                                   StagingFs& fs) {
  const std::string& final_dir = request.attempt_dir;
  if (!isCleanAbsolutePath(final_dir) || final_dir == "/") {
    return fail("staging.invalid_attempt_dir", "attempt_dir",
                "attempt directory '" + final_dir +
                    "' must be an absolute path without '.', '..' or empty components");
  }
  // Cheap early answer; the rename below is what actually guarantees no overwrite.
  if (fs.exists(final_dir)) {
    return fail("staging.attempt_exists", "attempt_dir",
                "attempt directory '" + final_dir + "' already exists; it is never overwritten");
  }
  const std::string parent = parentDir(final_dir);
  if (auto reachable = checkJobCanReach(parent, access, fs); !reachable) {
    return fail(reachable.error());
  }
  if (auto made = fs.makeDirs(parent, kParentDirMode); !made) return fail(made.error());
  // The job's fence moves to this attempt before its directory (and so its script) exists.
  if (!request.fence_dir.empty()) {
    if (auto marked = markAttemptStaged(request.fence_dir, request.identity.attempt, fs); !marked) {
      return fail(marked.error());
    }
  }

  // What an earlier try of this attempt left half-written (serve killed, the filesystem full)
  // goes first: only the process that stages this attempt writes beside it.
  fs.removeTempDirs(stagingTempPrefix(final_dir));
  auto temp = fs.makeTempDir(stagingTempPrefix(final_dir));
  if (!temp) return fail(temp.error());
  TempDirGuard guard(fs, *temp);

  // Files in a fixed order; the manifest is written last and describes the others.
  const std::vector<std::pair<std::string_view, std::string>> contents = {
      {kLaunchFile, launchRequestToJson(request).dump(2) + "\n"},
      {kScriptFile, script},
      {kSubmitFile, submit_body.dump(2) + "\n"},
  };
  StagedAttempt staged;
  staged.dir = final_dir;
  for (const auto& [name, content] : contents) {
    if (auto written = fs.writeFile(attemptFile(*temp, name), content, kFileMode); !written) {
      return fail(written.error());
    }
    staged.files[std::string(name)] = {sha256Hex(content), content.size()};
  }
  const std::string manifest = manifestJson(staged).dump(2) + "\n";
  if (auto written = fs.writeFile(attemptFile(*temp, kManifestFile), manifest, kFileMode);
      !written) {
    return fail(written.error());
  }
  for (std::string_view dir : {kLogsDir, kOutputDir}) {
    if (auto made = makeWritableDir(attemptFile(*temp, dir), access, fs); !made) {
      return fail(made.error());
    }
  }
  // Everything is written before anything is synced: the first fsync then commits the
  // filesystem's journal with every file and directory above in it, and the ones after find
  // little left to do (synced one by one as written, each paid a journal commit of its own:
  // six per attempt, the launch's slowest step with many attempts in flight).
  for (const auto& [name, content] : contents) {
    if (auto synced = fs.syncFile(attemptFile(*temp, name)); !synced) return fail(synced.error());
  }
  if (auto synced = fs.syncFile(attemptFile(*temp, kManifestFile)); !synced) {
    return fail(synced.error());
  }
  if (auto synced = fs.syncDir(*temp); !synced) return fail(synced.error());
  if (auto sealed = fs.changeMode(*temp, kAttemptDirMode); !sealed) return fail(sealed.error());

  if (auto renamed = fs.renameNoReplace(*temp, final_dir); !renamed) {
    Error error = renamed.error();
    if (error.code == codes::kAttemptExists) error.field = "attempt_dir";
    return fail(std::move(error));
  }
  guard.commit();
  // The rename is durable only once the parent directory is synced.
  if (auto synced = fs.syncDir(parent); !synced) return fail(synced.error());
  return staged;
}

}  // namespace tuneplane::staging
