// The reconciler's decisions: pure functions from (what the store holds about a job, what
// Slurm or the attempt's files said, now) to the one store::Change that records the outcome
// — phase moves with their events, reasons for people, retry or final. No I/O: the
// reconciler (reconciler.h) gathers the facts, calls one of these, and commits the result.
// Every function checks its moves against the state machine (ChangeBuilder) and fails with
// "control.illegal_transition" rather than produce a change that breaks it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attempt/attempt_files.h"
#include "attempt/log_tail.h"
#include "common/result.h"
#include "control/status_mapping.h"
#include "slurm/job_record.h"
#include "slurm/rest_error.h"
#include "slurm/slurmdb_jobs.h"
#include "spec/job_spec.h"
#include "store/job_store.h"

namespace tuneplane::control {

// Consecutive polls in which Slurm has no record of a job before it is judged from its
// sentinels. One empty answer proves nothing: a finished job leaves slurmctld's memory after
// MinJobAge (default 300 s), a requeued one comes back under a new SLUID, and a job that
// "disappears" is not a job that finished.
inline constexpr int kMissingPollsToJudge = 3;

// How a failed POST job/submit is handled, from the client's typed error:
//   kResend  — it provably never reached Slurm's decision (not sent; a token or auth
//              problem before the request was read; bad client options): staged again
//              and resent after resendDelay();
//   kLookUp  — it may have made the job (a timeout after sending, a reset, a 5xx): a lost
//              receipt, looked for by its token;
//   kRefused — Slurm answered no: the attempt fails (cause rejected, never retried).
//   (An HTTP 429 — too many requests — is kResend: the server refused it before reading it.)
enum class SubmitFailure { kResend, kLookUp, kRefused };
inline constexpr int kHttpTooManyRequests = 429;
SubmitFailure classifySubmitFailure(const slurm::SlurmError& error);

// Whether a staging (or launch check) failure may pass if tried again — the filesystem
// (staging::codes::kIo) or an unreadable artifact — rather than a refusal for good.
bool stagingMayPass(const Errors& errors);

// Which tracked jobs one poll cycle reads by SLUID, and why. Changed (its state in
// `/jobs/state/` differs, or it is missing there) and must-act (a Releasing attempt with
// survivors or a requeued job to cancel; a job waiting past the unrunnable grace) come
// first, then jobs this process has not verified yet, then the oldest slow refreshes — at
// most 1 + jobs × poll_interval / full_refresh_interval of those per cycle, which spreads
// them over the refresh interval. More reads than listing_threshold become one `GET /jobs/`.
enum class FetchReason { kNone, kChanged, kMustAct, kUnverified, kRefresh };
struct FetchNeed {
  FetchReason why = FetchReason::kNone;  // kNone, kChanged or kMustAct from the caller
  std::optional<int64_t> verified_ms;    // last read by SLUID in this process (Clock::steadyMs)
};
struct FetchLimits {
  int64_t poll_interval_ms = 10'000;
  int64_t full_refresh_interval_ms = 3'600'000;
  int listing_threshold = 64;
};
struct FetchPlan {
  std::vector<std::pair<size_t, FetchReason>> fetch;  // index into the needs, in read order
  bool use_listing = false;
};
FetchPlan planFetches(const std::vector<FetchNeed>& needs, int64_t now_ms,
                      const FetchLimits& limits);

// True when `change` (a decision over `view`) would store nothing new: no event, the one
// attempt it touches equal to the stored current attempt, the job's phase and reason as
// stored. A slow refresh that found nothing new is not written (no fsync per job per hour).
bool isNoOp(const store::Change& change, const store::JobView& view);

// The attempt a job is on (its last one); nullptr before the first.
const store::AttemptRecord* currentAttempt(const store::JobView& view);

// A new attempt (Staging, with its durable submit token and staging dir, one component per
// pool): the job leaves Pending or Retrying for Staging.
Result<store::Change> beginAttempt(const store::JobView& view, int number,
                                   const std::string& submit_token, const std::string& staging_dir,
                                   const std::vector<std::string>& pools, int64_t now_ms);

// The job ends before anything was submitted: cancel requested while Pending, Retrying, or
// with its attempt still Staging.
Result<store::Change> cancelBeforeSubmit(const store::JobView& view, int64_t now_ms);

// The submit intent is durable: the request may leave as soon as this is committed. `notes`:
// what the stage decided for people (nodes kept out, or why not), added to the reason.
Result<store::Change> markSubmitting(const store::JobView& view, int number, int64_t now_ms,
                                     const std::vector<std::string>& notes = {});

// Retries that learn: the nodes the job's ended attempts failed on through no fault of the
// job's (node → why, for the event): every node of a component that ended NODE_FAIL, and the
// batch host of a script that stopped on the node's trouble (the image unreadable or not as
// registered, no address or no Ray head there, its claim or fence unreadable). A Ray node that
// never joined (exit 67) is not named: the script does not say which one it was.
std::map<std::string, std::string> nodesToAvoid(const store::JobView& view);

// The submit provably never reached slurmrestd (`not_sent`, or a refused token), or staging
// failed for a reason that may pass (I/O): the attempt is (back) in Staging and tried
// again after resendDelay().
Result<store::Change> deferSubmit(const store::JobView& view, int number, const std::string& why,
                                  int64_t now_ms);

// The submit may have reached Slurm (lost receipt, or TunePlane stopped mid-submit): the
// attempt looks for its job by submit token from the next cycle on.
Result<store::Change> markSubmitUnknown(const store::JobView& view, int number,
                                        const std::string& why, int64_t now_ms);

// The receipt: Slurm's numeric id, stored before anything else is asked.
Result<store::Change> markSubmitted(const store::JobView& view, int number, uint64_t job_id,
                                    int64_t now_ms);

// Nothing runs and nothing will: Slurm refused the submit, or the launch no longer passes
// the site's rules. The attempt and the job fail with `cause` (never retried).
Result<store::Change> markRefused(const store::JobView& view, int number, phase::EndCause cause,
                                  const std::string& why, int64_t now_ms);

// What a submit that failed with `error` changes (classifySubmitFailure): back to Staging to
// be sent again, a lost receipt looked for by its token, or refused for good. `what` names
// the change in the log. REQUIRES: `submitting` holds attempt `number` in Submitting.
struct FailedSubmit {
  Result<store::Change> change;
  const char* what;
};
FailedSubmit afterFailedSubmit(const store::JobView& submitting, int number,
                               const slurm::SlurmError& error, int64_t now_ms);

// A commit of Submitting whose answer was lost (the connection cut as COMMIT went out) may
// have been stored: whether `stored`, read again, is that very commit — attempt `number` in
// Submitting at `now_ms`, and the job one version past `before` at `now_ms` — so the POST
// may go out as if the commit had answered. Anything else (another writer, an older state)
// is not ours: the next cycle decides.
bool isOurLostSubmittingCommit(const store::JobView& before, const store::JobView& stored,
                               int number, int64_t now_ms);

// A lookup by token did not find the job: look again after lookupDelay(), say so.
Result<store::Change> markLookupMiss(const store::JobView& view, int number, int64_t now_ms);

// A lost receipt whose token Slurm's listing proved absent `lookups` times, long enough after
// the submit, and that left no trace on the node: the submit made no job. The attempt goes
// back to Staging and is submitted again as itself — same token, same directory — so that if
// the first copy exists after all, the claim lets one of them run. Cancelled instead when a
// cancel was requested (nothing runs).
Result<store::Change> markNeverSubmitted(const store::JobView& view, int number, int lookups,
                                         int64_t now_ms);

// `first` then `second` (a decision made on the view after `first`), as one change: the
// attempts `second` touches replace `first`'s, the events follow one another, and the job
// record is `second`'s at `first`'s version (the one the store compares).
store::Change mergeChanges(const store::Change& first, const store::Change& second);

// An operator gave up on a lost receipt (recorded with who and why). Not retried: the
// original may still exist somewhere.
Result<store::Change> markAbandoned(const store::JobView& view, int number, int64_t now_ms);

// DELETE was sent for every component: Cancelling until Slurm reports the end.
Result<store::Change> markCancelSent(const store::JobView& view, int number, int64_t now_ms);

// The job fails before an attempt could be created (its stored spec no longer parses).
Result<store::Change> failJob(const store::JobView& view, const std::string& why, int64_t now_ms);

// Stores an observation that moves no phase (counters, components, reason).
Result<store::Change> recordObservation(const store::JobView& view,
                                        const store::AttemptRecord& observed, int64_t now_ms);

// Slurm had no record of the attempt's job this cycle (by SLUID, or by receipt id before
// the SLUIDs were known). Counts the miss; the caller judges from the sentinels once
// `missing_polls` reaches kMissingPollsToJudge.
store::AttemptRecord countMissing(store::AttemptRecord attempt);

// What the sentinels say about a job Slurm no longer knows: an exit sentinel gives the
// outcome, a start sentinel alone means it ran and ended unobserved, nothing means lost.
AttemptVerdict judgeFromSentinels(const attempt::AttemptSentinels& sentinels,
                                  bool cancel_requested);

// What slurmdbd recorded of an attempt slurmctld no longer knows: each component's run
// (by numeric id, and by SLUID where the records carry one — a requeue's earlier runs share
// the id; else, on v0.0.44, the last run whose working directory is the attempt's), rolled up
// as a poll's records are, the reason saying where it came from. nullopt when some component
// has no ended run there (no slurmdbd, or it has not recorded the end yet).
std::optional<AttemptVerdict> judgeFromAccounting(const store::AttemptRecord& attempt,
                                                  const std::vector<slurm::AccountingRun>& runs,
                                                  bool cancel_requested);

// Issue 11: a job that failed without its scheduler log could not write into logs/.
// `pools_without_log`: components whose logs/<pool>.out is missing.
AttemptVerdict noteMissingLogs(AttemptVerdict verdict,
                               const std::vector<std::string>& pools_without_log);

// Slurm's records of one job (a het job: one per component), matched to the attempt's
// components: by SLUID when `by_sluid` (polling; a reused numeric id is not ours), else by
// het offset (adopting a receipt or a job found by its token). Fills ids, SLUIDs, states.
// Returns false when a component has no record.
bool applyRecords(store::AttemptRecord& attempt, const std::vector<slurm::JobRecord>& records,
                  bool by_sluid);

// The Slurm jobs that carry one attempt's submit token (a lookup by token: a lost receipt,
// a restart, a requeued job found again). A POST that reached Slurm twice makes two; the
// attempt adopts exactly one record per het component — the job that claimed the attempt
// (`claimant`: the numeric id in logs/claim, the batch script's first act; the other copy ran
// nothing), else the earliest submitted (lowest submit_time, then lowest numeric id) — and
// every other record is a duplicate that must be cancelled by its SLUID (docs/decisions.md,
// "Two Slurm jobs with one token").
struct TokenChoice {
  std::vector<slurm::JobRecord> adopted;     // one per het offset, in offset order
  std::vector<slurm::JobRecord> duplicates;  // the rest, to cancel
  int duplicate_jobs = 0;                    // distinct Slurm jobs among the duplicates
  bool by_claim = false;                     // adopted because it claimed the attempt
  // For the event: which jobs carried the token, which was kept and what was cancelled.
  std::string describe(const std::vector<std::string>& not_cancelled) const;
};
TokenChoice chooseByToken(const std::vector<slurm::JobRecord>& records,
                          std::optional<uint64_t> claimant = std::nullopt);

// Whether a component of the attempt's Slurm job ended FAILED with kExitAlreadyClaimed — its
// script found the attempt claimed by another Slurm job with the same token (a doubled
// submit whose receipt named the copy that started second), which runs it — or with
// kExitCannotClaim, which another copy's claim may explain too: the token is looked up.
bool foundClaimedByAnother(const store::AttemptRecord& attempt);

// An ending verdict whose requeued Slurm job could not be cancelled yet: the attempt stays
// Releasing (it holds a job that could run again) and the cancel is sent again next cycle.
AttemptVerdict holdForCancel(AttemptVerdict verdict, const std::string& what);

// The attempt's job was found again under another SLUID than the one stored: Slurm requeued
// it (a requeue gives the job a new SLUID). `records` are the job as found by its token.
AttemptVerdict requeuedUnderNewSluid(const std::vector<slurm::JobRecord>& records);

// Whether Slurm requeued any of `records` before TunePlane held their SLUIDs (a receipt
// resolved, or a lost one found, after the requeue): TunePlane submits with requeue off, so a
// restart_cnt above 0 is a requeue (an administrator's, ForceRequeueOnFail): the job ran once
// already and must not run again.
bool requeuedAlready(const std::vector<slurm::JobRecord>& records);

// The SLUIDs of `records` that still wait or run.
std::vector<std::string> liveSluids(const std::vector<slurm::JobRecord>& records);

// An attempt held Releasing by holdForCancel for a job Slurm requeued under a new SLUID: it
// is Releasing, yet its stored components still wait or run and none failed (no other path
// leaves an attempt so). Read from the stored attempt alone, so a restarted process knows it
// too. Until Slurm confirms the requeued job's end its cancel is sent every cycle.
bool heldForRequeue(const store::AttemptRecord& stored);

// The verdict on such an attempt once Slurm is read again: still the requeue's
// infrastructure failure whatever the requeued job shows now (a run of the requeued job is
// never the attempt's own success); every component still waiting or running is to be
// cancelled (`requeued`).
AttemptVerdict stillRequeued(const std::vector<store::ComponentRecord>& observed);

// A Queued attempt that waited on an unrunnable reason (verdict.unrunnable) for `waited_ms`,
// past the site's grace: it is cancelled and fails with cause `rejected`, the reason in words.
AttemptVerdict rejectUnrunnable(const AttemptVerdict& queued, int64_t waited_ms);

// The attempt as observed (components updated) and its verdict (rollUp, or the sentinels'
// judgement) → phases, events, the end and a retry or the final outcome. `retry` is the
// job's spec.retry.
Result<store::Change> applyVerdict(const store::JobView& view, store::AttemptRecord observed,
                                   const AttemptVerdict& verdict, const spec::RetryPolicy& retry,
                                   int64_t now_ms);

}  // namespace tuneplane::control
