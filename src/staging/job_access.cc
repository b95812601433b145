// resolveJobAccess and checkJobCanReach: the rule of job_access.h over the two seams.
#include "staging/job_access.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

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

Error withField(Error error, const char* field) {
  error.field = field;
  return error;
}

// Who this process is, by name when the database knows its uid.
Result<OsUser> processUser(OsUsers& users) {
  const uid_t uid = users.effectiveUid();
  auto found = users.userById(uid);
  if (!found) return fail(found.error());
  if (*found) return **found;
  return OsUser{"uid " + std::to_string(uid), uid, 0};
}

}  // namespace

std::string JobAccess::describe() const {
  if (mode == JobAccessMode::kSharedGroup && group) {
    return "jobs run as " + quoted(job_user.name) + "; TunePlane runs as " +
           quoted(process_user.name) + " and gives logs/ and output/ to group " +
           quoted(group->name) + " (02775)";
  }
  return "jobs run as " + quoted(job_user.name) + ", the user TunePlane runs as";
}

Result<JobAccess> resolveJobAccess(const catalog::SiteConfig& site, OsUsers& users) {
  JobAccess access;
  auto process = processUser(users);
  if (!process) return fail(withField(process.error(), kUserField));
  access.process_user = *process;

  const std::string& name = site.slurm.user;
  auto job_user = users.userByName(name);
  if (!job_user) return fail(withField(job_user.error(), kUserField));
  if (!*job_user) {
    return fail("staging.unknown_job_user", kUserField,
                "slurm.user " + quoted(name) +
                    " is not a user on this host, so TunePlane cannot make the attempt "
                    "writable for the job: make the user known here (the same user database as "
                    "the compute nodes, e.g. LDAP or sssd), or correct slurm.user");
  }
  access.job_user = **job_user;
  auto groups = users.groupsOf(access.job_user);
  if (!groups) return fail(withField(groups.error(), kUserField));
  access.job_groups = std::move(*groups);

  if (!site.staging.group) {
    if (access.process_user.uid == access.job_user.uid) return access;
    return fail("staging.job_user_mismatch", kUserField,
                "TunePlane runs as " + userText(access.process_user) +
                    " but Slurm runs this site's jobs as slurm.user " + userText(access.job_user) +
                    ", who could not write the attempt's logs/ and output/ (the job would fail "
                    "with an empty logs/). Run TunePlane as " +
                    quoted(access.job_user.name) +
                    ", or set staging.group in the site file to a group that " +
                    quoted(access.job_user.name) + " is in and TunePlane can use");
  }

  const std::string& group_name = *site.staging.group;
  auto group = users.groupByName(group_name);
  if (!group) return fail(withField(group.error(), kGroupField));
  if (!*group) {
    return fail("staging.unknown_group", kGroupField,
                "staging.group " + quoted(group_name) +
                    " is not a group on this host: create it (with " + quoted(name) +
                    " in it), or name an existing one");
  }
  access.mode = JobAccessMode::kSharedGroup;
  access.group = **group;
  if (!contains(access.job_groups, access.group->gid)) {
    return fail("staging.job_user_not_in_group", kGroupField,
                "slurm.user " + userText(access.job_user) + " is not in staging.group " +
                    quoted(group_name) +
                    ", so the job could not write the attempt's logs/ and output/: add " +
                    quoted(name) + " to " + quoted(group_name) + ", or name a group it is in");
  }
  if (access.process_user.uid != 0 && !contains(users.processGroups(), access.group->gid)) {
    return fail("staging.group_not_usable", kGroupField,
                "TunePlane runs as " + userText(access.process_user) +
                    ", which is neither root nor in staging.group " + quoted(group_name) +
                    ", so it cannot give logs/ and output/ to that group: add " +
                    quoted(access.process_user.name) + " to " + quoted(group_name) +
                    " (and restart TunePlane), or run TunePlane as slurm.user " + quoted(name) +
                    " without staging.group");
  }
  return access;
}

bool jobCanSearch(const PathInfo& dir, const JobAccess& access) {
  if (dir.uid == access.job_user.uid) return (dir.mode & S_IXUSR) != 0;
  if (contains(access.job_groups, dir.gid)) return (dir.mode & S_IXGRP) != 0;
  return (dir.mode & S_IXOTH) != 0;
}

Status checkJobCanReach(const std::string& path, const JobAccess& access, StagingFs& fs) {
  if (access.mode == JobAccessMode::kSameUser) return ok();
  // "/", "/a", "/a/b", … down to `path`, stopping at the first that does not exist yet.
  std::size_t end = 0;
  while (true) {
    const std::string prefix = end == 0 ? "/" : path.substr(0, end);
    auto info = fs.statPath(prefix);
    if (!info) return fail(info.error());
    if (!*info) return ok();
    if ((*info)->is_directory && !jobCanSearch(**info, access)) {
      return fail("staging.not_traversable", "staging_root",
                  "slurm.user " + userText(access.job_user) + " cannot pass through '" + prefix +
                      "' (mode " + octal((*info)->mode) + ", uid " + std::to_string((*info)->uid) +
                      ", gid " + std::to_string((*info)->gid) +
                      "), so the job could not reach its attempt: give it search permission "
                      "(e.g. chmod o+x, or g+x with a group " +
                      quoted(access.job_user.name) + " is in)");
    }
    if (end == path.size()) return ok();
    end = path.find('/', end + 1);
    if (end == std::string::npos) end = path.size();
  }
}

}  // namespace tuneplane::staging
