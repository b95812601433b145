// The mapping tables of status_mapping.h.
#include "control/status_mapping.h"

#include <algorithm>
#include <array>

#include "common/human.h"
#include "slurm/job_state.h"
#include "slurm/pending_reasons.h"
#include "slurm/script_renderer.h"

namespace tuneplane::control {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using slurm::JobBaseState;
using slurm::JobStateFlag;

// A job_state list read leniently: a known base first, then known flags in any order (the
// names are slurm/job_state.h's, the one table). `unknown` names the first name that is not.
struct ReadState {
  JobBaseState base = JobBaseState::kNone;
  uint16_t flags = 0;
  std::string unknown;
  bool unknown_is_base = false;
  bool has(JobStateFlag f) const { return (flags & static_cast<uint16_t>(f)) != 0; }
};

ReadState readState(const std::vector<std::string>& state) {
  ReadState out;
  if (state.empty()) return out;
  if (auto base = slurm::parseJobBaseState(state.front())) {
    out.base = *base;
  } else {
    out.unknown = state.front();
    out.unknown_is_base = true;
    return out;
  }
  for (size_t i = 1; i < state.size(); ++i) {
    auto flag = slurm::parseJobStateFlag(state[i]);
    if (!flag) {
      out.unknown = state[i];
      return out;
    }
    out.flags |= static_cast<uint16_t>(*flag);
  }
  return out;
}

std::string exitText(std::optional<int> exit_code, std::optional<int> signal) {
  std::string out;
  if (exit_code) out += "exit code " + std::to_string(*exit_code);
  if (signal && *signal != 0)
    out += (out.empty() ? "" : ", ") + std::string("signal ") + std::to_string(*signal);
  return out;
}

ComponentVerdict make(AttemptPhase phase, AttemptPhase outcome, EndCause cause,
                      std::string reason) {
  ComponentVerdict v;
  v.phase = phase;
  v.outcome = outcome;
  v.cause = cause;
  v.reason = std::move(reason);
  return v;
}

ComponentVerdict unknown(std::string reason) {
  return make(AttemptPhase::kUnknown, AttemptPhase::kUnknown, EndCause::kNone, std::move(reason));
}

bool meaningful(std::string_view slurm_reason) {
  return !slurm_reason.empty() && slurm_reason != "None";
}

// The flag that says Slurm requeued the job (it would run again under a new SLUID), if any.
std::optional<JobStateFlag> requeueFlag(const ReadState& s) {
  for (JobStateFlag f : {JobStateFlag::kRequeued, JobStateFlag::kRequeueHold,
                         JobStateFlag::kRequeueFed, JobStateFlag::kSpecialExit}) {
    if (s.has(f)) return f;
  }
  return std::nullopt;
}

// Resources still held: the epilog (COMPLETING) or a burst-buffer stage-out runs.
void noteHolding(ComponentVerdict& v, const ReadState& s) {
  if (!s.has(JobStateFlag::kCompleting) && !s.has(JobStateFlag::kStageOut)) return;
  v.phase = AttemptPhase::kReleasing;
  v.reason += s.has(JobStateFlag::kStageOut) ? "; staging out, resources still held"
                                             : "; the epilog runs, resources still held";
}

// What an ended base state means, before the flags. Every base is named: the compiler
// checks that none is forgotten (-Wswitch).
struct Ending {
  AttemptPhase outcome;
  EndCause cause;
  std::string_view words;
};
std::optional<Ending> endingOf(JobBaseState base) {
  switch (base) {
    case JobBaseState::kNone:
    case JobBaseState::kPending:
    case JobBaseState::kRunning:
    case JobBaseState::kSuspended:
      return std::nullopt;
    case JobBaseState::kCompleted:
      return Ending{AttemptPhase::kSucceeded, EndCause::kNone, "completed"};
    case JobBaseState::kCancelled:
      return Ending{AttemptPhase::kCancelled, EndCause::kCancelled, "was cancelled"};
    case JobBaseState::kFailed:
      return Ending{AttemptPhase::kFailed, EndCause::kUser, "failed"};
    case JobBaseState::kTimeout:
      return Ending{AttemptPhase::kFailed, EndCause::kUser, "reached its time limit"};
    case JobBaseState::kNodeFail:
      return Ending{AttemptPhase::kFailed, EndCause::kInfrastructure, "a node failed"};
    case JobBaseState::kPreempted:
      // Slurm's own record of a preemption, whatever the exit code says: a program that saved
      // and exited 0 (or 3) in its grace time ends PREEMPTED with exit_code SUCCESS/0.
      return Ending{AttemptPhase::kFailed, EndCause::kPreempted, "was preempted"};
    case JobBaseState::kBootFail:
      return Ending{AttemptPhase::kFailed, EndCause::kInfrastructure, "a node failed to boot"};
    case JobBaseState::kDeadline:
      return Ending{AttemptPhase::kFailed, EndCause::kUser, "reached its deadline"};
    case JobBaseState::kOutOfMemory:
      return Ending{AttemptPhase::kFailed, EndCause::kUser, "ran out of memory"};
  }
  return std::nullopt;
}

ComponentVerdict ended(JobBaseState base, const Ending& ending, const ReadState& s,
                       std::string_view slurm_reason, std::optional<int> exit_code,
                       std::optional<int> signal, bool cancel_requested) {
  ComponentVerdict v =
      make(ending.outcome, ending.outcome, ending.cause, "the job " + std::string(ending.words));
  const std::string exit = exitText(exit_code, signal);
  if (base == JobBaseState::kCancelled) {
    if (cancel_requested) {
      v.reason = "cancelled at TunePlane's request";
    } else {
      v.outcome = v.phase = AttemptPhase::kFailed;
      v.cause = EndCause::kExternalCancel;
      v.reason = "cancelled outside TunePlane (by an administrator or scancel)";
    }
  } else if (base == JobBaseState::kFailed && slurm_reason == "BadConstraints") {
    v.cause = EndCause::kRejected;
    v.reason = "Slurm refused the job's constraints (BadConstraints)";
  } else if (base == JobBaseState::kFailed && exit_code && !scriptFailure(*exit_code).empty()) {
    v.cause = EndCause::kInfrastructure;
    v.reason = std::string(scriptFailure(*exit_code)) + " (" + exit + ")";
  } else if (v.outcome == AttemptPhase::kFailed && !exit.empty()) {
    v.reason += " (" + exit + ")";
  }
  if (s.has(JobStateFlag::kLaunchFailed)) {
    v.outcome = v.phase = AttemptPhase::kFailed;
    v.cause = EndCause::kInfrastructure;
    v.reason = "Slurm could not launch the job (LAUNCH_FAILED)";
  }
  noteHolding(v, s);
  return v;
}

// A running job Slurm chose to preempt (preempt_time set) is in its grace time: the warning
// was sent, and Slurm ends it PREEMPTED by its end_time (23_preemption.json).
std::string preemptionNote(const std::vector<store::ComponentRecord>& components) {
  for (const auto& c : components) {
    if (c.preempt_time <= 0 || baseStateOf(c.state) != JobBaseState::kRunning) continue;
    return "; being preempted since " + formatUtc(c.preempt_time) +
           (c.end_time > 0 ? ": Slurm ends it by " + formatUtc(c.end_time) : std::string());
  }
  return {};
}

}  // namespace

