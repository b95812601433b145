// tuneplane-slurmsim: a slurmrestd SIMULATOR (not Slurm) for tests and the quick start,
// serving REST API v0.0.45 (as Slurm 26.05.3), v0.0.44 (as Slurm 25.11.7), or both (as 26.05
// does): same routes and JSON shapes as the real servers (proven against the real transcripts
// of each in tests/data/slurm/; the versions: sim_api.h), JWT HS256 checked like the real
// server, batch scripts run as local processes, faults injectable. This header is the in-process
// API that tests use; the binary (main.cc) wraps it. Thread-safety: all methods may be called from
// any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/result.h"

namespace tuneplane::sim {

struct SimulatorOptions {
  std::string listen = "127.0.0.1:0";       // "HOST:PORT" (port 0 = any free) or "unix:/path"
  std::string jwt_key_file;                 // HS256 key, like AuthAltParameters=jwt_key=
  std::optional<std::string> cluster_file;  // nodes/partitions; default = testcluster's
  std::optional<std::string> state_dir;     // where job state and scratch live
  std::chrono::milliseconds epilog{2000};   // how long jobs stay COMPLETING
  std::chrono::seconds min_job_age{300};    // finished jobs purged after this (MinJobAge)
  std::string cluster_name = "tp";          // overrides the cluster file's name when not "tp"
  // Length of one Slurm "minute" for time limits (hidden --minute-seconds): tests shrink
  // it to see TIMEOUT quickly.
  std::chrono::milliseconds minute{60000};
  // Grace between SIGTERM and SIGKILL when a job is cancelled or times out (KillWait).
  std::chrono::milliseconds kill_wait{2000};
  int fail_submits = 0;       // --fail-submits: drop the next N submit responses
  int duplicate_submits = 0;  // --duplicate-submits: carry out the next N twice
  // How long a requeued job waits (reason BeginTime) before it may start again: slurmctld's
  // requeue_delay, by default the credential lifetime (120 s) plus one second.
  std::chrono::milliseconds requeue_delay{121000};
  std::chrono::milliseconds latency{0};  // --latency-ms: added to every request
  // --api-versions: the REST API versions served (sim_api.h). The newest decides which Slurm
  // release the simulator acts as: v0.0.45 → 26.05.3, v0.0.44 alone → 25.11.7.
  std::vector<std::string> api_versions{"v0.0.45"};
  // --slurm-user: SlurmUser (slurm.conf). Its tokens and root's may act for any user through
  // X-SLURM-USER-NAME (proxy mode) and cancel any job; every other token acts for its own
  // user alone.
  std::string slurm_user = "slurm";
  // --accounting: slurmrestd loads openapi/slurmdbd, so /slurmdb/<version>/jobs/ and
  // /job/{id} answer from the simulator's own slurmdbd: one record per run of every job
  // (slurmdb_ledger.h). Off: every /slurmdb/ path answers 404 text, as a site without
  // slurmdbd (22_no_slurmdbd). Independent of the cluster file's `accounting:` associations.
  bool accounting = false;
  // The simulator's time: its steady reading schedules latencies, epilogs, time limits,
  // KillWait, requeue delays, MinJobAge and the timed faults (lieAboutReads, stallDeletes); its
  // wall reading is the Unix time the jobs' records show. Null: the system's clock, as
  // tuneplane-slurmsim runs. A test passes a FakeClock and advances it, so an epilog of two
  // seconds or a forty-second fault window costs it no waiting. The batch scripts still run as
  // real processes in real time, and tokens are checked against the real time their minters
  // stamped. REQUIRES: outlives the simulator.
  const Clock* clock = nullptr;
};

class Simulator {
 public:
  static Result<std::unique_ptr<Simulator>> start(const SimulatorOptions& options);
  virtual ~Simulator() = default;  // stops serving, kills running jobs

  virtual std::string baseUrl() const = 0;  // "http://127.0.0.1:PORT" or "unix:///path"

  // Faults (also settable through the admin route POST /sim/admin/faults on the listener).
  // The next `count` submits create their job, then the connection is closed with no
  // HTTP response (a lost receipt).
  virtual void dropNextSubmitResponses(int count) = 0;
  // The same, but the connection is reset (a TCP RST, as from a crashed proxy or host)
  // instead of closed.
  virtual void resetNextSubmitConnections(int count) = 0;
  // The next `count` requests (any route) are answered with `http_status` (500 or 503).
  virtual void failNextRequests(int count, int http_status) = 0;
  virtual void setLatency(std::chrono::milliseconds latency) = 0;
  // Every token issued (iat) up to now is refused from now on, as expired (511/1007).
  virtual void expireTokens() = 0;
  // Ends a running job with the given base state: "NODE_FAIL", "PREEMPTED",
  // "OUT_OF_MEMORY", "FAILED", "TIMEOUT". `job` is a numeric id or a SLUID.
  virtual Status endJob(const std::string& job, const std::string& base_state) = 0;
  // Preempts a running job as slurmctld does with PreemptMode=CANCEL, a GraceTime of `grace`
  // and PreemptParameters=send_user_signal (23_preemption.json, real 26.05.3): the job stays
  // RUNNING with preempt_time = now and end_time = now + grace, and every process of its
  // steps (not the batch shell) gets its kill-warning signal at once — TERM when it was
  // submitted without one. If its batch script ends in the grace time, the job ends PREEMPTED
  // at once whatever the exit (exit_code SUCCESS/0); else it is killed at the grace end
  // (TERM to everything, KILL after KillWait) and ends PREEMPTED; PREEMPTED,COMPLETING through
  // the epilog, and slurmdbd records PREEMPTED. The grace is scheduled on the simulator's
  // clock. `job` is a numeric id or a SLUID (a het job: all its components).
  virtual Status preemptJob(const std::string& job, std::chrono::seconds grace) = 0;
  // Simulates a slurmctld restart: keeps every job it still holds, but the numeric id
  // counter starts again from the lowest id not held, so ids of purged jobs are reused.
  virtual void restart() = 0;
  // A stalled scheduler: while paused, new jobs stay PENDING (reason None) and nothing
  // starts; resuming lets the FIFO scheduler run again. (A real slurmctld schedules every
  // few seconds, so "PENDING right after submit" is normal — tests use this to see it.)
  virtual void pauseScheduling(bool paused) = 0;

