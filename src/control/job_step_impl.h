// Internals of the step of job_step.h, for the files that hold it and no other: Step, one
// job's step with the plan it builds, and what its phases share. Each path follows one attempt
// phase; every branch that needs a fact asks for it and returns, so a branch only ever decides
// from facts it holds. The dispatch and the facts a branch asks for are job_step.cc's; the
// submit and its receipt step_submit.cc's; the cancel step_cancel.cc's; a tracked attempt
// observed and settled step_track.cc's.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "control/job_step.h"

namespace tuneplane::control::detail {

using phase::AttemptPhase;

// A DELETE that Slurm heard is sent again only when the component still runs this long after.
inline constexpr int64_t kCancelRecheckMs = 60'000;

// True when a component no longer runs or waits (nothing left for a DELETE to stop).
bool hasEnded(const store::ComponentRecord& c);

// Where one DELETE stands in this cycle (Step::deleteOf).
enum class Delete {
  kAsked,    // no answer yet: asked for; it goes out before the step runs again
  kHeard,    // Slurm took it, or said the job is already completing
  kGone,     // Slurm holds no such job, taken as heard (gone_is_heard)
  kUnheard,  // no answer, a refusal, or "no such job" not taken as heard: sent again later
};

// One job's step, with the plan it builds. The methods follow the attempt's phase.
class Step {
 public:
  Step(const store::JobView& view, const JobFacts& facts, const AttemptMemory& memory,
       const StepSettings& settings, int64_t now_ms, int64_t steady_ms)
      : view_(view),
        facts_(facts),
        settings_(settings),
        now_(now_ms),
        steady_(steady_ms),
        stored_(view.attempts.empty() ? nullptr : &view.attempts.back()) {
    plan_.memory = memory;
  }

  // The step of stepJob (job_step.h): one branch per stored attempt phase.
  StepPlan run();
  // The step of stepPolled: a tracked attempt, from this cycle's read.
  StepPlan runPolled();

 private:
  void write(Result<store::Change> change, const char* what) {
    plan_.write = std::move(change);
    plan_.what = what;
  }

  // --- the submit and its receipt (step_submit.cc)
  void nextAttempt();
  void receipt();
  void lostReceipt();
  void adoptFound(const char* what);

  // --- the cancel (step_cancel.cc)
  void cancel();
  void cancelAgain();
  std::vector<std::string> cancelDuplicatesUnheard(const TokenChoice& choice);
  bool cancelDuplicates(const TokenChoice& choice);
  Delete deleteOf(const std::string& sluid, bool gone_is_heard = true);
  // Heard (or gone, where that counts): remembered, so it is not sent again for a while.
  static bool heard(Delete d) { return d == Delete::kHeard || d == Delete::kGone; }

  // --- a tracked attempt, observed and settled (step_track.cc)
  void track();
  void vanished(const store::AttemptRecord& observed);
  void judgeMissing(const store::AttemptRecord& observed);
  void settle(const store::AttemptRecord& observed, AttemptVerdict verdict, const char* what);
  void noteFollowedByNumericId(const store::AttemptRecord& observed);
  AttemptVerdict verdictFor(const store::AttemptRecord& observed);

  // --- the facts a branch asks for (job_step.cc)
  bool choose(TokenChoice& choice);
  bool tokenAnswered();
  bool filesRead();
  bool accountingRead();

  const store::JobView& view_;
  const JobFacts& facts_;
  const StepSettings& settings_;
  const int64_t now_;
  const int64_t steady_;
  const store::AttemptRecord* stored_;
  StepPlan plan_;
};

}  // namespace tuneplane::control::detail
