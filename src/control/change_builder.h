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
  store::JobRecord& job() { return job_; }
  // The attempt with this number as it will be stored (a copy, added to the change).
  // REQUIRES: it exists in the view or was added.
  store::AttemptRecord& attempt(int number);
  // Replaces the attempt with `observed` (same number) in the change, all but its phase:
  // phases move only through moveAttempt.
  void putAttempt(const store::AttemptRecord& observed);
  // A new attempt, with its creation event.
  store::AttemptRecord& addAttempt(store::AttemptRecord attempt, std::string reason);

  // Phase moves; each records an event (none when the phase stays). The reason is kept on
  // the record either way.
  void moveJob(store::JobPhase to, std::string reason, const std::string& actor = kReconcilerActor);
  void moveAttempt(int number, store::AttemptPhase to, std::string reason,
                   const std::string& actor = kReconcilerActor);

  // Errors: "control.illegal_transition" naming every refused move.
  Result<store::Change> build() const;

 private:
  const store::JobView& view_;
  int64_t now_ms_;
  store::JobRecord job_;
  std::vector<store::AttemptRecord> attempts_;  // touched or new
  std::vector<store::EventRecord> events_;
  std::vector<std::string> refused_;
};

}  // namespace tuneplane::control
