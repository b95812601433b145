// The one-time step per user of slurm.identity per_user, done by root: makes
// <staging_root>/users/<user> (staging_paths.h) owned by TunePlane's user, group the user's
// primary group, mode 02750 — the directory every file of that user's jobs lives under and
// that keeps every other user out (job_access.h). `tuneplane token add` runs it when it runs
// as root; anyone else gets userDirCommand's one line to hand to root. serve itself never
// needs root for it, nor CAP_CHOWN. Thread-safety: free functions.
#pragma once

#include <string>

#include "common/result.h"
#include "staging/job_access.h"

namespace tuneplane::staging {

// Makes (or puts right) <staging_root>/users/<access.run_as>: <staging_root>/users first when
// missing (root's, 0755: every user passes through, no one else writes), then the directory
// with access.process_user as owner, access.group as group and mode 02750 — the group given
// before the mode, and checked after. An existing directory keeps its contents and gets the
// owner, group and mode; a symlink or another kind of file there is refused.
// REQUIRES: access from resolveUserAccess (group set); this process may chown (root).
// Errors: "staging.invalid_user" (from the path builder), "staging.io".
Status makeUserDir(const JobAccess& access, const std::string& staging_root);

}  // namespace tuneplane::staging