slurm::JobBaseState baseStateOf(const std::vector<std::string>& state) {
  return readState(state).base;
}

bool isKnownBaseState(std::string_view state) {
  return slurm::parseJobBaseState(state).has_value();
}

bool isKnownStateFlag(std::string_view flag) {
  return slurm::parseJobStateFlag(flag).has_value();
}

ComponentVerdict mapComponent(const std::vector<std::string>& state, std::string_view reason,
                              std::optional<int> exit_code, std::optional<int> signal,
                              bool cancel_requested) {
  if (state.empty()) return unknown("Slurm reported no state for the job");
  const ReadState s = readState(state);
  if (!s.unknown.empty()) {
    return unknown(std::string(s.unknown_is_base ? "Slurm reported the state '"
                                                 : "Slurm reported the state flag '") +
                   s.unknown + "', which this version does not know");
  }
  // Slurm requeued the job (ForceRequeueOnFail, an administrator): this attempt is over
  // whatever the base state says, and the requeued job must be cancelled before it runs a
  // second time (the reconciler does, by SLUID). A requeued job we cancelled is just
  // cancelled.
  if (auto flag = requeueFlag(s); flag && s.base != JobBaseState::kCancelled) {
    ComponentVerdict v =
        make(AttemptPhase::kFailed, AttemptPhase::kFailed, EndCause::kInfrastructure,
             "Slurm requeued the job (" + std::string(slurm::jobStateName(*flag)) +
                 (meaningful(reason) ? "; Slurm's reason: " + std::string(reason) : "") + ")");
    v.requeued = true;
    noteHolding(v, s);
    return v;
  }
  if (auto ending = endingOf(s.base)) {
    return ended(s.base, *ending, s, reason, exit_code, signal, cancel_requested);
  }
  // Not ended: PENDING, RUNNING or SUSPENDED.
  if (s.has(JobStateFlag::kLaunchFailed)) {
    return make(AttemptPhase::kFailed, AttemptPhase::kFailed, EndCause::kInfrastructure,
                "Slurm could not launch the job (LAUNCH_FAILED)");
  }
  ComponentVerdict v;
  switch (s.base) {
    case JobBaseState::kPending: {
      v = make(AttemptPhase::kQueued, AttemptPhase::kQueued, EndCause::kNone, "queued in Slurm");
      if (auto words = slurm::unrunnableReason(reason)) {
        v.unrunnable = true;
        v.reason += " (" + std::string(reason) + ": " + std::string(*words) +
                    "; Slurm can never start it as submitted)";
      } else if (meaningful(reason)) {
        v.reason += " (" + std::string(reason) + ")";
      }
      break;
    }
    case JobBaseState::kRunning:
    case JobBaseState::kSuspended: {
      std::string why = "running";
      if (s.base == JobBaseState::kSuspended) why = "suspended by Slurm (the allocation is held)";
      if (s.has(JobStateFlag::kConfiguring)) why = "running (nodes booting or the prolog running)";
      if (s.has(JobStateFlag::kStopped)) why = "stopped by a signal (the allocation is held)";
      v = make(AttemptPhase::kRunning, AttemptPhase::kRunning, EndCause::kNone, why);
      break;
    }
    case JobBaseState::kNone:
    case JobBaseState::kCompleted:
    case JobBaseState::kCancelled:
    case JobBaseState::kFailed:
    case JobBaseState::kTimeout:
    case JobBaseState::kNodeFail:
    case JobBaseState::kPreempted:
    case JobBaseState::kBootFail:
    case JobBaseState::kDeadline:
    case JobBaseState::kOutOfMemory:
      return unknown("Slurm reported no state for the job");  // handled above
  }
  // COMPLETING or STAGE_OUT hold resources whatever the base state says.
  noteHolding(v, s);
  return v;
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
    AttemptVerdict out;
    out.reason = u->reason;
    return out;
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
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].requeued) out.requeued.push_back(components[i].index);
  }
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
    if (out.phase == AttemptPhase::kRunning) out.reason += preemptionNote(components);
    if (out.phase == AttemptPhase::kQueued) {
      if (const auto* never = first([](const ComponentVerdict& c) { return c.unrunnable; })) {
        out.unrunnable = true;
        out.reason = never->reason;
      }
    }
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
    case slurm::kExitAlreadyClaimed:
      return "another Slurm job with this attempt's submit token (a submit carried out twice) "
             "claimed the attempt first; this one ran nothing";
    case slurm::kExitCannotClaim:
      return "the attempt's claim or the job's fence on the shared filesystem could not be "
             "made or read on the node, so it ran nothing, or stopped what it ran (fails "
             "closed)";
    case slurm::kExitSuperseded:
      return "a later attempt of this job had been staged, so this one ran nothing, or "
             "stopped what it ran";
    default:
      return {};
  }
}

}  // namespace tuneplane::control
