// The Reconciler: TunePlane's control loop, one synchronous tick() at a time. Each tick
// moves every active job one step through the state machine (state_machine.h): the step is
// the pure function of job_step.h, which takes the stored view, this cycle's facts and the
// attempt's typed memory and returns a plan; the reconciler only gathers the facts the plan
// asks for and carries the plan out, committing each decision atomically before the next
// network call that depends on it. The thread that calls tick() every poll interval is
// ControlLoop's (control_loop.h); tests call tick() by hand with a FakeClock.
//
// What it reads from the store: the active jobs once, then only those written since
// (JobStore::activeJobsSince, by change sequence), so a steady cycle reads nothing; a full
// read again after a change of the lease's epoch and every kFullReadIntervalMs. Every write
// carries the job's version and the epoch it was read under (store::Change), and the store
// refuses one built from a stale read.
//
// The submit protocol, per attempt (each arrow a durable commit):
//   attempt + submit token (Staging) → stage jobs/<id>/attempts/<n>/ → Submitting →
//   POST job/submit → numeric id (Submitted) → GET /job/<id>, comment == token →
//   every component's SLUID; from then on the SLUIDs only.
// A Submitting attempt found at the start of a tick was interrupted (TunePlane stopped
// mid-submit, or the commit after the answer failed): it becomes SubmitUnknown. A lost
// receipt is looked for by its token in one `GET /jobs/` per cycle that serves every
// attempt looking, on a backoff, until found (adopted, whatever its state) or proven absent
// by Slurm's listing (then submitted again as the same attempt; job_step.h). A failed
// listing concludes nothing.
//
// Polling, per cycle: one `GET /jobs/state/` for the numeric ids of every tracked
// component, then `GET /job/{sluid}` only for jobs whose state changed or vanished, that
// this process has not yet verified by SLUID, or whose slow refresh is due — or one
// `GET /jobs/` instead when more than listing_threshold need it. Every record is matched
// by SLUID, never by numeric id, so an id Slurm reused is never taken for ours. A job
// Slurm no longer knows — its "invalid job id" for the SLUID and a listing without the
// token — is judged from its sentinels after kMissingPollsToJudge such cycles.
// Every per-tick budget is bounded, so no slow job or burst holds the loop.
//
// Launching, per cycle: the attempts to stage and submit (new ones, and Staging ones whose
// resend is due; at most max_submits_per_tick) are collected first, then run on the launch
// stage (launch_stage.h): up to submit-concurrency attempts at once, each on its own
// slurmrestd connection and each through the whole protocol above in order, up to reading
// its receipt back; the SLUIDs are then settled on the loop's thread. A crash at any point
// leaves each attempt at one of the protocol's durable steps, which the next run resumes
// exactly as it would for one attempt alone. When attempts were left for later (the budget,
// or the stage backing off), the tick says so (TickReport::relaunch_in_ms) and ControlLoop
// ticks again that soon instead of waiting out the poll interval.
//
// Thread-safety: one thread calls tick(); the store may be written by others (cancel,
// abandon requests) at the same time. The launch tasks run on the stage's threads: they
// write through the store's own calls (thread-safe), count into their own tally, and touch
// none of the per-process memory below.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "control/control_observer.h"
#include "control/decisions.h"
#include "control/job_step.h"
#include "control/launch_stage.h"
#include "control/status_mapping.h"
#include "pipeline/attempt_launcher.h"
#include "slurm/slurm_client.h"
#include "spec/job_spec.h"
#include "store/job_store.h"

