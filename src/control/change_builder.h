// ChangeBuilder: assembles one store::Change for one job from a decision — the job's new
// record, the attempts it touches and one event per phase move — and refuses any move the
// state machine (state_machine.h) does not allow, so an illegal decision is never stored.
// Pure (works on copies of what the store returned). Not thread-safe; one per decision.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "control/state_machine.h"
#include "store/job_store.h"

namespace tuneplane::control {

class ChangeBuilder {
 public:
  // REQUIRES: `view` outlives the builder.
  ChangeBuilder(const store::JobView& view, int64_t now_ms);

  int64_t now() const { return now_ms_; }
  const store::JobView& view() const { return view_; }
  // The job as it will be stored. Read-only: its phase moves only through moveJob, and the
  // only other field a decision writes has its own setter.
  const store::JobRecord& job() const { return job_; }
  void setNextAttempt(int64_t ms) { job_.next_attempt_ms = ms; }
  // A copy of the attempt with this number as it will be stored (a default record with
  // that number, and a refused build, when it exists neither in the view nor in the change).
  store::AttemptRecord attempt(int number) const;
  // Edits the attempt's fields (it joins the change) — all but its phase, which moves only
  // through moveAttempt: `edit(record)` gets a reference valid during the call only.
  template <typename Edit>
  void editAttempt(int number, Edit&& edit) {
    store::AttemptRecord& a = touch(number);
    const phase::AttemptPhase phase = a.phase;
    edit(a);
    a.phase = phase;
  }
  // Replaces the attempt with `observed` (same number) in the change, all but its phase.
  void putAttempt(const store::AttemptRecord& observed);
  // A new attempt, with its creation event.
  void addAttempt(store::AttemptRecord attempt, std::string reason);

  // Phase moves; each records an event (none when the phase stays). The reason is kept on
  // the record either way. A move the state machine does not allow is not made, and
  // build() then fails.
  void moveJob(phase::JobPhase to, std::string reason, const std::string& actor = kReconcilerActor);
  void moveAttempt(int number, phase::AttemptPhase to, std::string reason,
                   const std::string& actor = kReconcilerActor);

  // Errors: "control.illegal_transition" naming every refused move.
  Result<store::Change> build() const;

 private:
  // The attempt in the change (copied from the view on first touch). The reference is
  // never handed out past one call: a later touch may move the records.
  store::AttemptRecord& touch(int number);

  const store::JobView& view_;
  int64_t now_ms_;
  store::JobRecord job_;
  std::vector<store::AttemptRecord> attempts_;  // touched or new
  std::vector<store::EventRecord> events_;
  std::vector<std::string> refused_;
};

}  // namespace tuneplane::control
