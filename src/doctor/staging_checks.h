// Doctor's judgements of the staging root, pure functions over StagingFacts:
//   staging/root        staging_root exists, is a directory, and this process could create
//                       and remove a file in it (the probe the gathering layer made)
//   staging/user        issue 11: Slurm runs each job as slurm.user, and the job must write
//                       its attempt's logs/ and output/. The rule is staging's own
//                       (staging/job_access.h: TunePlane runs as slurm.user, or a shared
//                       staging.group holds slurm.user and is usable by TunePlane, and the
//                       job user can pass through every directory down to the root); this
//                       check reports staging::decideJobAccess's verdict, reason and fix
//   staging/user/<name> slurm.identity per_user, one per mapped user of the site's tokens:
//                       the user exists here, is not root, has a group of its own, and its
//                       users/<name> directory is owned by TunePlane's user, group the user's
//                       primary group, mode 02750, reachable by the user
//                       (staging::decideUserAccess's verdict, reason and fix); and, when the
//                       gathering layer asked, whether Slurm knows the user (UserStagingFacts)
//   staging/filesystem  statfs(2) f_type of the root: a network or cluster filesystem
//                       (NFS, Lustre, GPFS, BeeGFS, CephFS, …) → ok; a local one (ext4, xfs,
//                       tmpfs, overlay, …) → warn, since compute nodes would each see their
//                       own disk; a type doctor does not know (FUSE included) → warn
#pragma once

#include <cstdint>
#include <string>

#include "doctor/check.h"
#include "doctor/facts.h"

namespace tuneplane::doctor {

enum class FilesystemSharing {
  kShared,   // a network or cluster filesystem: nodes can mount the same tree
  kLocal,    // a disk (or memory) of this host only
  kUnknown,  // not in the table, or FUSE (which could be either)
};

struct FilesystemKind {
  std::string name;  // "nfs", "lustre", "ext4", … or "unknown"
  FilesystemSharing sharing = FilesystemSharing::kUnknown;
};

// Classifies a statfs(2) f_type magic number (linux/magic.h and the vendors' headers).
FilesystemKind classifyFilesystem(uint64_t f_type);

CheckResult checkStagingRoot(const StagingFacts& facts);
CheckResult checkStagingUser(const StagingFacts& facts);
CheckResult checkUserStaging(const UserStagingFacts& user, const StagingFacts& facts);
CheckResult checkStagingFilesystem(const StagingFacts& facts);

}  // namespace tuneplane::doctor