namespace tuneplane::control {

// The durable steps of the submit protocol, for the step hook (crash tests stop the
// process right after one of them).
enum class SubmitStep {
  kAttemptDurable,     // the attempt row with its token is committed
  kStaged,             // its directory is staged (or loaded)
  kSubmittingDurable,  // Submitting is committed; the POST is next
  kSubmitAnswered,     // slurmrestd answered the POST; nothing stored yet
  kReceiptDurable,     // the numeric id is committed
  kSluidsDurable,      // the SLUIDs (and the first state) are committed
};
std::string_view toString(SubmitStep step);
std::optional<SubmitStep> parseSubmitStep(std::string_view text);

struct ReconcilerOptions {
  // How often ControlLoop ticks; also spreads the slow refresh over ticks.
  std::chrono::milliseconds poll_interval{10'000};
  // Every tracked job is re-read by SLUID at least this often, even when its state
  // stayed the same (a numeric id reused with the same state would otherwise go unseen).
  std::chrono::milliseconds full_refresh_interval{3'600'000};
  int max_submits_per_tick = 256;  // attempts staged and submitted in one tick
  // The launch stage's connections to slurmrestd, one per attempt in flight (launch_stage.h;
  // serve: server.submit_concurrency). Empty: the reconciler's own client, one at a time.
  std::vector<slurm::SlurmClient*> launch_clients;
  LaunchStageOptions launch_stage;
  int max_fetches_per_tick = 256;  // GET /job/{sluid} in one tick; the rest wait
  int listing_threshold = 64;      // more fetches than this → one GET /jobs/ instead
  // Called after each SubmitStep (tests only).
  std::function<void(SubmitStep, const std::string& job_id, int attempt)> step_hook;
  // Told of every stored transition and submit receipt (control_observer.h); nullptr: the
  // transitions are logged as text lines. Must outlive the reconciler.
  ControlObserver* observer = nullptr;
};

// What one tick did (tests and benchmarks).
struct TickReport {
  int jobs = 0;           // active jobs seen
  int submits = 0;        // POST job/submit sent
  int listings = 0;       // GET /jobs/ (lost receipts, or many fetches at once)
  int state_queries = 0;  // GET /jobs/state/ calls (the client splits long id lists)
  int fetches = 0;        // GET /job/{id|sluid}
  int cancels = 0;        // DELETE /job/{sluid}
  int commits = 0;        // store commits
  int errors = 0;         // failed store or Slurm calls (logged)
  bool stopped = false;   // the stop token ended the tick early
  // Attempts left to launch: -1 none; 0 tick again at once (the per-tick budget was used);
  // > 0 in this many ms (the launch stage backs off after an overload).
  int64_t relaunch_in_ms = -1;
};

class Reconciler {
 public:
  // REQUIRES: every collaborator outlives the reconciler.
  Reconciler(store::JobStore& store, slurm::SlurmClient& slurm, pipeline::AttemptLauncher& launcher,
             const Clock& clock, ReconcilerOptions options = {});

  // One pass over every active job. Returns between two store writes when `stop` is
  // requested, never in the middle of one.
  TickReport tick(std::stop_token stop = {});

  const ReconcilerOptions& options() const { return options_; }
  const LaunchStage& launchStage() const { return *stage_; }

  // A full read of the active jobs at least this often (ms of the steady clock), whatever
  // the change sequence says: a guard, not a need.
  static constexpr int64_t kFullReadIntervalMs = 600'000;

 private:
  // One attempt's launch on the launch stage: its task's own counts and what the loop's
  // thread finishes afterwards.
  struct Launch {
    store::JobView view;
    bool fresh = false;  // Pending or Retrying: a new attempt first; else the Staging one
    TickReport tally;    // the task's counts, added to the tick's once it is done
    std::optional<store::JobView> submitted;  // receipt stored: settled on the loop's thread
    std::optional<slurm::SlurmResult<std::vector<slurm::JobRecord>>> records;  // GET /job/<id>
    // Nodes to keep out of a new stage (node → why): the job's earlier attempts' failures and
    // the site's quarantine (decisions.h, nodesToAvoid; pipeline/node_exclusion.h).
    std::map<std::string, std::string> avoid;
  };
  // An active job as last read from the store, with its spec's retry policy once parsed.
  struct Known {
    store::JobView view;
    std::optional<spec::RetryPolicy> retry;
  };
  using AttemptKey = std::pair<std::string, int>;  // (job id, attempt number)

  // reconciler.cc: the store's side — the known jobs, commits — and the step's driver.
  bool refreshKnown(TickReport& report);
  // Runs the step on `view` to a decision, gathering what it asks for, then carries the plan
  // out. `polled`: the poll's step (stepPolled).
  struct Driven {
    bool follow = false;                  // the attempt is followed in this cycle's poll
    std::optional<store::JobView> after;  // the view after the plan's write, when it wrote
  };
  Driven drive(const store::JobView& view, JobFacts facts, bool polled);
  void gather(const store::JobView& view, const StepPlan& plan, JobFacts& facts);
  // slurm.failed_node_quarantine: the nodes the attempt that `after` ended (and `before` had
  // not) failed on, into quarantine_.
  void quarantineFailedNodes(const store::JobView& before, const store::JobView& after);
  StepSettings settingsFor(const store::JobView& view);
  bool commit(const store::JobView& view, const Result<store::Change>& change, const char* what);
  // Commits at once (never batched), counting into `tally`: the launch tasks' way.
  bool commitNow(TickReport& tally, const store::JobView& view, const Result<store::Change>& change,
                 const char* what);
  // While batching, commit() queues; flushBatch() writes the queue in one transaction
  // (JobStore::commitAll: one fsync for a whole poll cycle instead of one per job); with
  // `synced` false, without waiting for a sync (store::Change::synced). A change refused as
  // stale is left out (its job is read again next cycle). False when the transaction failed
  // (nothing of the batch was written).
  bool flushBatch(bool synced = true);
  std::optional<store::JobView> reload(const std::string& job_id, TickReport* tally = nullptr);
  void hook(SubmitStep step, const store::JobView& view, int attempt);
  void reportEvents(const store::Change& change);
  static AttemptKey key(const store::AttemptRecord& attempt) {
    return {attempt.job_id, attempt.number};
  }

