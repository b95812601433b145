// StatOnlyStagingFs: a filesystem that only answers statPath, from a table the test writes
// (path → owner, group, mode). For the rules that look and never make anything
// (job_access.h's decideUserAccess, doctor's staging checks); every other call fails.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "staging/staging_fs.h"

namespace tuneplane::staging::testing {

class StatOnlyStagingFs final : public StagingFs {
 public:
  StatOnlyStagingFs& dir(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
    entries_[path] = PathInfo{uid, gid, mode, true};
    return *this;
  }
  StatOnlyStagingFs& file(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
    entries_[path] = PathInfo{uid, gid, mode, false};
    return *this;
  }

  // StagingFs
  Result<std::optional<PathInfo>> statPath(const std::string& path) override {
    auto it = entries_.find(path);
    if (it == entries_.end()) return std::optional<PathInfo>();
    return std::optional<PathInfo>(it->second);
  }
  Status makeDirs(const std::string& path, mode_t) override { return refused(path); }
  Result<std::string> makeTempDir(const std::string& prefix) override { return refused(prefix); }
  Status makeDir(const std::string& path, mode_t) override { return refused(path); }
  Status makeInheritingDir(const std::string& path, mode_t) override { return refused(path); }
  Status makeInheritingDirs(const std::string& path, mode_t) override { return refused(path); }
  Status writeFile(const std::string& path, const std::string&, mode_t) override {
    return refused(path);
  }
  Status syncFile(const std::string& path) override { return refused(path); }
  Status changeMode(const std::string& path, mode_t) override { return refused(path); }
  Status changeGroup(const std::string& path, gid_t) override { return refused(path); }
  Status syncDir(const std::string& path) override { return refused(path); }
  Status renameNoReplace(const std::string&, const std::string& to) override { return refused(to); }
  bool exists(const std::string& path) override { return entries_.count(path) > 0; }
  void removeTree(const std::string&) override {}
  void removeTempDirs(const std::string&) override {}

 private:
  static tl::unexpected<Error> refused(const std::string& path) {
    return fail("staging.io", path, "StatOnlyStagingFs makes nothing");
  }

  std::map<std::string, PathInfo> entries_;
};

}  // namespace tuneplane::staging::testing
