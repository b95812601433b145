// stageAttempt: build in a temporary sibling, seal (fsync + read-only), rename into place.
#include "staging/stager.h"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "common/text_checks.h"
#include "staging/error_codes.h"
#include "staging/job_fence.h"
#include "staging/launch_request_json.h"
#include "staging/staging_paths.h"
#include "staging/workdir_store.h"

namespace tuneplane::staging {
namespace {

// logs/ and output/: writable by the job user, whichever way the site gives it access. In a
// shared group the group comes first: chmod cannot set setgid on a file of another group. A
// per_user job's are made by mkdir alone, inside its setgid tree: they inherit the user's
// group and setgid, and a chmod by TunePlane (not in that group) would clear setgid.
Status makeWritableDir(const std::string& path, const JobAccess& access, StagingFs& fs) {
  if (access.perUserJob()) return fs.makeInheritingDir(path, access.writableDirMode());
  if (auto made = fs.makeDir(path, kSameUserWritableDirMode); !made) return made;
  if (access.mode == JobAccessMode::kSharedGroup && access.group) {
    if (auto given = fs.changeGroup(path, access.group->gid); !given) return given;
    return fs.changeMode(path, access.writableDirMode());
  }
  return ok();
}

// The job's directories on the way to its attempts (jobs/<id>/attempts/, jobs/<id>/): per_user,
// inside the setgid tree as makeWritableDir makes them, read-only for the job.
Status makeTreeDirs(const std::string& path, const JobAccess& access, StagingFs& fs) {
  if (access.perUserJob()) return fs.makeInheritingDirs(path, access.treeDirMode());
  return fs.makeDirs(path, kParentDirMode);
}

// The names of what stageAttempt writes itself, which a staged input must not take.
bool isPlainInputName(const std::string& name) {
  if (name.empty() || name.front() == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  for (std::string_view taken :
       {kLaunchFile, kScriptFile, kSubmitFile, kManifestFile, kLogsDir, kOutputDir, kWorkdirDir}) {
    if (name == taken) return false;
  }
  return true;
}

Status checkInputs(const std::vector<launch::StagedInput>& inputs) {
  std::vector<std::string> seen;
  for (const launch::StagedInput& input : inputs) {
    if (!isPlainInputName(input.name) ||
        std::find(seen.begin(), seen.end(), input.name) != seen.end()) {
      return fail("staging.invalid_input", "inputs",
                  "staged input '" + input.name +
                      "' must be a plain file name ([A-Za-z0-9._-], not starting with '.'), "
                      "used once, and not one of the attempt's own files");
    }
    seen.push_back(input.name);
  }
  return ok();
}

// The job's checkpoint directory: made (writable by the job, like logs/) when the first
// attempt is staged; an existing one is left exactly as it is, since it holds what earlier
// attempts saved.
Status ensureCheckpointDir(const std::string& dir, const JobAccess& access, StagingFs& fs) {
  if (dir.empty()) return ok();
  if (!isCleanAbsolutePath(dir) || dir == "/") {
    return fail("staging.invalid_checkpoint_dir", "checkpoint_dir",
                "checkpoint directory '" + dir +
                    "' must be an absolute path without '.', '..' or empty components");
  }
  const auto isDirectory = [&]() -> Result<bool> {
    auto info = fs.statPath(dir);
    if (!info) return fail(info.error());
    if (*info && !(*info)->is_directory) {
      return fail("staging.invalid_checkpoint_dir", "checkpoint_dir",
                  "checkpoint directory '" + dir + "' exists and is not a directory");
    }
    return info->has_value();
  };
  auto exists = isDirectory();
  if (!exists) return fail(exists.error());
  if (*exists) return ok();
  const std::string parent = parentDir(dir);
  if (auto reachable = checkJobCanReach(parent, access, fs); !reachable) return reachable;
  if (auto made = makeTreeDirs(parent, access, fs); !made) return made;
  if (auto made = access.perUserJob() ? fs.makeInheritingDir(dir, access.writableDirMode())
                                      : fs.makeDir(dir, kSameUserWritableDirMode);
      !made) {
    // Made meanwhile by another stage of this job: then it is there, as wanted.
    auto now = isDirectory();
    if (now && *now) return ok();
    return made;
  }
  // Ours, and empty: given to the job as logs/ is. Should that fail, it goes again, so that
  // the next stage makes it afresh rather than find it without the job's access.
  if (access.mode == JobAccessMode::kSharedGroup && access.group) {
    Status granted = fs.changeGroup(dir, access.group->gid);
    if (granted) granted = fs.changeMode(dir, access.writableDirMode());
    if (!granted) {
      fs.removeTree(dir);
      return granted;
    }
  }
  return fs.syncDir(parent);
}

// The job's code (request.workdir): read back from serve's upload and its hash checked, before
// anything of the attempt is made, so a copy that would differ is never staged.
Result<std::optional<workdir::Tree>> loadWorkdir(const launch::LaunchRequest& request) {
  if (!request.workdir) return std::optional<workdir::Tree>();
  if (request.workdir->source.empty()) {
    return fail(workdir::codes::kUnknown, "spec.workdir",
                "the job names workdir sha256:" + request.workdir->sha256 +
                    " but no user's upload to copy it from: submit it through tuneplane serve "
                    "(tuneplane submit --workdir DIR)");
  }
  auto tree = loadStoredWorkdir(request.workdir->source, request.workdir->sha256);
  if (!tree) return fail(tree.error());
  return std::optional<workdir::Tree>(std::move(*tree));
}

// The attempt's copy of the job's code, with the attempt's own modes: read-only for the job
// (files as the attempt's, executables with their execute bits; folders sealed like the
// attempt dir). per_user: folders made inside the setgid tree, inheriting the user's group.
Status writeAttemptWorkdir(const workdir::Tree& tree, const std::string& dir,
                           const JobAccess& access, StagingFs& fs) {
  const TreeModes modes{.file_mode = access.fileMode(),
                        .dir_mode = access.perUserJob() ? access.treeDirMode() : mode_t{0755},
                        .seal_dir_mode = access.attemptDirMode(),
                        .inherit = access.perUserJob()};
  return writeWorkdirTree(tree, dir, modes, fs);
}

}  // namespace

std::string sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  return lowerHex(digest, length);
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
  if (auto made = makeTreeDirs(parent, access, fs); !made) return fail(made.error());
  if (auto inputs = checkInputs(request.inputs); !inputs) return fail(inputs.error());
  auto code = loadWorkdir(request);
  if (!code) return fail(code.error());
  // Before the attempt appears: no attempt is ever without the directory it resumes from.
  if (auto made = ensureCheckpointDir(request.checkpoint_dir, access, fs); !made) {
    return fail(made.error());
  }
  // The job's fence moves to this attempt before its directory (and so its script) exists.
  if (!request.fence_dir.empty()) {
    if (auto marked = markAttemptStaged(request.fence_dir, request.identity.attempt, fs, access);
        !marked) {
      return fail(marked.error());
    }
  }