  // reconciler_submit.cc: the submit protocol. The launches collected by the steps run on the
  // stage; startAttempt and stageAndSubmit run inside a task (any thread).
  void queueLaunch(store::JobView view, bool fresh);
  void runLaunches();
  void startAttempt(Launch& launch, slurm::SlurmClient& slurm);
  // `parsed`: the job's spec when the caller parsed it already (else parsed from the view).
  void stageAndSubmit(Launch& launch, store::JobView view, slurm::SlurmClient& slurm,
                      const spec::PartialSpec* parsed = nullptr);
  // Submitting is committed, or — its commit's answer lost — found stored by a re-read.
  std::optional<store::JobView> commitSubmitting(TickReport& tally, const store::JobView& view,
                                                 int number,
                                                 const std::vector<std::string>& notes = {});

  // reconciler_track.cc: polling, the lookup by token, cancel.
  void poll(const std::vector<const store::JobView*>& tracked, std::stop_token stop);
  // The records carrying `token` in this tick's listing, of `job`'s Slurm user only (its
  // run_as, else the site's slurm.user): any user can put a token on a job of theirs
  // (nullopt: no listing).
  std::optional<std::vector<slurm::JobRecord>> byToken(const std::string& token,
                                                       const store::JobRecord& job);
  // The client for requests about `job`'s Slurm jobs: as its user (slurm.identity per_user),
  // else the service's own.
  slurm::SlurmClient& slurmFor(const store::JobRecord& job) { return slurm_.as(job.run_as); }
  // Sends one DELETE, as the job's user, and says what Slurm answered.
  CancelHeard cancelOne(const std::string& job_id, const std::string& run_as,
                        const std::string& sluid);
  void retryStrayCancels();
  // A Releasing attempt that still has het survivors or a requeued job to cancel: read and
  // acted on every cycle until Slurm confirms each ended.
  bool mustCancelMore(const store::JobView& view) const;
  int64_t unrunnableGraceMs() const;
  const slurm::JobListing* listing();
  std::string listingError() const;

  store::JobStore& store_;
  slurm::SlurmClient& slurm_;
  pipeline::AttemptLauncher& launcher_;
  const Clock& clock_;
  ReconcilerOptions options_;

  std::unique_ptr<LaunchStage> stage_;

  // The active jobs as last read, in the store's order (created_ms, id), and the change
  // sequence and lease epoch they were read through.
  std::map<std::pair<int64_t, std::string>, Known> known_;
  std::unordered_map<std::string, int64_t> created_of_;  // job id → created_ms (known_'s key)
  int64_t known_through_seq_ = 0;
  int64_t known_epoch_ = -1;  // -1: never read
  int64_t last_full_read_ms_ = 0;

  // Per tick.
  int64_t now_ = 0;               // the wall clock: what is stored
  int64_t steady_now_ = 0;        // Clock::steadyMs: deadlines held in memory (clock.h says why)
  int64_t epoch_ = 0;             // the lease's epoch this tick read under (store::Change)
  std::vector<Launch> launches_;  // collected by the steps, run by runLaunches()
  std::stop_token stop_;
  bool batching_ = false;
  std::vector<store::Change> batch_;
  TickReport report_;
  std::optional<slurm::SlurmResult<slurm::JobListing>> listing_;  // at most one GET /jobs/ per tick
  // listing_'s records by submit token (comments that are tokens only), built at the first
  // lookup by token of the tick; byToken keeps those of the job's own user.
  std::optional<std::unordered_map<std::string, std::vector<slurm::JobRecord>>> by_token_;

  // Per process: the typed memory of each current attempt (job_step.h), and duplicates
  // (SLUID → job id) whose DELETE Slurm has not heard yet, sent again every cycle.
  std::map<AttemptKey, AttemptMemory> memory_;
  std::map<std::string, std::pair<std::string, std::string>> stray_cancels_;  // → (job, run_as)
  // slurm.failed_node_quarantine: nodes an attempt of any job failed on, kept out of every
  // new stage until (Clock::steadyMs) — with why. Read and written on the loop's thread only
  // (the launch tasks get a copy in their Launch).
  std::map<std::string, std::pair<int64_t, std::string>> quarantine_;
};

}  // namespace tuneplane::control
