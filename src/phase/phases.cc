#include "phase/phases.h"

#include <array>
#include <utility>

namespace tuneplane::phase {
namespace {

// One table per enum: the stored string of every value. Adding a value means adding a row;
// the tests check that every value has exactly one string and parses back to itself.
constexpr std::array<std::pair<JobPhase, std::string_view>, 13> kJobPhases{{
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

constexpr std::array<std::pair<AttemptPhase, std::string_view>, 13> kAttemptPhases{{
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

constexpr std::array<std::pair<EndCause, std::string_view>, 9> kEndCauses{{
    {EndCause::kNone, "none"},
    {EndCause::kUser, "user"},
    {EndCause::kInfrastructure, "infrastructure"},
    {EndCause::kPreempted, "preempted"},
    {EndCause::kCancelled, "cancelled"},
    {EndCause::kExternalCancel, "external_cancel"},
    {EndCause::kRejected, "rejected"},
    {EndCause::kAbandoned, "abandoned"},
    {EndCause::kUnobserved, "unobserved"},
}};

template <typename Enum, std::size_t N>
std::string_view nameOf(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";  // unreachable while every enumerator has a row
}

template <typename Enum, std::size_t N>
std::optional<Enum> valueOf(const std::array<std::pair<Enum, std::string_view>, N>& table,
                            std::string_view text) {
  for (const auto& [v, name] : table) {
    if (name == text) return v;
  }
  return std::nullopt;
}

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
  return nameOf(kJobPhases, phase);
}
std::string_view toString(AttemptPhase phase) {
  return nameOf(kAttemptPhases, phase);
}
std::string_view toString(EndCause cause) {
  return nameOf(kEndCauses, cause);
}

std::optional<JobPhase> parseJobPhase(std::string_view text) {
  return valueOf(kJobPhases, text);
}
std::optional<AttemptPhase> parseAttemptPhase(std::string_view text) {
  return valueOf(kAttemptPhases, text);
}
std::optional<EndCause> parseEndCause(std::string_view text) {
  return valueOf(kEndCauses, text);
}

}  // namespace tuneplane::phase
