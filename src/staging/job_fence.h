// The job-level fence on the shared filesystem: which attempts of a job have been staged, so
// that an attempt's batch script can tell, on the node, that a later attempt superseded it.
//
//   <staging_root>/jobs/<job_id>/
//   ├── attempts/<n>/     one immutable directory per attempt (staging_paths.h)
//   └── fence/            0755 (per_user: 02750), written by TunePlane alone
//       ├── 1             one empty file (0444; per_user: 0440) per attempt staged, made
//       │                 before its submit
//       └── 2
//
// Staging attempt n adds fence/<n> (idempotent: a restarted stage finds it made). The batch
// script of attempt n (slurm/script_fence.cc) checks, together with its claim and before
// anything runs, that no fence/<m> with m > n exists, and runs nothing — failing closed —
// when it cannot tell (the directory or its own mark unreadable). With the control plane's
// rule that every earlier attempt's Slurm jobs have ended (or Slurm heard their cancel)
// before the next is submitted, a late or duplicate start of a superseded attempt never runs
// its command, whatever the control plane believed (docs/decisions.md, "Exactly once where
// faults meet"). While it runs, the script reads the fence again every few seconds and stops
// its steps when a later mark appears (an attempt Slurm judged ended whose node still reaches
// the filesystem), and attempt n starts its command only once such an earlier attempt has had
// the time to see fence/<n> and stop (docs/decisions.md, "A running attempt obeys the job's
// fence"). Marks are only ever added, so neither check needs a lock.
#pragma once

#include <string>

#include "common/result.h"
#include "staging/job_access.h"
#include "staging/staging_fs.h"

namespace tuneplane::staging {

inline constexpr mode_t kFenceDirMode = 0755;
inline constexpr mode_t kFenceMarkMode = 0444;

// Adds <fence_dir>/<attempt> (launch::fenceDirFor of the attempt dir), durably (its directory
// synced: one fsync). stageAttempt (stager.h) calls it before the attempt's directory appears;
// the attempt launcher again for an attempt it loads (idempotent). `access` is the job's rule
// (job_access.h): a per_user job's fence is made inside its setgid tree (02750, marks 0440).
// Errors: "staging.io" (nothing is submitted then: the caller retries).
Status markAttemptStaged(const std::string& fence_dir, int attempt, StagingFs& fs,
                         const JobAccess& access = {});

}  // namespace tuneplane::staging