  // What an earlier try of this attempt left half-written (serve killed, the filesystem full)
  // goes first: only the process that stages this attempt writes beside it.
  fs.removeTempDirs(stagingTempPrefix(final_dir));
  auto temp = fs.makeTempDir(stagingTempPrefix(final_dir));
  if (!temp) return fail(temp.error());
  TempDirGuard guard(fs, *temp);  // the stage's, until the rename commits it

  // Files in a fixed order; the manifest is written last and describes the others.
  std::vector<std::pair<std::string_view, std::string>> contents = {
      {kLaunchFile, launchRequestToJson(request).dump(2) + "\n"},
      {kScriptFile, script},
      {kSubmitFile, submit_body.dump(2) + "\n"},
  };
  for (const launch::StagedInput& input : request.inputs) {
    contents.emplace_back(input.name, input.content);
  }
  StagedAttempt staged;
  staged.dir = final_dir;
  for (const auto& [name, content] : contents) {
    if (auto written = fs.writeFile(attemptFile(*temp, name), content, access.fileMode());
        !written) {
      return fail(written.error());
    }
    staged.files[std::string(name)] = {sha256Hex(content), content.size()};
  }
  if (*code) {
    if (auto copied = writeAttemptWorkdir(**code, attemptFile(*temp, kWorkdirDir), access, fs);
        !copied) {
      return fail(copied.error());
    }
    staged.files[std::string(kWorkdirDir)] = {request.workdir->sha256, (*code)->bytes};
  }
  const std::string manifest = manifestJson(staged).dump(2) + "\n";
  if (auto written = fs.writeFile(attemptFile(*temp, kManifestFile), manifest, access.fileMode());
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
  // The seal: per_user, this chmod by TunePlane (not in the user's group) also clears the
  // setgid bit the temporary directory inherited — harmless, nothing is made in it after.
  if (auto sealed = fs.changeMode(*temp, access.attemptDirMode()); !sealed) {
    return fail(sealed.error());
  }

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