  // Where job scripts, stand-ins (bin/) and scratch live.
  virtual std::string stateDir() const = 0;
  // The next `count` submits are each carried out twice, as behind a proxy that sends one
  // POST twice: two jobs (consecutive ids, their own SLUIDs) from one body, so one comment
  // (submit token). The answer names the first; dropNextSubmitResponses loses it.
  virtual void duplicateNextSubmits(int count) = 0;
  // Requeues a running job as slurmctld does for `scontrol requeue` (`hold`: `requeuehold`),
  // whatever its `requeue` field (as PrologFlags=ForceRequeueOnFail does): the batch step
  // is killed; the job reads [PENDING,COMPLETING] through the epilog (restart_cnt + 1; held:
  // JobHeldUser at once), then gets a NEW SLUID (same numeric id) and pends on BeginTime for
  // requeue_delay before it may run again, or held until released. No REQUEUED or
  // REQUEUE_HOLD flag shows, as on the real 26.05.3 (transcripts 17, 17b). A DELETE while it
  // is completing cancels it for good ([CANCELLED,COMPLETING]). `job`: numeric id or SLUID.
  virtual Status requeueJob(const std::string& job, bool hold) = 0;
  // The next `count` DELETEs of `job` (named by its numeric id or SLUID; one het component
  // alone) get no answer: nothing is cancelled, and the connection is held `hold` (or until
  // the simulator stops), then closed with no HTTP response — a cancel that timed out.
  virtual Status stallDeletes(const std::string& job, int count,
                              std::chrono::milliseconds hold) = 0;
  // A pending job (every component of a het job) stays PENDING with `reason` (e.g.
  // BadConstraints, PartitionConfig) and never starts; an empty `reason` lets it start again.
  virtual Status neverStart(const std::string& job, const std::string& reason) = 0;
  // The same for the jobs the next `count` submits create (before the scheduler sees them).
  virtual void neverStartNextSubmits(int count, const std::string& reason) = 0;

  // Slurm's reads lie for `window` from now (zero or less ends it at once), as behind a
  // misrouted proxy or a backup slurmctld with stale state: GET /jobs/state/ answers 200 with
  // no jobs, GET /job/{id} a bare 404 (plain text: no Slurm JSON, no error number) and
  // GET /jobs/ a 502. Nothing else changes: submits, DELETEs and the other routes answer
  // truly, and the jobs go on running. The lie comes before the token check, as a proxy's.
  virtual void lieAboutReads(std::chrono::milliseconds window) = 0;
  // The next `count` jobs to start find their attempt's claim uncreatable: just before the
  // batch script runs, the simulator puts a directory (or, with `as_dangling_link`, a symbolic
  // link to nowhere) at `claim` beside the job's standard output (TunePlane's logs/claim), as a
  // filesystem that refuses the create (EACCES, EDQUOT, ESTALE) would leave it. TunePlane's
  // script then exits 72 having run nothing. A job whose output has no directory is left alone
  // (and still counts).
  virtual void makeNextClaimsUncreatable(int count, bool as_dangling_link) = 0;

  // Forgets `job` (every component of a het job) as soon as it has ended and its epilog is
  // done — at once when it already has — as if MinJobAge were 0 for it: a job purged from
  // slurmctld's memory before its owner saw it end. Its numeric id may then be reused
  // (restart()). `job`: numeric id or SLUID.
  virtual Status purgeJob(const std::string& job) = 0;
  // Every job the simulator ever created, purged ones included, oldest first (the admin
  // route GET /sim/admin/jobs): the ground truth of fault tests. Each entry: "job_id" (the
  // leader's), "sluids" (every SLUID it had: a requeue gives a new one), "comment",
  // "components", "starts" (how many times its batch script was started), "runs" (one
  // object per start: "restart_cnt" at that start, then "exit_code" or "signal" once its
  // script ended), "state" (base state, ",COMPLETING" while the epilog runs), "purged".
  virtual nlohmann::json history() const = 0;

  // Numeric ids of the jobs the simulator holds (tests use it to wait for purges).
  virtual size_t jobCount() const = 0;
};

}  // namespace tuneplane::sim
