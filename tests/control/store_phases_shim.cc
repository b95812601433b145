// TEMPORARY: the functions of store/phases.h, for the control tests while src/store has no
// implementation on this branch. tests/CMakeLists.txt compiles this file only when
// src/store/phases.cc does not exist; delete it once the store is merged.
#include <array>
#include <utility>

#include "store/phases.h"

namespace tuneplane::store {
namespace {

template <typename E, size_t N>
std::string_view nameOf(const std::array<std::pair<E, std::string_view>, N>& names, E value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return "?";
}
template <typename E, size_t N>
std::optional<E> parse(const std::array<std::pair<E, std::string_view>, N>& names,
                       std::string_view text) {
  for (const auto& [e, name] : names) {
    if (name == text) return e;
  }
  return std::nullopt;
}

constexpr std::array<std::pair<JobPhase, std::string_view>, 13> kJob = {{
    {JobPhase::kPending, "Pending"},
    {JobPhase::kStaging, "Staging"},
    {JobPhase::kSubmitting, "Submitting"},
    {JobPhase::kSubmitUnknown, "SubmitUnknown"},
    {JobPhase::kQueued, "Queued"},
    {JobPhase::kRunning, "Running"},
    {JobPhase::kReleasing, "Releasing"},
    {JobPhase::kRetrying, "Retrying"},
    {JobPhase::kCancelling, "Cancelling"},
    {JobPhase::kUnknown, "Unknown"},
    {JobPhase::kSucceeded, "Succeeded"},
    {JobPhase::kFailed, "Failed"},
    {JobPhase::kCancelled, "Cancelled"},
}};
constexpr std::array<std::pair<AttemptPhase, std::string_view>, 13> kAttempt = {{
    {AttemptPhase::kStaging, "Staging"},
    {AttemptPhase::kSubmitting, "Submitting"},
    {AttemptPhase::kSubmitUnknown, "SubmitUnknown"},
    {AttemptPhase::kSubmitted, "Submitted"},
    {AttemptPhase::kQueued, "Queued"},
    {AttemptPhase::kRunning, "Running"},
    {AttemptPhase::kReleasing, "Releasing"},
    {AttemptPhase::kCancelling, "Cancelling"},
    {AttemptPhase::kUnknown, "Unknown"},
    {AttemptPhase::kSucceeded, "Succeeded"},
    {AttemptPhase::kFailed, "Failed"},
    {AttemptPhase::kCancelled, "Cancelled"},
    {AttemptPhase::kAbandoned, "Abandoned"},
}};
constexpr std::array<std::pair<EndCause, std::string_view>, 8> kCause = {{
    {EndCause::kNone, "none"},
    {EndCause::kUser, "user"},
    {EndCause::kInfrastructure, "infrastructure"},
    {EndCause::kCancelled, "cancelled"},
    {EndCause::kExternalCancel, "external_cancel"},
    {EndCause::kRejected, "rejected"},
    {EndCause::kAbandoned, "abandoned"},
    {EndCause::kUnobserved, "unobserved"},
}};

}  // namespace

bool isTerminal(JobPhase phase) {
  return phase == JobPhase::kSucceeded || phase == JobPhase::kFailed ||
         phase == JobPhase::kCancelled;
}
bool isTerminal(AttemptPhase phase) {
  return phase == AttemptPhase::kSucceeded || phase == AttemptPhase::kFailed ||
         phase == AttemptPhase::kCancelled || phase == AttemptPhase::kAbandoned;
}
std::string_view toString(JobPhase phase) {
  return nameOf(kJob, phase);
}
std::string_view toString(AttemptPhase phase) {
  return nameOf(kAttempt, phase);
}
std::string_view toString(EndCause cause) {
  return nameOf(kCause, cause);
}
std::optional<JobPhase> parseJobPhase(std::string_view text) {
  return parse(kJob, text);
}
std::optional<AttemptPhase> parseAttemptPhase(std::string_view text) {
  return parse(kAttempt, text);
}
std::optional<EndCause> parseEndCause(std::string_view text) {
  return parse(kCause, text);
}

}  // namespace tuneplane::store
