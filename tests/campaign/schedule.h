// The fault campaign's schedule (issues 21 and 37): from one 64-bit seed (and the mode) alone, the
// sequence of steps a run takes — jobs submitted (single-pool and het, short and long, some failing
// with a retry budget, some cancelled by their user after a seeded delay) and faults injected
// between them, each with its seeded parameters and pause. Pure: the same seed and size give
// the same schedule on any machine, so a failing seed replays the same faults in the same
// order (which Slurm job a fault strikes is chosen at run time among the jobs then running,
// by a seeded index: timing decides the candidates, the seed the pick).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tuneplane::campaign {

enum class JobKind {
  kShort,    // a CPU job that prints and ends
  kLong,     // a CPU job that sleeps a few seconds (faults strike it while it runs)
  kHet,      // a two-pool GPU job: one Slurm het job, a Ray driver (stand-in Ray)
  kFailing,  // exits 3, retried on any cause: ends Failed once its budget (2 attempts) is spent
};

enum class Fault {
  kDropSubmit,       // the next submit's job is made, its answer lost (lost receipt): the
                     // connection closed, or (Step::reset) reset by a TCP RST
  kServerErrors,     // the next 1–4 requests answered 500 or 503
  kThrottle,         // a burst: the next 3–10 requests answered 429
  kSlowAnswers,      // every answer delayed past the client's request timeout for a while
  kDuplicateSubmit,  // one POST carried out twice and its answer lost, on a busy cluster
  kSlurmRestart,     // slurmrestd/slurmctld restart: jobs kept, numeric ids from the lowest free
  kPurge,            // a running job forgotten by Slurm as soon as it ends
  kIdReuse,          // a finished job purged, then a restart: its numeric id is handed out again
  kRequeue,          // an administrator's requeue of a running job: a new SLUID
  kStallDelete,      // a user cancels a running job and its DELETE times out once
  kNodeFail,         // a running job ends NODE_FAIL (an infrastructure failure: retried), or
                     // (Step::preempt) is preempted with a grace time (issue 47: retried
                     // without using an attempt)
  kExpireTokens,     // every JWT issued so far refused from now on
  kKillServe,        // `tuneplane serve` SIGKILLed, restarted on the same database
  kStagingFull,      // the staging filesystem full (ENOSPC) for a while, a job submitted in it
  kClockStep,        // serve's wall clock stepped forward (and left there), as by NTP
  // Issue 37's, drawn in the replica mode only (so a seed's single-serve schedule is the one
  // it was before they existed):
  kLyingReads,        // for a window, Slurm's reads lie: the state poll answers no jobs,
                      // GET /job/{id} a bare 404, the listing 502 (a misrouted proxy)
  kClaimUncreatable,  // the next 1-4 jobs to start find logs/claim uncreatable (exit 72)
  kStopLeader,        // the leader SIGSTOPped inside its transaction (just after it asked for
                      // the writers' lock), SIGCONTed once another replica has taken over
  kLeaseRetaken,      // the leader cut off from the database until another leads, then the
                      // others cut off until it leads again: the lease lost and retaken
  kDbCut,             // a replica's database connections cut (closed, or reset by an RST)
  kDbStallWriter,     // a replica's writer frozen inside its transaction, holding the
                      // writers' lock, for 2-18 s (the server ends such a session after 15 s)
  kDbDelay,           // a replica's database traffic delayed 20-250 ms a chunk for 2-6 s
};
inline constexpr int kFaultKinds = 22;
inline constexpr int kSingleServeFaultKinds = 15;  // the first 15: the single-serve mode's

// Which system a run plays its schedule against.
enum class CampaignMode {
  kSingleSqlite,      // one `tuneplane serve` on SQLite (issue 21's campaign)
  kReplicasPostgres,  // three replicas on one PostgreSQL, each through a fault proxy
};
const char* describe(CampaignMode mode);

const char* describe(JobKind kind);
const char* describe(Fault fault);

struct Step {
  bool is_fault = false;
  JobKind job = JobKind::kShort;  // !is_fault
  int cancel_after_ms = -1;       // !is_fault: the user cancels it this long after submit
  int sleep_s = 0;                // kLong: how long it runs
  Fault fault = Fault::kDropSubmit;
  int count = 0;         // kServerErrors/kThrottle: requests; kServerErrors: 500 or 503 in status
  int status = 0;        // kServerErrors: 500 or 503
  int window_ms = 0;     // kSlowAnswers, kStagingFull: how long; kKillServe: how long down
  uint32_t pick = 0;     // which of the candidate jobs a targeted fault strikes
  int step_minutes = 0;  // kClockStep: how far forward (1 min to 3 h; from `pick`)
  bool reset = false;    // kDropSubmit, kDbCut: a TCP RST instead of a close (from `status`)
  // kNodeFail: a preemption instead, with a grace time of `grace_s` (from `count` and
  // `window_ms`, which a node failure does not use).
  bool preempt = false;
  int grace_s = 0;
  int pause_ms = 0;  // the pause before this step
  // Issue 37's faults: kLyingReads, kDbDelay: how long; kDbStallWriter: how long the writer
  // is held. kDbDelay: the delay of each chunk. kClaimUncreatable: as dangling links (from
  // `status`), else directories.
  int hold_ms = 0;
  int chunk_delay_ms = 0;
};

// What the step strikes as reported ("submit connection reset" for a reset kDropSubmit).
const char* describeStrike(const Step& step);

struct ScheduleSize {
  int jobs = 10;
  int faults = 12;
};

// The single-serve mode draws the first kSingleServeFaultKinds kinds with issue 21's weights,
// so its schedules are the ones seeds gave before the replica mode existed; the replica mode
// draws every kind.
std::vector<Step> makeSchedule(uint64_t seed, ScheduleSize size,
                               CampaignMode mode = CampaignMode::kSingleSqlite);

// One line per step, for the log of a run (and to compare two runs of a seed).
std::string describe(const std::vector<Step>& schedule);

}  // namespace tuneplane::campaign
