// Who writes an attempt, and how the job's OS user gets to write into it. Slurm runs a job
// as slurm.user (the JWT's user) and opens logs/<pool>.out as that user; when TunePlane
// staged the attempt as someone else, the job cannot open its log, Slurm says FAILED with no
// exit code, and logs/ stays empty. So the rule is decided once per site, before anything
// is staged or submitted, and the stager applies it:
//
//   no staging.group  TunePlane must run as slurm.user (its effective uid is slurm.user's
//                     uid on this host). The job then owns what it writes; logs/ and
//                     output/ are 0755. Anything else is refused, naming both users and the fix.
//   staging.group: G  G must exist, slurm.user must be in G, and TunePlane must be able to
//                     give files to G (root, or a member of G). logs/ and output/ become
//                     <TunePlane's user>:G 02775 — group-writable, and setgid so what the job
//                     creates there stays in G. Everything else of the attempt stays
//                     read-only for all (0444 files, 0555 attempt dir), and every directory
//                     on the way to the attempt must let slurm.user through (checkJobCanReach).
//
// The rule lives here only: a submit (pipeline::checkJobAccess), the stager and `tuneplane
// doctor`'s staging/user check all ask decideJobAccess / resolveJobAccess / checkJobCanReach.
// Users and groups come from the OsUsers seam, directories from the StagingFs seam, so the
// rules are tested with fakes. Thread-safety: free functions over their arguments.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "catalog/site_config.h"
#include "common/result.h"
#include "staging/os_users.h"
#include "staging/staging_fs.h"

namespace tuneplane::staging {

enum class JobAccessMode {
  kSameUser,     // TunePlane runs as slurm.user: the job owns what it writes
  kSharedGroup,  // logs/ and output/ belong to staging.group, group-writable and setgid
};

inline constexpr mode_t kSameUserWritableDirMode = 0755;
inline constexpr mode_t kSharedGroupWritableDirMode = 02775;

struct JobAccess {
  JobAccessMode mode = JobAccessMode::kSameUser;
  OsUser job_user;                // slurm.user as this host knows it
  std::vector<gid_t> job_groups;  // every group slurm.user is in
  OsUser process_user;            // who TunePlane runs as (its effective uid)
  std::optional<OsGroup> group;   // kSharedGroup: staging.group

  // The mode of logs/ and output/.
  mode_t writableDirMode() const {
    return mode == JobAccessMode::kSharedGroup ? kSharedGroupWritableDirMode
                                               : kSameUserWritableDirMode;
  }
  // One line for people: "jobs run as tpuser, like TunePlane" or "… through group g".
  std::string describe() const;
};

// Why the rule refuses a site, with what is wrong and what to do kept apart (doctor prints
// them apart). toError() is the Error the Result-returning functions give: its message is
// "<reason>: <fix>".
struct AccessRefusal {
  std::string code;
  std::string field;
  std::string reason;  // what is wrong, naming the users, the group or the directory
  std::string fix;     // what to do (for a failed lookup: check the user database)
  Error toError() const;
};
template <typename T>
using AccessResult = tl::expected<T, AccessRefusal>;

// This process's effective user, by name when the user database knows its uid (else the
// name is "uid N"). Errors: "staging.user_lookup_failed".
Result<OsUser> effectiveUser(OsUsers& users);

// The whole rule for a site, as a submit applies it before staging anything:
// resolveJobAccess, then checkJobCanReach for site.staging_root. pipeline::checkJobAccess and
// doctor's staging/user check both ask this. Refusals: the codes of both functions below.
AccessResult<JobAccess> decideJobAccess(const catalog::SiteConfig& site, OsUsers& users,
                                        StagingFs& fs);

// Decides the rule for `site` from its slurm.user and staging.group.
// Errors (field):
//   "staging.unknown_job_user" (slurm.user)          slurm.user is not a user on this host
//   "staging.job_user_mismatch" (slurm.user)         no staging.group, and TunePlane is not
//                                                    slurm.user
//   "staging.unknown_group" (staging.group)          no such group on this host
//   "staging.job_user_not_in_group" (staging.group)  slurm.user is not in the group
//   "staging.group_not_usable" (staging.group)       TunePlane is neither root nor in it
//   "staging.user_lookup_failed" (either)            the user/group database did not answer
Result<JobAccess> resolveJobAccess(const catalog::SiteConfig& site, OsUsers& users);

// True when the job user may pass through (search) the directory `dir`: the owner, group
// and other permission classes are applied in POSIX order. ACLs are not consulted.
bool jobCanSearch(const PathInfo& dir, const JobAccess& access);

// Checks, in kSharedGroup mode, that the job user can pass through every existing directory
// from "/" down to `path` (the ones still missing will be created 0755 by the stager).
// Symlinked components are judged by their target. kSameUser: always ok (the job is the
// user who writes the attempt).
// REQUIRES: path is a clean absolute path. Errors: "staging.not_traversable"
// (field "staging_root"), and "staging.io" from the filesystem.
Status checkJobCanReach(const std::string& path, const JobAccess& access, StagingFs& fs);

}  // namespace tuneplane::staging
