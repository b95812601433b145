// One job's step of the control loop, as a pure function: the stored view, what this cycle
// heard from Slurm and read from the attempt's files (with "no answer" a value of its own,
// distinct from Slurm's "no such job"), the typed memory this process keeps of the attempt,
// the site's settings and the time in; a plan out — more facts to gather first (a read by
// SLUID, the lookup by submit token, the attempt's files, DELETEs whose answers the decision
// waits for), or the decision: one write, the cancels to send after it, the launch to run,
// the memory to keep. The reconciler (reconciler.h) only gathers facts and carries out
// plans, calling the step again with what it gathered until the plan asks for nothing more.
//
// Exactly once, from evidence (docs/decisions.md, "Exactly once where faults meet"):
//   - an attempt is judged lost, and a token absent, only on Slurm's own word — its "invalid
//     job id" (error 2017) for the SLUID, and a listing that succeeded without the token;
//     no answer, a bare 404 or a failed listing concludes nothing this cycle;
//   - a next attempt is launched only once every earlier attempt's Slurm jobs have ended, or
//     a DELETE of each was heard by Slurm;
//   - a lost receipt whose token Slurm's listing proves absent is submitted again as the same
//     attempt (same token, same directory): the on-node claim lets one copy run, whatever
//     the control plane believed.
// Table-tested in tests/control/job_step_table_test.cc: no process, no sleep.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attempt/attempt_files.h"
#include "common/result.h"
#include "control/decisions.h"
#include "slurm/job_record.h"
#include "spec/job_spec.h"
#include "store/job_store.h"

namespace tuneplane::control {

// What one question to Slurm got this cycle.
enum class Heard {
  kNotAsked,  // not asked this cycle
  kNoAnswer,  // asked, and nothing that proves anything came back (a failure, a bare 404,
              // a listing that failed, an answer without the job and without Slurm's error)
  kNotFound,  // Slurm's own "invalid job id" (error 2017) for it
  kFound,     // records; for a token lookup possibly none: the listing succeeded without it
};
std::string_view toString(Heard heard);

struct SlurmAnswer {
  Heard heard = Heard::kNotAsked;
  std::vector<slurm::JobRecord> records;  // kFound
  std::string why;                        // kNoAnswer: the error, for the operator's log

  static SlurmAnswer noAnswer(std::string why) { return {Heard::kNoAnswer, {}, std::move(why)}; }
  static SlurmAnswer notFound() { return {Heard::kNotFound, {}, {}}; }
  static SlurmAnswer found(std::vector<slurm::JobRecord> records) {
    return {Heard::kFound, std::move(records), {}};
  }
};

// What a DELETE of one SLUID got this cycle.
enum class CancelHeard {
  kHeard,    // Slurm took it (or said the job is already completing)
  kGone,     // Slurm's "invalid job id": it holds no such job
  kUnheard,  // no answer, or a refusal: sent again later
};

// What this cycle learned of one job, gathered by the reconciler over the step's rounds.
struct JobFacts {
  // The current attempt's job: by SLUID (tracking; from this cycle's listing when that held
  // every component — one it lacks is not Slurm's word, and is read by SLUID), or by the
  // receipt's numeric id (Submitted).
  SlurmAnswer read;
  // The Slurm jobs carrying the current attempt's submit token in this cycle's listing, only
  // those of the site's Slurm user (another user can put any comment on a job of theirs).
  SlurmAnswer token;
  // The attempt's files, read when a step asks: the sentinels and logs/claim, and whether the
  // first component's scheduler log exists (a job that failed without it never ran there).
  std::optional<attempt::AttemptSentinels> sentinels;
  std::optional<bool> scheduler_log_missing;
  // slurmdbd's runs of the current attempt's jobs (every component's numeric id), read when a
  // step judges a job slurmctld no longer knows. Empty: the site has no slurmdbd (or it holds
  // none). `accounting_unanswered`: the read failed otherwise this cycle (nothing concluded).
  std::optional<std::vector<slurm::AccountingRun>> accounting;
  std::string accounting_unanswered;
  // The answers to this cycle's DELETEs, by SLUID.
  std::map<std::string, CancelHeard> cancels;
};

// What this process remembers of one attempt between cycles. A restart forgets it, and each
// field says why that is safe.
struct AttemptMemory {
  // When it was last read by SLUID (Clock::steadyMs). Forgotten: read again, once.
  std::optional<int64_t> verified_ms;
  // Whether it was read by SLUID in the cycle at `steady_ms`: an attempt the cycle found (a
  // receipt settled, a new attempt read back) whose memory is kept, and whose SLUIDs are known.
  bool verifiedIn(int64_t steady_ms) const { return verified_ms == steady_ms; }
  // Since when it has waited on a reason Slurm can never satisfy. Forgotten: the grace
  // starts again (never early).
  std::optional<int64_t> unrunnable_since_ms;
  // When a DELETE Slurm heard was last sent, by het index ("#<i>": a survivor) or by SLUID.
  // Forgotten: sent again (a DELETE is idempotent).
  std::map<std::string, int64_t> cancel_heard_ms;
  // A cancel found a SLUID Slurm no longer knows while the stored state waits or runs: read it
  // by SLUID next cycle (a requeue may have given it a new one). Forgotten: the slow refresh
  // reads it.
  bool must_read = false;

