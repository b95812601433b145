// decideJobAccess, resolveJobAccess and checkJobCanReach: the rule of job_access.h over the
// two seams.
#include "staging/job_access.h"

#include <sys/stat.h>

#include "common/text_checks.h"
#include "staging/staging_paths.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <variant>

namespace tuneplane::staging {
namespace {

constexpr const char* kUserField = "slurm.user";
constexpr const char* kGroupField = "staging.group";
constexpr const char* kRunAsField = "run_as";

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

  if (site.slurm.identity == catalog::IdentityMode::kPerUser) {
    // staging.group has no part here: each job's own user's group is its tree's.
    access.mode = JobAccessMode::kPerUser;
    if (access.process_user.uid == access.job_user.uid) return access;
    const std::string& service = access.job_user.name;
    return refuse("staging.service_user_mismatch", kUserField,
                  "TunePlane runs as " + userText(access.process_user) +
                      " but slurm.identity per_user wants it to run as slurm.user " +
                      userText(access.job_user) +
                      ", the service user that owns every per-user staging directory "
                      "(users/<name>, owner " +
                      quoted(service) + ")",
                  "run TunePlane as " + quoted(service) + " (e.g. User=" + service +
                      " in its systemd unit), or set slurm.user to the user it runs as and "
                      "give it the per-user directories");
  }
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
  if (access.mode == JobAccessMode::kPerUser && !access.perUserJob()) return std::monostate{};
  const std::string who = access.perUserJob() ? "the job's user " : "slurm.user ";
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
                    who + userText(access.job_user) + " cannot pass through '" + prefix +
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

// What is wrong with the per-user directory `info` for `access` (empty: nothing).
std::vector<std::string> userDirFaults(const PathInfo& info, const JobAccess& access) {
  std::vector<std::string> faults;
  if (!info.is_directory) return {"it is not a directory"};
  if (info.uid != access.process_user.uid) {
    faults.push_back("its owner is uid " + std::to_string(info.uid) + ", not " +
                     userText(access.process_user) + " (TunePlane's user)");
  }
  if (access.group && info.gid != access.group->gid) {
    faults.push_back("its group is gid " + std::to_string(info.gid) + ", not " +
                     quoted(access.group->name) + " (gid " + std::to_string(access.group->gid) +
                     ", the user's primary group)");
  }
  if (info.mode != kUserDirMode) {
    faults.push_back("its mode is " + octal(info.mode) + ", not " + octal(kUserDirMode) +
                     " (setgid, the group may enter and read, others nothing)");
  }
  return faults;
}

std::string joinedFaults(const std::vector<std::string>& faults) {
  std::string out;
  for (std::size_t i = 0; i < faults.size(); ++i) out += (i ? "; " : "") + faults[i];
  return out;
}

}  // namespace

AccessResult<JobAccess> resolveUserAccess(const OsUser& serve, const std::string& user,
                                          OsUsers& users) {
  if (!isUnixUserName(user)) {
    return refuse("staging.invalid_user", kRunAsField,
                  quoted(user) + " is not a Unix user name, so no job can run as it",
                  "map the API user to a Unix user name (server.tokens[].unix_user: [a-z_] then "
                  "[a-z0-9_-], at most 32 characters)");
  }
  auto found = users.userByName(user);
  if (!found) return lookupFailed(found.error(), kRunAsField);
  if (!*found) {
    return refuse("staging.unknown_job_user", kRunAsField,
                  "the job's user " + quoted(user) +
                      " is not a user on this host, so TunePlane cannot stage files only it "
                      "reaches",
                  "make the user known here with the same uid as on the compute nodes (the same "
                  "user database, e.g. LDAP or sssd), or map the API user to another "
                  "(server.tokens[].unix_user)");
  }
  JobAccess access;
  access.mode = JobAccessMode::kPerUser;
  access.run_as = user;
  access.job_user = **found;
  access.process_user = serve;
  if (access.job_user.uid == 0) {
    return refuse("staging.root_job_user", kRunAsField,
                  "the job's user " + userText(access.job_user) +
                      " is root: TunePlane never runs a job as root",
                  "map the API user to an ordinary Unix user (server.tokens[].unix_user)");
  }
  auto groups = users.groupsOf(access.job_user);
  if (!groups) return lookupFailed(groups.error(), kRunAsField);
  access.job_groups = std::move(*groups);
  auto group = users.groupById(access.job_user.gid);
  if (!group) return lookupFailed(group.error(), kRunAsField);
  if (!*group) {
    return refuse("staging.unknown_group", kRunAsField,
                  "the primary group (gid " + std::to_string(access.job_user.gid) +
                      ") of the job's user " + quoted(user) + " is not a group on this host",
                  "make the group known here (the same group database as the nodes)");
  }
  access.group = **group;
  std::vector<std::string> others;
  for (const std::string& member : access.group->members) {
    if (member != user) others.push_back(quoted(member));
  }
  if (!others.empty()) {
    return refuse("staging.user_group_shared", kRunAsField,
                  "the primary group " + quoted(access.group->name) + " (gid " +
                      std::to_string(access.group->gid) + ") of the job's user " + quoted(user) +
                      " also holds " + joinedFaults(others) +
                      ", who would read and change that user's job files through it",
                  "give " + quoted(user) +
                      " a group of its own as its primary group (a user private group, e.g. "
                      "`groupadd " +
                      user + " && usermod -g " + user + " " + user + "`)");
  }
  return access;
}

AccessResult<JobAccess> decideUserAccess(const JobAccess& site_access,
                                         const std::string& staging_root, const std::string& user,
                                         OsUsers& users, StagingFs& fs) {
  auto access = resolveUserAccess(site_access.process_user, user, users);
  if (!access) return access;
  auto dir = userDir(staging_root, user);
  if (!dir) return refuse(dir.error().code, kRunAsField, dir.error().message, "");
  const std::string command = userDirCommand(*access, staging_root);
  auto info = fs.statPath(*dir);
  if (!info) {
    return refuse(info.error().code, kRunAsField, info.error().message,
                  "make every directory down to the staging root searchable by the user "
                  "TunePlane runs as");
  }
  if (!*info) {
    return refuse("staging.user_dir_missing", kRunAsField,
                  "the per-user staging directory " + *dir + " of " + quoted(user) +
                      " does not exist (slurm.identity per_user: made once per user, by root)",
                  "run `tuneplane token add` for the user as root, or as root: `" + command + "`");
  }
  if (auto faults = userDirFaults(**info, *access); !faults.empty()) {
    return refuse("staging.user_dir_unprotected", kRunAsField,
                  "the per-user staging directory " + *dir + " of " + quoted(user) +
                      " is not protected as required: " + joinedFaults(faults),
                  "as root (a chmod by anyone outside the group drops setgid): `chown " +
                      access->process_user.name + ":" + access->group->name + " " + *dir +
                      " && chmod 2750 " + *dir + "`");
  }
  if (auto reached = reach(*dir, *access, fs); !reached) {
    AccessRefusal refusal = reached.error();
    refusal.field = kRunAsField;
    return tl::unexpected(std::move(refusal));
  }
  return access;
}

std::string userDirCommand(const JobAccess& access, const std::string& staging_root) {
  auto dir = userDir(staging_root, access.run_as);
  const std::string group = access.group ? access.group->name : std::to_string(access.job_user.gid);
  return "install -d -o " + access.process_user.name + " -g " + group + " -m 2750 " +
         dir.value_or(staging_root + "/users/" + access.run_as);
}

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
  if (perUserJob()) {
    return "the job runs as " + quoted(job_user.name) + "; its files live under users/" + run_as +
           " (group " + (group ? quoted(group->name) : std::string("?")) +
           ", 02750), which only it and TunePlane (" + quoted(process_user.name) + ") reach";
  }
  if (mode == JobAccessMode::kPerUser) {
    return "jobs run as their own users (slurm.identity per_user), each under users/<name>; "
           "TunePlane runs as " +
           quoted(process_user.name) + ", slurm.user";
  }
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
