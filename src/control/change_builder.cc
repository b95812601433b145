// See change_builder.h.
#include "control/change_builder.h"

#include <algorithm>

#include "control/error_codes.h"

namespace tuneplane::control {

ChangeBuilder::ChangeBuilder(const store::JobView& view, int64_t now_ms)
    : view_(view), now_ms_(now_ms), job_(view.job) {
  job_.updated_ms = now_ms;
}

store::AttemptRecord ChangeBuilder::attempt(int number) const {
  for (const auto* list : {&attempts_, &view_.attempts}) {
    for (const auto& a : *list) {
      if (a.number == number) return a;
    }
  }
  store::AttemptRecord missing;
  missing.number = number;
  return missing;
}

store::AttemptRecord& ChangeBuilder::touch(int number) {
  auto touched = std::find_if(attempts_.begin(), attempts_.end(),
                              [number](const auto& a) { return a.number == number; });
  if (touched != attempts_.end()) return *touched;
  for (const auto& a : view_.attempts) {
    if (a.number == number) {
      attempts_.push_back(a);
      return attempts_.back();
    }
  }
  // REQUIRES violated: an empty attempt makes the build refuse (no such phase move).
  refused_.push_back("attempt " + std::to_string(number) + " does not exist");
  attempts_.push_back(store::AttemptRecord{});
  attempts_.back().number = number;
  return attempts_.back();
}

void ChangeBuilder::putAttempt(const store::AttemptRecord& observed) {
  store::AttemptRecord& a = touch(observed.number);
  const phase::AttemptPhase phase = a.phase;  // phases move only through moveAttempt
  a = observed;
  a.phase = phase;
}

void ChangeBuilder::addAttempt(store::AttemptRecord attempt, std::string reason) {
  attempt.job_id = job_.id;
  attempt.created_ms = now_ms_;
  attempt.reason = reason;
  events_.push_back(makeEvent(job_.id, attempt.number, "", phase::toString(attempt.phase), now_ms_,
                              std::move(reason)));
  attempts_.push_back(std::move(attempt));
}

void ChangeBuilder::moveJob(phase::JobPhase to, std::string reason, const std::string& actor) {
  const phase::JobPhase from = job_.phase;
  if (from != to) {
    if (!allowed(from, to)) {
      refused_.push_back("job " + std::string(phase::toString(from)) + " → " +
                         std::string(phase::toString(to)));
      return;
    }
    events_.push_back(jobEvent(job_.id, from, to, now_ms_, reason, actor));
    job_.phase = to;
  }
  job_.reason = std::move(reason);
}

void ChangeBuilder::moveAttempt(int number, phase::AttemptPhase to, std::string reason,
                                const std::string& actor) {
  store::AttemptRecord& a = touch(number);
  const phase::AttemptPhase from = a.phase;
  if (from != to) {
    if (!allowed(from, to)) {
      refused_.push_back("attempt " + std::to_string(number) + " " +
                         std::string(phase::toString(from)) + " → " +
                         std::string(phase::toString(to)));
      return;
    }
    events_.push_back(attemptEvent(job_.id, number, from, to, now_ms_, reason, actor));
    if (phase::isTerminal(to)) a.ended_ms = now_ms_;
  }
  a.phase = to;
  a.reason = std::move(reason);
}

Result<store::Change> ChangeBuilder::build() const {
  if (!refused_.empty()) {
    std::string all;
    for (const auto& r : refused_) all += (all.empty() ? "" : "; ") + r;
    return fail(codes::kIllegalTransition, job_.id, "refused: " + all);
  }
  store::Change change;
  change.job = job_;
  change.attempts = attempts_;
  change.events = events_;
  return change;
}

}  // namespace tuneplane::control