  bool operator==(const AttemptMemory&) const = default;
};

struct StepSettings {
  int64_t unrunnable_grace_ms = 300'000;  // slurm.unrunnable_grace
  spec::RetryPolicy retry;                // the job's spec.retry
};

// A DELETE the decision waits for. `gone_is_heard` false: Slurm's "no such job" is not taken
// as the end (a requeued job's SLUID changes; the job may pend under the new one).
struct CancelOrder {
  std::string sluid;
  bool gone_is_heard = true;
  bool operator==(const CancelOrder&) const = default;
};

// What a launch stage task does for a job (reconciler_submit.cc).
enum class LaunchKind {
  kNone,
  kFresh,   // a new attempt: Pending, or Retrying whose earlier attempts have all ended
  kResume,  // the Staging attempt: stage (or load) and submit it
};

struct StepPlan {
  // Facts to gather before the step can decide; the reconciler gathers them and steps again.
  bool read_sluid = false;       // GET /job/{sluid} of the current attempt's leader
  bool read_receipt = false;     // GET /job/{numeric id} of a receipt
  bool read_token = false;       // this cycle's listing, by submit token
  bool read_files = false;       // sentinels, logs/claim, the scheduler log
  bool read_accounting = false;  // slurmdbd's runs of the attempt's jobs (JobFacts::accounting)
  std::vector<CancelOrder> cancel_now;

  // The decision (when nothing more is asked for).
  std::optional<Result<store::Change>> write;  // none: nothing to store
  const char* what = "";                       // names the write in the log
  LaunchKind launch = LaunchKind::kNone;
  // DELETEs to send after the write: het survivors (keyed "#<index>" in the memory) and
  // copies; each is remembered once Slurm hears it, and sent again while it is not.
  std::vector<std::pair<std::string, std::string>> cancel_after;  // (memory key, SLUID)
  // SLUIDs of duplicates whose DELETE Slurm has not heard: sent again every cycle, whatever
  // becomes of the job, until it is heard.
  std::vector<std::string> strays;
  // A copy of a doubled submit was found and cancelled (for the metrics): how many.
  int duplicate_jobs = 0;
  std::string note;  // nothing was decided and why (no answer), for the log
  // stepJob: the attempt is followed in this cycle's poll (its SLUIDs are known).
  bool poll = false;
  AttemptMemory memory;

  bool needsFacts() const {
    return read_sluid || read_receipt || read_token || read_files || read_accounting ||
           !cancel_now.empty();
  }
};

// The step of a job at the start of a cycle: a new attempt, the submit protocol's next
// step, a lost receipt's lookup, a cancel; plan.poll when the attempt is followed by this
// cycle's poll. REQUIRES: `view` is an active job. `now_ms`: the wall clock (what is stored);
// `steady_ms`: Clock::steadyMs (what the memory holds).
StepPlan stepJob(const store::JobView& view, const JobFacts& facts, const AttemptMemory& memory,
                 const StepSettings& settings, int64_t now_ms, int64_t steady_ms);
// The step of a followed attempt that this cycle's poll chose to read (facts.read: from the
// listing, or not yet, and then the step asks for the read by SLUID).
StepPlan stepPolled(const store::JobView& view, const JobFacts& facts, const AttemptMemory& memory,
                    const StepSettings& settings, int64_t now_ms, int64_t steady_ms);

// The job view after `change` is stored (the job record and the attempts it carries replace
// the view's; the version is the one the store gives: one more).
store::JobView afterChange(const store::JobView& view, const store::Change& change);

// Lookups of a lost receipt that Slurm's listing answered without the token before the
// attempt is judged never to have reached Slurm and is submitted again, and how long after
// its submit at least (a submit slurmrestd was still handing to slurmctld when the client
// gave up would show by then).
inline constexpr int kLookupsBeforeResend = 3;
inline constexpr int64_t kResendSettleMs = 60'000;

}  // namespace tuneplane::control
