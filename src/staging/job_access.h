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
//   slurm.identity:   every job runs as its own Unix user U (store::JobRecord::run_as), and
//   per_user          its files live under <staging_root>/users/U (staging_paths.h). The site
//                     rule: TunePlane runs as slurm.user, the service user. Each job's rule
//                     (decideUserAccess): U exists here, is not root, its primary group G is
//                     its own (lists no other member), and users/U — made once by root — is a
//                     directory owned by TunePlane's user, group G, mode exactly 02750. Inside
//                     it every directory is made by mkdir and inherits G and setgid: 02750,
//                     logs/ output/ checkpoints/ 02770 (the job writes through G), files 0440,
//                     the attempt dir 0550. TunePlane is not in G: it reads what the job writes
//                     through the "other" bits (the job's umask is 022), which users/U keeps
//                     from every other user. No chown, no root, no CAP_CHOWN while it runs.
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
  kPerUser,      // slurm.identity per_user: the job's own user, through its users/<U> tree
};

inline constexpr mode_t kSameUserWritableDirMode = 0755;
inline constexpr mode_t kSharedGroupWritableDirMode = 02775;
// per_user: users/<U> (made once by root), and every directory serve makes inside it.
inline constexpr mode_t kUserDirMode = 02750;
inline constexpr mode_t kPerUserWritableDirMode = 02770;  // logs/, output/, checkpoints/
inline constexpr mode_t kPerUserFileMode = 0440;
inline constexpr mode_t kPerUserAttemptDirMode = 0550;

struct JobAccess {
  JobAccessMode mode = JobAccessMode::kSameUser;
  OsUser job_user;                // slurm.user as this host knows it; kPerUser: the job's user
  std::vector<gid_t> job_groups;  // every group job_user is in
  OsUser process_user;            // who TunePlane runs as (its effective uid)
  std::optional<OsGroup> group;   // kSharedGroup: staging.group; kPerUser: U's primary group
  // kPerUser: the job's user (its run_as) when this is one job's rule; "" for the site's
  // (decideJobAccess), under which a job with no run_as — it runs as slurm.user, which
  // TunePlane is — stages as under kSameUser.
  std::string run_as;

  // True for one job's per_user rule: its tree inherits G and setgid from users/<U>, and
  // nothing in it is chmod-ed but the sealed attempt dir.
  bool perUserJob() const { return mode == JobAccessMode::kPerUser && !run_as.empty(); }
  // The mode of logs/ and output/ (and checkpoints/).
  mode_t writableDirMode() const {
    if (perUserJob()) return kPerUserWritableDirMode;
    return mode == JobAccessMode::kSharedGroup ? kSharedGroupWritableDirMode
                                               : kSameUserWritableDirMode;
  }
  // The job's directories on the way to an attempt (jobs/<id>/, attempts/, fence/).
  mode_t treeDirMode() const { return perUserJob() ? kUserDirMode : mode_t{0755}; }
  // A staged file (job.sh, launch.json, …, a fence mark) and a sealed attempt dir.
  mode_t fileMode() const { return perUserJob() ? kPerUserFileMode : mode_t{0444}; }
  mode_t attemptDirMode() const { return perUserJob() ? kPerUserAttemptDirMode : mode_t{0555}; }
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
// A per_user site's answer is the site's part only (mode kPerUser, run_as ""): each job's
// user is decided by decideUserAccess.
AccessResult<JobAccess> decideJobAccess(const catalog::SiteConfig& site, OsUsers& users,
                                        StagingFs& fs);

// One job's rule under slurm.identity per_user, run as `user`, with TunePlane running as
// `serve` (the site's access.process_user; for `tuneplane token add` run by root, slurm.user).
// No filesystem: the user and its group. Errors (field "run_as"):
//   "staging.invalid_user"        not a Unix user name
//   "staging.unknown_job_user"    no such user on this host
//   "staging.root_job_user"       the user is root (uid 0): jobs never run as root
//   "staging.unknown_group"       the user's primary group has no entry here
//   "staging.user_group_shared"   the user's primary group lists other members, who would
//                                 reach the user's job files through it
//   "staging.user_lookup_failed"  the user/group database did not answer
AccessResult<JobAccess> resolveUserAccess(const OsUser& serve, const std::string& user,
                                          OsUsers& users);

// resolveUserAccess, then the per-user directory <staging_root>/users/<user>, and the way
// down to it for the job's user (checkJobCanReach). What a stage of a per_user job asks,
// and doctor's staging/user/<name>. REQUIRES: site_access from decideJobAccess of a
// per_user site. Errors: resolveUserAccess's, checkJobCanReach's, and (field "run_as")
//   "staging.user_dir_missing"      users/<user> does not exist: the one-time step was not run
//   "staging.user_dir_unprotected"  it is not a directory owned by TunePlane's user, group
//                                   the user's primary group, mode 02750 (each wrong named)
AccessResult<JobAccess> decideUserAccess(const JobAccess& site_access,
                                         const std::string& staging_root, const std::string& user,
                                         OsUsers& users, StagingFs& fs);

// The one-time step per user as one command for root: `install -d -o SERVE -g GROUP -m 2750
// <staging_root>/users/<user>`. REQUIRES: access from resolveUserAccess.
std::string userDirCommand(const JobAccess& access, const std::string& staging_root);

// Decides the rule for `site` from its slurm.user and staging.group.
// Errors (field):
//   "staging.unknown_job_user" (slurm.user)          slurm.user is not a user on this host
//   "staging.job_user_mismatch" (slurm.user)         no staging.group, and TunePlane is not
//                                                    slurm.user
//   "staging.service_user_mismatch" (slurm.user)     per_user, and TunePlane is not slurm.user
//                                                    (the owner of every users/<U>)
//   "staging.unknown_group" (staging.group)          no such group on this host
//   "staging.job_user_not_in_group" (staging.group)  slurm.user is not in the group
//   "staging.group_not_usable" (staging.group)       TunePlane is neither root nor in it
//   "staging.user_lookup_failed" (either)            the user/group database did not answer
Result<JobAccess> resolveJobAccess(const catalog::SiteConfig& site, OsUsers& users);

// True when the job user may pass through (search) the directory `dir`: the owner, group
// and other permission classes are applied in POSIX order. ACLs are not consulted.
bool jobCanSearch(const PathInfo& dir, const JobAccess& access);

// Checks, in kSharedGroup mode and for a per_user job, that the job user can pass through
// every existing directory from "/" down to `path` (the ones still missing will be created
// by the stager). Symlinked components are judged by their target. kSameUser (and a per_user
// site's own rule): always ok (the job is the user who writes the attempt).
// REQUIRES: path is a clean absolute path. Errors: "staging.not_traversable"
// (field "staging_root"), and "staging.io" from the filesystem.
Status checkJobCanReach(const std::string& path, const JobAccess& access, StagingFs& fs);

}  // namespace tuneplane::staging
