// The filesystem seam of staging: the few POSIX calls a stage makes, behind an interface so
// tests can inject a failure at any step (as root, permission bits cannot make a write fail).
// PosixStagingFs is the real one. Errors are Error values with codes "staging.io".
#pragma once

#include <sys/types.h>
#include <string>

#include "common/result.h"

namespace tuneplane::staging {

class StagingFs {
 public:
  virtual ~StagingFs() = default;

  // mkdir -p with `mode` for each directory it creates; ok when it already exists.
  virtual Status makeDirs(const std::string& path, mode_t mode) = 0;
  // A new, empty directory `<prefix>XXXXXX` (mkdtemp), mode 0700; returns its path.
  virtual Result<std::string> makeTempDir(const std::string& prefix) = 0;
  virtual Status makeDir(const std::string& path, mode_t mode) = 0;
  // Creates `path` (must not exist), writes all of `content`, fsyncs and closes it.
  virtual Status writeFile(const std::string& path, const std::string& content, mode_t mode) = 0;
  virtual Status changeMode(const std::string& path, mode_t mode) = 0;
  // fsync of a directory, so the entries created or renamed in it are durable.
  virtual Status syncDir(const std::string& path) = 0;
  // Renames a directory, never replacing an existing `to` (RENAME_NOREPLACE). When `to`
  // exists: Error with code "staging.attempt_exists".
  virtual Status renameNoReplace(const std::string& from, const std::string& to) = 0;
  virtual bool exists(const std::string& path) = 0;
  // Best effort: makes the tree writable again and deletes it. For cleanup after an error.
  virtual void removeTree(const std::string& path) = 0;
};

class PosixStagingFs final : public StagingFs {
 public:
  // StagingFs
  Status makeDirs(const std::string& path, mode_t mode) override;
  Result<std::string> makeTempDir(const std::string& prefix) override;
  Status makeDir(const std::string& path, mode_t mode) override;
  Status writeFile(const std::string& path, const std::string& content, mode_t mode) override;
  Status changeMode(const std::string& path, mode_t mode) override;
  Status syncDir(const std::string& path) override;
  Status renameNoReplace(const std::string& from, const std::string& to) override;
  bool exists(const std::string& path) override;
  void removeTree(const std::string& path) override;
};

}  // namespace tuneplane::staging
