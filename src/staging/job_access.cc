// decideJobAccess, resolveJobAccess and checkJobCanReach: the rule of job_access.h over the
// two seams.
#include "staging/job_access.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <variant>

namespace tuneplane::staging {
namespace {

constexpr const char* kUserField = "slurm.user";
constexpr const char* kGroupField = "staging.group";

std::string quoted(const std::string& name) {
  return "'" + name + "'";
}

std::string userText(const OsUser& user) {
  return quoted(user.name) + " (uid " + std::to_string(user.uid) + ")";
}

std::string octal(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

bool contains(const std::vector<gid_t>& groups, gid_t gid) {
  return std::find(groups.begin(), groups.end(), gid) != groups.end();
}

tl::unexpected<AccessRefusal> refuse(std::string code, const char* field, std::string reason,
                                     std::string fix) {
  return tl::unexpected(AccessRefusal{std::move(code), field, std::move(reason), std::move(fix)});
}

// A lookup that failed (not a missing entry): the database's own words, and the field it
// concerns.
tl::unexpected<AccessRefusal> lookupFailed(const Error& error, const char* field) {
  return refuse(error.code, field, error.message,
                "check that this host's user and group database answers (`getent passwd`, "
                "`getent group`; sssd or LDAP when the users come from a directory)");
}

AccessResult<JobAccess> resolve(const catalog::SiteConfig& site, OsUsers& users) {
  JobAccess access;
  auto process = effectiveUser(users);
  if (!process) return lookupFailed(process.error(), kUserField);
  access.process_user = *process;

  const std::string& name = site.slurm.user;
  auto job_user = users.userByName(name);
  if (!job_user) return lookupFailed(job_user.error(), kUserField);
  if (!*job_user) {
    return refuse("staging.unknown_job_user", kUserField,
                  "slurm.user " + quoted(name) +
                      " (the user Slurm runs jobs as) is not a user on this host, so TunePlane "
                      "cannot make the attempt writable for the job",
                  "make the user known here with the same uid as on the compute nodes (the "
                  "same user database, e.g. LDAP or sssd), or correct slurm.user");
  }
  access.job_user = **job_user;
  auto groups = users.groupsOf(access.job_user);
  if (!groups) return lookupFailed(groups.error(), kUserField);
  access.job_groups = std::move(*groups);

  if (!site.staging.group) {
    if (access.process_user.uid == access.job_user.uid) return access;
    const std::string& job = access.job_user.name;
    return refuse("staging.job_user_mismatch", kUserField,
                  "TunePlane runs as " + userText(access.process_user) +
                      " but Slurm runs this site's jobs as slurm.user " +
                      userText(access.job_user) +
                      ", who could not write the attempt's logs/ and output/ (the job would fail "
                      "with an empty logs/)",
                  "run TunePlane as " + quoted(job) + " (e.g. `sudo -u " + job +
                      " tuneplane …`, or User=" + job +
                      " in its systemd unit), or set staging.group in the site file to a group "
                      "that " +
                      quoted(job) + " is in and TunePlane can use");
  }

  const std::string& group_name = *site.staging.group;
  auto group = users.groupByName(group_name);
  if (!group) return lookupFailed(group.error(), kGroupField);
  if (!*group) {
    return refuse("staging.unknown_group", kGroupField,
                  "staging.group " + quoted(group_name) + " is not a group on this host",
                  "create it (with " + quoted(name) +
                      " in it, on this host and on the nodes), or name an existing one");
  }
  access.mode = JobAccessMode::kSharedGroup;
  access.group = **group;
  if (!contains(access.job_groups, access.group->gid)) {
    return refuse("staging.job_user_not_in_group", kGroupField,
                  "slurm.user " + userText(access.job_user) + " is not in staging.group " +
                      quoted(group_name) +
                      ", so the job could not write the attempt's logs/ and output/",
                  "add " + quoted(name) + " to " + quoted(group_name) +
                      " (on this host and on the nodes), or name a group it is in");
  }
  // Root may give files to any group; anyone else only to a group it acts with.
  if (access.process_user.uid != 0 && !contains(users.processGroups(), access.group->gid)) {
    return refuse("staging.group_not_usable", kGroupField,
                  "TunePlane runs as " + userText(access.process_user) +
                      ", which is neither root nor in staging.group " + quoted(group_name) +
                      ", so it cannot give logs/ and output/ to that group",
                  "add " + quoted(access.process_user.name) + " to " + quoted(group_name) +
                      " (and restart TunePlane), or run TunePlane as slurm.user " + quoted(name) +
                      " without staging.group");
  }
  return access;
}

AccessResult<std::monostate> reach(const std::string& path, const JobAccess& access,
                                   StagingFs& fs) {
  if (access.mode == JobAccessMode::kSameUser) return std::monostate{};
  // "/", "/a", "/a/b", … down to `path`, stopping at the first that does not exist yet.
  std::size_t end = 0;
  while (true) {
    const std::string prefix = end == 0 ? "/" : path.substr(0, end);
    auto info = fs.statPath(prefix);
    if (!info) {
      return refuse(info.error().code, "staging_root", info.error().message,
                    "make every directory down to the staging root searchable by the user "
                    "TunePlane runs as");
    }
    if (!*info) return std::monostate{};
    if ((*info)->is_directory && !jobCanSearch(**info, access)) {
      return refuse("staging.not_traversable", "staging_root",
                    "slurm.user " + userText(access.job_user) + " cannot pass through '" + prefix +
                        "' (mode " + octal((*info)->mode) + ", uid " +
                        std::to_string((*info)->uid) + ", gid " + std::to_string((*info)->gid) +
                        "), so the job could not reach its attempt",
                    "give it search permission (e.g. chmod o+x, or g+x with a group " +
                        quoted(access.job_user.name) + " is in)");
    }
    if (end == path.size()) return std::monostate{};
    end = path.find('/', end + 1);
    if (end == std::string::npos) end = path.size();
  }
}

}  // namespace

Error AccessRefusal::toError() const {
  return Error{code, field, fix.empty() ? reason : reason + ": " + fix};
}

Result<OsUser> effectiveUser(OsUsers& users) {
  const uid_t uid = users.effectiveUid();
  auto found = users.userById(uid);
  if (!found) return fail(found.error());
  if (*found) return **found;
  return OsUser{"uid " + std::to_string(uid), uid, 0};
}

std::string JobAccess::describe() const {
  if (mode == JobAccessMode::kSharedGroup && group) {
    return "jobs run as " + quoted(job_user.name) + "; TunePlane runs as " +
           quoted(process_user.name) + " and gives logs/ and output/ to group " +
           quoted(group->name) + " (02775)";
  }
  return "jobs run as " + quoted(job_user.name) + ", the user TunePlane runs as";
}

AccessResult<JobAccess> decideJobAccess(const catalog::SiteConfig& site, OsUsers& users,
                                        StagingFs& fs) {
  auto access = resolve(site, users);
  if (!access) return access;
  if (auto reached = reach(site.staging_root, *access, fs); !reached) {
    return tl::unexpected(reached.error());
  }
  return access;
}

Result<JobAccess> resolveJobAccess(const catalog::SiteConfig& site, OsUsers& users) {
  auto access = resolve(site, users);
  if (!access) return fail(access.error().toError());
  return *access;
}

bool jobCanSearch(const PathInfo& dir, const JobAccess& access) {
  if (dir.uid == access.job_user.uid) return (dir.mode & S_IXUSR) != 0;
  if (contains(access.job_groups, dir.gid)) return (dir.mode & S_IXGRP) != 0;
  return (dir.mode & S_IXOTH) != 0;
}

Status checkJobCanReach(const std::string& path, const JobAccess& access, StagingFs& fs) {
  if (auto reached = reach(path, access, fs); !reached) return fail(reached.error().toError());
  return ok();
}

}  // namespace tuneplane::staging
