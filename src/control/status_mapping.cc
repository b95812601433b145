// The mapping tables of status_mapping.h.
#include "control/status_mapping.h"

#include <algorithm>
#include <array>

#include "slurm/script_renderer.h"

namespace tuneplane::control {
namespace {

using store::AttemptPhase;
using store::EndCause;

// Slurm 26.05's base states and flags (REFERENCE.md, "Job states"). UPDATE_DB is gone from
// 26.05 but older servers send it; it means nothing to us either way.
constexpr std::array<std::string_view, 12> kBaseStates = {
    "PENDING", "RUNNING",   "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
    "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY"};
constexpr std::array<std::string_view, 17> kFlags = {
    "LAUNCH_FAILED", "REQUEUED",  "REQUEUE_HOLD",  "SPECIAL_EXIT",  "RESIZING", "CONFIGURING",
    "COMPLETING",    "STOPPED",   "RECONFIG_FAIL", "POWER_UP_NODE", "REVOKED",  "REQUEUE_FED",
    "RESV_DEL_HOLD", "SIGNALING", "STAGE_OUT",     "EXPEDITING",    "UPDATE_DB"};

// What an ended base state means, before the flags.
struct Ending {
  std::string_view base;
  AttemptPhase outcome;
  EndCause cause;
  std::string_view reason;
};
constexpr std::array<Ending, 9> kEndings = {{
    {"COMPLETED", AttemptPhase::kSucceeded, EndCause::kNone, "completed"},
    {"FAILED", AttemptPhase::kFailed, EndCause::kUser, "failed"},
    {"OUT_OF_MEMORY", AttemptPhase::kFailed, EndCause::kUser, "ran out of memory"},
    {"TIMEOUT", AttemptPhase::kFailed, EndCause::kUser, "reached its time limit"},
    {"DEADLINE", AttemptPhase::kFailed, EndCause::kUser, "reached its deadline"},
    {"NODE_FAIL", AttemptPhase::kFailed, EndCause::kInfrastructure, "a node failed"},
    {"BOOT_FAIL", AttemptPhase::kFailed, EndCause::kInfrastructure, "a node failed to boot"},
    {"PREEMPTED", AttemptPhase::kFailed, EndCause::kInfrastructure, "was preempted"},
    {"CANCELLED", AttemptPhase::kCancelled, EndCause::kCancelled, "was cancelled"},
}};

bool has(const std::vector<std::string>& state, std::string_view flag) {
  return std::find(state.begin() + 1, state.end(), flag) != state.end();
}

std::string exitText(std::optional<int> exit_code, std::optional<int> signal) {
  std::string out;
  if (exit_code) out += "exit code " + std::to_string(*exit_code);
  if (signal && *signal != 0)
    out += (out.empty() ? "" : ", ") + std::string("signal ") + std::to_string(*signal);
  return out;
}

ComponentVerdict unknown(std::string reason) {
  return {AttemptPhase::kUnknown, AttemptPhase::kUnknown, EndCause::kNone, std::move(reason)};
}

// An ended base state → its outcome (the flags aside).
ComponentVerdict ended(const Ending& ending, const std::vector<std::string>& state,
                       std::string_view slurm_reason, std::optional<int> exit_code,
                       std::optional<int> signal, bool cancel_requested) {
  ComponentVerdict v{ending.outcome, ending.outcome, ending.cause,
                     "the job " + std::string(ending.reason)};
  const std::string exit = exitText(exit_code, signal);
  if (ending.base == "CANCELLED") {
    if (cancel_requested) {
      v.reason = "cancelled at TunePlane's request";
    } else {
      v.outcome = v.phase = AttemptPhase::kFailed;
      v.cause = EndCause::kExternalCancel;
      v.reason = "cancelled outside TunePlane (by an administrator or scancel)";
    }
  } else if (ending.base == "FAILED" && slurm_reason == "BadConstraints") {
    v.cause = EndCause::kRejected;
    v.reason = "Slurm refused the job's constraints (BadConstraints)";
  } else if (ending.base == "FAILED" && exit_code && !scriptFailure(*exit_code).empty()) {
    v.cause = EndCause::kInfrastructure;
    v.reason = std::string(scriptFailure(*exit_code)) + " (" + exit + ")";
  } else if (v.outcome == AttemptPhase::kFailed && !exit.empty()) {
    v.reason += " (" + exit + ")";
  }
  if (has(state, "LAUNCH_FAILED")) {
    v.outcome = v.phase = AttemptPhase::kFailed;
    v.cause = EndCause::kInfrastructure;
    v.reason = "Slurm could not launch the job (LAUNCH_FAILED)";
  }
  if (has(state, "COMPLETING") || has(state, "STAGE_OUT")) {
    v.phase = AttemptPhase::kReleasing;
    v.reason += has(state, "STAGE_OUT") ? "; staging out, resources still held"
                                        : "; the epilog runs, resources still held";
  }
  return v;
}

}  // namespace

bool isKnownBaseState(std::string_view state) {
  return std::find(kBaseStates.begin(), kBaseStates.end(), state) != kBaseStates.end();
}

bool isKnownStateFlag(std::string_view flag) {
  return std::find(kFlags.begin(), kFlags.end(), flag) != kFlags.end();
}

ComponentVerdict mapComponent(const std::vector<std::string>& state, std::string_view reason,
                              std::optional<int> exit_code, std::optional<int> signal,
                              bool cancel_requested) {
  if (state.empty()) return unknown("Slurm reported no state for the job");
  const std::string& base = state.front();
  if (!isKnownBaseState(base)) {
    return unknown("Slurm reported the state '" + base + "', which this version does not know");
  }
  for (size_t i = 1; i < state.size(); ++i) {
    if (!isKnownStateFlag(state[i])) {
      return unknown("Slurm reported the state flag '" + state[i] +
                     "', which this version does not know");
    }
  }
  for (const Ending& ending : kEndings) {
    if (ending.base == base) {
      return ended(ending, state, reason, exit_code, signal, cancel_requested);
    }
  }
  // Not ended: PENDING, RUNNING or SUSPENDED. A hold flag on a job that has not ended
  // changes nothing (it cannot be releasing what it still uses).
  if (has(state, "LAUNCH_FAILED")) {
    return {AttemptPhase::kFailed, AttemptPhase::kFailed, EndCause::kInfrastructure,
            "Slurm could not launch the job (LAUNCH_FAILED)"};
  }
  if (base == "PENDING") {
    std::string why = "queued in Slurm";
    if (!reason.empty() && reason != "None") why += " (" + std::string(reason) + ")";
    return {AttemptPhase::kQueued, AttemptPhase::kQueued, EndCause::kNone, why};
  }
  std::string why = "running";
  if (base == "SUSPENDED") why = "suspended by Slurm (the allocation is held)";
  if (has(state, "CONFIGURING")) why = "running (nodes booting or the prolog running)";
  if (has(state, "STOPPED")) why = "stopped by a signal (the allocation is held)";
  return {AttemptPhase::kRunning, AttemptPhase::kRunning, EndCause::kNone, why};
}

AttemptVerdict rollUp(const std::vector<store::ComponentRecord>& components,
                      bool cancel_requested) {
  const bool het = components.size() > 1;
  std::vector<ComponentVerdict> verdicts;
  verdicts.reserve(components.size());
  for (const auto& c : components) {
    ComponentVerdict v = mapComponent(c.state, c.reason, c.exit_code, c.signal, cancel_requested);
    if (het) v.reason = "component " + std::to_string(c.index) + " (" + c.pool + "): " + v.reason;
    verdicts.push_back(std::move(v));
  }
  const auto first = [&](auto predicate) -> const ComponentVerdict* {
    auto it = std::find_if(verdicts.begin(), verdicts.end(), predicate);
    return it == verdicts.end() ? nullptr : &*it;
  };
  const auto isPhase = [](AttemptPhase p) {
    return [p](const ComponentVerdict& v) { return v.phase == p; };
  };

  if (const auto* u = first(isPhase(AttemptPhase::kUnknown))) {
    return {AttemptPhase::kUnknown, EndCause::kNone, u->reason, {}};
  }
  // The failure that explains the attempt: components TunePlane cancelled because another
  // failed end CANCELLED too, and must not hide the cause.
  const ComponentVerdict* failed = first([](const ComponentVerdict& v) {
    return v.outcome == AttemptPhase::kFailed && v.cause != EndCause::kExternalCancel;
  });
  if (!failed) {
    failed = first([](const ComponentVerdict& v) { return v.outcome == AttemptPhase::kFailed; });
  }
  AttemptVerdict out;
  if (failed) {
    for (size_t i = 0; i < verdicts.size(); ++i) {
      const AttemptPhase p = verdicts[i].phase;
      if (p == AttemptPhase::kQueued || p == AttemptPhase::kRunning) {
        out.to_cancel.push_back(components[i].index);
      }
    }
  }
  const bool active =
      first(isPhase(AttemptPhase::kRunning)) || first(isPhase(AttemptPhase::kQueued));
  const bool holding = first(isPhase(AttemptPhase::kReleasing)) != nullptr;
  if (!failed && active) {
    const auto* running = first(isPhase(AttemptPhase::kRunning));
    const auto* v = running ? running : first(isPhase(AttemptPhase::kQueued));
    out.phase = v->phase;
    out.reason = v->reason;
    return out;
  }
  if (failed && (active || holding)) {
    out.phase = AttemptPhase::kReleasing;
    out.reason = failed->reason + (active ? "; stopping the other components" : "");
    return out;
  }
  if (holding) {
    const auto* v = first(isPhase(AttemptPhase::kReleasing));
    out.phase = AttemptPhase::kReleasing;
    out.reason = v->reason;
    return out;
  }
  // Every component has ended.
  if (failed) {
    out.phase = AttemptPhase::kFailed;
    out.cause = failed->cause;
    out.reason = failed->reason;
  } else if (const auto* c = first(isPhase(AttemptPhase::kCancelled))) {
    out.phase = AttemptPhase::kCancelled;
    out.cause = EndCause::kCancelled;
    out.reason = c->reason;
  } else {
    out.phase = AttemptPhase::kSucceeded;
    out.reason = het ? "every component completed" : verdicts.front().reason;
  }
  return out;
}

std::string_view scriptFailure(int exit_code) {
  switch (exit_code) {
    case slurm::kExitArtifactMismatch:
      return "the runtime image's SHA-256 did not match on the node";
    case slurm::kExitArtifactMissing:
      return "the runtime image was missing or unreadable on the node";
    case slurm::kExitRayJoinTimeout:
      return "not every node joined Ray in time";
    case slurm::kExitNoHeadAddress:
      return "no usable IP address was found for the Ray head node";
    case slurm::kExitRayHeadFailed:
      return "the Ray head did not start";
    default:
      return {};
  }
}

}  // namespace tuneplane::control
