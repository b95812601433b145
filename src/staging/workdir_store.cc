// See workdir_store.h.
#include "staging/workdir_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "common/text_checks.h"
#include "staging/error_codes.h"
#include "staging/staging_paths.h"

namespace tuneplane::staging {
namespace {

constexpr mode_t kStoreDirMode = 0700;
constexpr TreeModes kStoredModes{
    .file_mode = 0400, .dir_mode = 0700, .seal_dir_mode = 0500, .inherit = false};

// An API user's name (a DNS label: server_config.h) is one path component.
bool isStoreUserName(std::string_view user) {
  if (user.empty() || user.size() > 63 || user.front() == '-' || user.back() == '-') return false;
  return std::all_of(user.begin(), user.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

mode_t executableMode(mode_t file_mode) {
  return file_mode | ((file_mode & 0444) >> 2);
}

// Writes the entries of `tree` below `dir` (made already), without syncing or sealing.
Status writeEntries(const workdir::Tree& tree, const std::string& dir, const TreeModes& modes,
                    StagingFs& fs) {
  for (const workdir::Entry& entry : tree.entries) {
    const std::string path = dir + "/" + entry.path;
    if (entry.directory) {
      auto made = modes.inherit ? fs.makeInheritingDir(path, modes.dir_mode)
                                : fs.makeDir(path, modes.dir_mode);
      if (!made) return made;
    } else {
      const mode_t mode = entry.executable ? executableMode(modes.file_mode) : modes.file_mode;
      if (auto written = fs.writeFile(path, entry.content, mode); !written) return written;
    }
  }
  return ok();
}

// Syncs every file of `tree` below `dir`, then each folder deepest first (and `dir` last),
// sealing each with `seal_mode` (0: none) once everything in it is synced.
Status syncAndSeal(const workdir::Tree& tree, const std::string& dir, mode_t seal_mode,
                   StagingFs& fs) {
  std::vector<std::string> dirs;
  for (const workdir::Entry& entry : tree.entries) {
    if (entry.directory) {
      dirs.push_back(dir + "/" + entry.path);
    } else if (auto synced = fs.syncFile(dir + "/" + entry.path); !synced) {
      return synced;
    }
  }
  std::stable_sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) {
    return std::count(a.begin(), a.end(), '/') > std::count(b.begin(), b.end(), '/');
  });
  dirs.push_back(dir);
  for (const std::string& d : dirs) {
    if (auto synced = fs.syncDir(d); !synced) return synced;
    if (seal_mode == 0) continue;
    if (auto sealed = fs.changeMode(d, seal_mode); !sealed) return sealed;
  }
  return ok();
}

}  // namespace

Result<std::string> workdirUploadDir(std::string_view staging_root, std::string_view user,
                                     std::string_view sha256_hex) {
  if (!isCleanAbsolutePath(staging_root)) {
    return fail("staging.invalid_root", "staging_root",
                "staging root '" + std::string(staging_root) +
                    "' must be an absolute path without '.', '..' or empty components");
  }
  if (!isStoreUserName(user)) {
    return fail("staging.invalid_user", "user",
                "'" + std::string(user) + "' is not an API user name (a DNS label)");
  }
  if (!isSha256Hex(sha256_hex)) {
    return fail(workdir::codes::kUnknown, "workdir",
                "'" + std::string(sha256_hex).substr(0, 80) +
                    "' is not a workdir's SHA-256 (64 lower-case hex digits)");
  }
  std::string dir(staging_root);
  if (dir != "/") dir += '/';
  return dir + std::string(kWorkdirsDir) + "/" + std::string(user) + "/" + std::string(sha256_hex);
}

Status writeWorkdirTree(const workdir::Tree& tree, const std::string& dir, const TreeModes& modes,
                        StagingFs& fs) {
  auto made =
      modes.inherit ? fs.makeInheritingDir(dir, modes.dir_mode) : fs.makeDir(dir, modes.dir_mode);
  if (!made) return made;
  if (auto written = writeEntries(tree, dir, modes, fs); !written) return written;
  return syncAndSeal(tree, dir, modes.seal_dir_mode, fs);
}

Result<bool> hasStoredWorkdir(std::string_view staging_root, std::string_view user,
                              std::string_view sha256_hex, StagingFs& fs) {
  auto dir = workdirUploadDir(staging_root, user, sha256_hex);
  if (!dir) return fail(dir.error());
  auto info = fs.statPath(*dir);
  if (!info) return fail(info.error());
  return info->has_value() && (*info)->is_directory;
}

Result<StoredWorkdir> storeWorkdir(std::string_view staging_root, std::string_view user,
                                   const workdir::Tree& tree, StagingFs& fs) {
  const std::string sha256 = workdir::workdirTreeSha256(tree);
  auto dir = workdirUploadDir(staging_root, user, sha256);
  if (!dir) return fail(dir.error());
  if (fs.exists(*dir)) return StoredWorkdir{*dir, sha256, false};
  const std::string user_dir = parentDir(*dir);
  if (auto made = fs.makeDirs(user_dir, kStoreDirMode); !made) return fail(made.error());
  const std::string prefix = user_dir + "/.upload-";
  auto temp = fs.makeTempDir(prefix);
  if (!temp) return fail(temp.error());
  TempDirGuard guard(fs, *temp);
  // makeTempDir made the folder (0700); its contents go in, then the whole is sealed.
  if (auto written = writeEntries(tree, *temp, kStoredModes, fs); !written) {
    return fail(written.error());
  }
  if (auto sealed = syncAndSeal(tree, *temp, kStoredModes.seal_dir_mode, fs); !sealed) {
    return fail(sealed.error());
  }
  if (auto renamed = fs.renameNoReplace(*temp, *dir); !renamed) {
    // Stored meanwhile by another upload of the same tree: the same bytes, kept.
    if (renamed.error().code == codes::kAttemptExists) return StoredWorkdir{*dir, sha256, false};
    return fail(renamed.error());
  }
  guard.commit();
  if (auto synced = fs.syncDir(user_dir); !synced) return fail(synced.error());
  return StoredWorkdir{*dir, sha256, true};
}

Result<workdir::Tree> loadStoredWorkdir(const std::string& dir, std::string_view sha256_hex) {
  // What was stored passed the site's limits then; reading back is bounded by the largest a
  // site may set, so a store changed behind serve's back cannot make it read without end.
  const workdir::Limits bound{.max_bytes = 1024ull * 1024 * 1024, .max_files = 100'000};
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 && errno == ENOENT) {
    return fail(workdir::codes::kUnknown, "spec.workdir",
                "the workdir sha256:" + std::string(sha256_hex) +
                    " is not among its user's uploads (tuneplane submit --workdir DIR uploads it)");
  }
  auto tree = workdir::readWorkdirDir(dir, bound);
  if (!tree) {
    // Unreadable may pass (staging.io: the attempt is staged again later); a tree that breaks
    // the rules was not stored by serve, and is refused as it is.
    Error error = tree.error();
    if (error.code == workdir::codes::kUnreadable) error.code = codes::kIo;
    return fail(std::move(error));
  }
  const std::string actual = workdir::workdirTreeSha256(*tree);
  if (actual != sha256_hex) {
    return fail(workdir::codes::kMismatch, "spec.workdir",
                "the stored workdir " + dir + " holds sha256:" + actual +
                    ", not sha256:" + std::string(sha256_hex) + "; upload the folder again");
  }
  return tree;
}

}  // namespace tuneplane::staging
