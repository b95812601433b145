// RecordingStagingFs: the real filesystem, with a log of the calls that decide owners and
// modes (chmod, chgrp, the per_user layout's inheriting mkdirs) and of the writes, syncs and
// renames, in order — for the stager's tests, which check what a stage asked for.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "staging/staging_fs.h"

namespace tuneplane::staging::testing {

inline std::string octal(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode));
  return buf;
}

// The real filesystem, with a log of every changeGroup and changeMode call in order (and of
// the writes, syncs, renames and the per_user layout's inheriting mkdirs).
class RecordingStagingFs final : public StagingFs {
 public:
  std::vector<std::string> calls;

  // StagingFs
  Status makeDirs(const std::string& path, mode_t mode) override {
    return real_.makeDirs(path, mode);
  }
  Result<std::string> makeTempDir(const std::string& prefix) override {
    return real_.makeTempDir(prefix);
  }
  Status makeDir(const std::string& path, mode_t mode) override {
    return real_.makeDir(path, mode);
  }
  Status makeInheritingDir(const std::string& path, mode_t mode) override {
    calls.push_back("mkdir-inheriting " + octal(mode) + " " + baseName(path));
    return real_.makeInheritingDir(path, mode);
  }
  Status makeInheritingDirs(const std::string& path, mode_t mode) override {
    calls.push_back("mkdir-p-inheriting " + octal(mode) + " " + baseName(path));
    return real_.makeInheritingDirs(path, mode);
  }
  Status writeFile(const std::string& path, const std::string& content, mode_t mode) override {
    calls.push_back("write " + baseName(path));
    return real_.writeFile(path, content, mode);
  }
  Status syncFile(const std::string& path) override {
    calls.push_back("sync " + baseName(path));
    return real_.syncFile(path);
  }
  Status changeMode(const std::string& path, mode_t mode) override {
    calls.push_back("chmod " + octal(mode) + " " + baseName(path));
    return real_.changeMode(path, mode);
  }
  Status changeGroup(const std::string& path, gid_t group) override {
    calls.push_back("chgrp " + std::to_string(group) + " " + baseName(path));
    return real_.changeGroup(path, group);
  }
  Result<std::optional<PathInfo>> statPath(const std::string& path) override {
    return real_.statPath(path);
  }
  Status syncDir(const std::string& path) override {
    calls.push_back("syncdir " + baseName(path));
    return real_.syncDir(path);
  }
  Status renameNoReplace(const std::string& from, const std::string& to) override {
    calls.push_back("rename to " + baseName(to));
    return real_.renameNoReplace(from, to);
  }
  bool exists(const std::string& path) override { return real_.exists(path); }
  void removeTree(const std::string& path) override { real_.removeTree(path); }
  void removeTempDirs(const std::string& prefix) override { real_.removeTempDirs(prefix); }

 private:
  static std::string baseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }
  PosixStagingFs real_;
};

}  // namespace tuneplane::staging::testing
