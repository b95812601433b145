// The filesystem seam of staging: the few POSIX calls a stage makes, behind an interface so
// tests can inject a failure at any step (as root, permission bits cannot make a write fail)
// and see which owners and modes a stage asks for. PosixStagingFs is the real one. Errors
// are Error values with codes "staging.io".
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>

#include "common/result.h"

namespace tuneplane::staging {

// What stat(2) says about a path (symlinks followed).
struct PathInfo {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;  // permission bits, setgid and sticky included (st_mode & 07777)
  bool is_directory = false;
};

class StagingFs {
 public:
  virtual ~StagingFs() = default;

  // mkdir -p; each directory it creates gets exactly `mode` (whatever the umask); existing
  // ones are left as they are.
  virtual Status makeDirs(const std::string& path, mode_t mode) = 0;
  // A new, empty directory `<prefix>XXXXXX` (mkdtemp), mode 0700; returns its path.
  virtual Result<std::string> makeTempDir(const std::string& prefix) = 0;
  virtual Status makeDir(const std::string& path, mode_t mode) = 0;
  // mkdir inside a setgid directory (the per_user layout, job_access.h): the kernel gives
  // the new directory its parent's group and setgid bit, and `mode`'s permission bits come
  // from mkdir itself — with this thread's umask cleared for the call, in a filesystem
  // context of its own (unshare(CLONE_FS) once per thread, so no other thread's files see
  // it) — never from a chmod afterwards: a chmod by a process outside the directory's group
  // clears setgid. Then checks that it got exactly `mode` (which names S_ISGID): a parent
  // that is not setgid, or a umask that could not be set aside, is an error, not a directory
  // the job cannot use. Errors: "staging.io".
  virtual Status makeInheritingDir(const std::string& path, mode_t mode) = 0;
  // mkdir -p of the same kind: each directory it creates is made as makeInheritingDir makes
  // it; existing ones are left as they are.
  virtual Status makeInheritingDirs(const std::string& path, mode_t mode) = 0;
  // Creates `path` (must not exist), writes all of `content`, gives it exactly `mode`
  // (whatever the umask) and closes it. Not durable until syncFile: a stage writes all its
  // files first and syncs them after, so that one journal commit can carry them all.
  virtual Status writeFile(const std::string& path, const std::string& content, mode_t mode) = 0;
  // fsync of a file written before, so its content and mode are durable.
  virtual Status syncFile(const std::string& path) = 0;
  // chmod, then a check that the mode took (the kernel silently drops setgid when the
  // process is not in the file's group).
  virtual Status changeMode(const std::string& path, mode_t mode) = 0;
  // chown(path, -1, group): gives `path` to `group`, keeping its owner.
  virtual Status changeGroup(const std::string& path, gid_t group) = 0;
  // nullopt when `path` does not exist.
  virtual Result<std::optional<PathInfo>> statPath(const std::string& path) = 0;
  // fsync of a directory, so the entries created or renamed in it are durable.
  virtual Status syncDir(const std::string& path) = 0;
  // Renames a directory, never replacing an existing `to` (RENAME_NOREPLACE). When `to`
  // exists: Error with code "staging.attempt_exists".
  virtual Status renameNoReplace(const std::string& from, const std::string& to) = 0;
  virtual bool exists(const std::string& path) = 0;
  // Best effort: makes the tree writable again and deletes it. For cleanup after an error.
  virtual void removeTree(const std::string& path) = 0;
  // Best effort: removes every directory `<prefix>XXXXXX` beside it (makeTempDir's), as
  // removeTree does. A stage that a crash or a full filesystem interrupted leaves one.
  virtual void removeTempDirs(const std::string& prefix) = 0;
};

// Removes a temporary directory (removeTree) when it goes out of scope, unless commit() said it
// was renamed into place: a stage or an upload that fails at any step leaves nothing behind.
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

class PosixStagingFs final : public StagingFs {
 public:
  // StagingFs
  Status makeDirs(const std::string& path, mode_t mode) override;
  Result<std::string> makeTempDir(const std::string& prefix) override;
  Status makeDir(const std::string& path, mode_t mode) override;
  Status makeInheritingDir(const std::string& path, mode_t mode) override;
  Status makeInheritingDirs(const std::string& path, mode_t mode) override;
  Status writeFile(const std::string& path, const std::string& content, mode_t mode) override;
  Status syncFile(const std::string& path) override;
  Status changeMode(const std::string& path, mode_t mode) override;
  Status changeGroup(const std::string& path, gid_t group) override;
  Result<std::optional<PathInfo>> statPath(const std::string& path) override;
  Status syncDir(const std::string& path) override;
  Status renameNoReplace(const std::string& from, const std::string& to) override;
  bool exists(const std::string& path) override;
  void removeTree(const std::string& path) override;
  void removeTempDirs(const std::string& prefix) override;
};

}  // namespace tuneplane::staging
