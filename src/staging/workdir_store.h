// Uploaded workdirs (POST /v1/workdirs, common/workdir_tree.h), kept by serve for the jobs
// that name them, and their copy into an attempt:
//
//   <staging_root>/workdirs/                 0700: serve's alone, never a job's
//   └── <user>/                              the API user who uploaded it (a DNS label)
//       ├── .upload-XXXXXX                   an upload being written (removed on error)
//       └── <sha256>/                        the tree, sealed: folders 0500, files 0400 or
//                                            0500 (executable); named by workdirTreeSha256
//
// Content-addressed and per user: a tree is written into a temporary sibling, synced, sealed
// and renamed into place, never replacing one, so an upload sent twice is stored once and a
// crash leaves nothing half-written under a name; a spec's `workdir: sha256:…` finds only its
// own user's uploads. A job never reads this store: every attempt gets its own copy inside
// its attempt directory (<attempt>/workdir, stager.h), read back and its hash checked first,
// so every attempt of a job holds the same bytes. Nothing is removed from the store yet.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/result.h"
#include "common/workdir_tree.h"
#include "staging/staging_fs.h"

namespace tuneplane::staging {

inline constexpr std::string_view kWorkdirsDir = "workdirs";
// The attempt's copy: <attempt_dir>/workdir.
inline constexpr std::string_view kWorkdirDir = "workdir";

// <root>/workdirs/<user>/<sha256_hex>. Errors: "staging.invalid_root", "staging.invalid_user"
// (not a DNS label), workdir.unknown (not 64 lower-case hex digits).
Result<std::string> workdirUploadDir(std::string_view staging_root, std::string_view user,
                                     std::string_view sha256_hex);

struct StoredWorkdir {
  std::string dir;
  std::string sha256;    // lower-case hex
  bool created = false;  // false: the same tree was stored before
};

// Stores `tree` for `user` (idempotent: an existing one is kept). Errors: workdirUploadDir's,
// "staging.io".
Result<StoredWorkdir> storeWorkdir(std::string_view staging_root, std::string_view user,
                                   const workdir::Tree& tree, StagingFs& fs);

// Whether `user` stored the tree `sha256_hex`. Errors: workdirUploadDir's, "staging.io".
Result<bool> hasStoredWorkdir(std::string_view staging_root, std::string_view user,
                              std::string_view sha256_hex, StagingFs& fs);

// The tree stored at `dir`, read back, its hash checked against `sha256_hex`.
// Errors: workdir.unknown (no such directory), workdir.mismatch (other bytes than its name
// says), "staging.io" (unreadable).
Result<workdir::Tree> loadStoredWorkdir(const std::string& dir, std::string_view sha256_hex);

// The modes a written tree gets: files `file_mode` (plus the execute bits that match its read
// bits for an executable), folders made with `dir_mode` and, when `seal_dir_mode` is set,
// chmod-ed to it once full (bottom-up). `inherit`: folders made by makeInheritingDir (per_user).
struct TreeModes {
  mode_t file_mode = 0444;
  mode_t dir_mode = 0755;
  mode_t seal_dir_mode = 0555;  // 0: no chmod after
  bool inherit = false;
};

// Writes `tree` into the new folder `dir` (made here) and syncs every file and folder.
// REQUIRES: `dir`'s parent exists; the tree passed makeTree's rules (its paths cannot leave
// `dir`). Errors: "staging.io".
Status writeWorkdirTree(const workdir::Tree& tree, const std::string& dir, const TreeModes& modes,
                        StagingFs& fs);

}  // namespace tuneplane::staging
