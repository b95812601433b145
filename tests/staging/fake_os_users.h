// FakeOsUsers: a user and group database in memory, and a process identity set by the
// test, for the permission rules of staging/job_access.h (no root, no real accounts).
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "staging/os_users.h"

namespace tuneplane::staging::testing {

class FakeOsUsers final : public OsUsers {
 public:
  // Adds a user; its primary group is always one of its groups.
  FakeOsUsers& user(const std::string& name, uid_t uid, gid_t gid,
                    std::vector<gid_t> supplementary = {}) {
    users_.push_back({name, uid, gid});
    supplementary.insert(supplementary.begin(), gid);
    groups_of_[name] = std::move(supplementary);
    return *this;
  }
  FakeOsUsers& group(const std::string& name, gid_t gid, std::vector<std::string> members = {}) {
    groups_.push_back({name, gid, std::move(members)});
    return *this;
  }
  // Who the process is: its effective uid and the groups it acts with.
  FakeOsUsers& process(uid_t uid, std::vector<gid_t> groups) {
    euid_ = uid;
    process_groups_ = std::move(groups);
    return *this;
  }
  // Every lookup fails from now on, like a directory server that does not answer.
  FakeOsUsers& failLookups() {
    fail_ = true;
    return *this;
  }

  // OsUsers
  uid_t effectiveUid() override { return euid_; }
  std::vector<gid_t> processGroups() override { return process_groups_; }
  Result<std::optional<OsUser>> userByName(const std::string& name) override {
    if (fail_) return failed();
    auto it =
        std::find_if(users_.begin(), users_.end(), [&](const OsUser& u) { return u.name == name; });
    return it == users_.end() ? std::nullopt : std::optional<OsUser>(*it);
  }
  Result<std::optional<OsUser>> userById(uid_t uid) override {
    if (fail_) return failed();
    auto it =
        std::find_if(users_.begin(), users_.end(), [&](const OsUser& u) { return u.uid == uid; });
    return it == users_.end() ? std::nullopt : std::optional<OsUser>(*it);
  }
  Result<std::optional<OsGroup>> groupByName(const std::string& name) override {
    if (fail_) return failed();
    auto it = std::find_if(groups_.begin(), groups_.end(),
                           [&](const OsGroup& g) { return g.name == name; });
    return it == groups_.end() ? std::nullopt : std::optional<OsGroup>(*it);
  }
  Result<std::optional<OsGroup>> groupById(gid_t gid) override {
    if (fail_) return failed();
    auto it = std::find_if(groups_.begin(), groups_.end(),
                           [&](const OsGroup& g) { return g.gid == gid; });
    return it == groups_.end() ? std::nullopt : std::optional<OsGroup>(*it);
  }
  Result<std::vector<gid_t>> groupsOf(const OsUser& user) override {
    if (fail_) return failed();
    return groups_of_[user.name];
  }

 private:
  static tl::unexpected<Error> failed() {
    return fail("staging.user_lookup_failed", "", "looking up failed: the server did not answer");
  }

  uid_t euid_ = 0;
  std::vector<gid_t> process_groups_ = {0};
  std::vector<OsUser> users_;
  std::vector<OsGroup> groups_;
  std::map<std::string, std::vector<gid_t>> groups_of_;
  bool fail_ = false;
};

}  // namespace tuneplane::staging::testing
