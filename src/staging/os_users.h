// The users-and-groups seam of staging: who this process is, and what the host's user and
// group databases (NSS: /etc/passwd, LDAP, sssd…) say about a name. Behind an interface so
// the permission rules (job_access.h) are unit-tested with a fake, without root or real
// accounts. PosixOsUsers is the real one (getpwnam_r, getgrnam_r, getgrouplist, getgroups).
// Thread-safety: PosixOsUsers is safe from any thread (only reentrant calls).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tuneplane::staging {

struct OsUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;  // the primary group
};

struct OsGroup {
  std::string name;
  gid_t gid = 0;
  // The group's listed members (gr_mem: those who have it as a supplementary group; users
  // whose primary group it is are not listed). Filled by groupById.
  std::vector<std::string> members = {};
};

class OsUsers {
 public:
  virtual ~OsUsers() = default;

  // The effective uid of this process: the owner of every file it creates.
  virtual uid_t effectiveUid() = 0;
  // The groups this process acts with: its effective gid and its supplementary groups.
  virtual std::vector<gid_t> processGroups() = 0;
  // nullopt when the database has no such entry. Errors ("staging.user_lookup_failed")
  // only when the lookup itself failed (e.g. the directory server did not answer).
  virtual Result<std::optional<OsUser>> userByName(const std::string& name) = 0;
  virtual Result<std::optional<OsUser>> userById(uid_t uid) = 0;
  virtual Result<std::optional<OsGroup>> groupByName(const std::string& name) = 0;
  // The group and its listed members (per_user: whether a job user's primary group is its own).
  virtual Result<std::optional<OsGroup>> groupById(gid_t gid) = 0;
  // Every group `user` belongs to, its primary group included.
  virtual Result<std::vector<gid_t>> groupsOf(const OsUser& user) = 0;
};

class PosixOsUsers final : public OsUsers {
 public:
  // OsUsers
  uid_t effectiveUid() override;
  std::vector<gid_t> processGroups() override;
  Result<std::optional<OsUser>> userByName(const std::string& name) override;
  Result<std::optional<OsUser>> userById(uid_t uid) override;
  Result<std::optional<OsGroup>> groupByName(const std::string& name) override;
  Result<std::optional<OsGroup>> groupById(gid_t gid) override;
  Result<std::vector<gid_t>> groupsOf(const OsUser& user) override;
};

// One PosixOsUsers for the whole process (it holds no state).
OsUsers& posixOsUsers();

}  // namespace tuneplane::staging
