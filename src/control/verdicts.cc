// The verdicts of decisions.h: what Slurm's records, the attempt's sentinels and slurmdbd's
// record say of an attempt — records applied to its components, a job found by its token,
// a requeue, a job Slurm no longer knows. Pure, as every decision; the changes that store a
// verdict are decisions.cc's.
#include <algorithm>
#include <map>
#include <set>

#include "control/decisions.h"
#include "slurm/script_renderer.h"
#include "slurm/sluid.h"

namespace tuneplane::control {
namespace {

using phase::AttemptPhase;
using phase::EndCause;

const store::ComponentRecord* byOffset(const store::AttemptRecord& a, int index) {
  for (const auto& c : a.components) {
    if (c.index == index) return &c;
  }
  return nullptr;
}

void copyRecord(store::ComponentRecord& c, const slurm::JobRecord& r) {
  c.slurm_job_id = r.job_id;
  c.sluid = r.sluid;
  c.state = r.job_state;
  c.reason = r.state_reason;
  const auto code = r.exit_code.return_code.value();
  c.exit_code = code ? std::optional<int>(static_cast<int>(*code)) : std::nullopt;
  const auto signal = r.exit_code.signal_id.value();
  c.signal = signal && *signal != 0 ? std::optional<int>(static_cast<int>(*signal)) : std::nullopt;
  c.nodes = r.nodes;
  c.start_time = r.start_time.value().value_or(0);
  c.end_time = r.end_time.value().value_or(0);
  c.preempt_time = r.preempt_time.value().value_or(0);
}

}  // namespace

store::AttemptRecord countMissing(store::AttemptRecord attempt) {
  attempt.missing_polls += 1;
  attempt.reason = "Slurm has no record of the job (" + std::to_string(attempt.missing_polls) +
                   " of " + std::to_string(kMissingPollsToJudge) +
                   " checks before it is judged from its sentinels)";
  return attempt;
}

std::optional<AttemptVerdict> judgeFromAccounting(const store::AttemptRecord& attempt,
                                                  const std::vector<slurm::AccountingRun>& runs,
                                                  bool cancel_requested) {
  if (attempt.components.empty()) return std::nullopt;
  std::vector<store::ComponentRecord> recorded;
  for (const store::ComponentRecord& c : attempt.components) {
    if (c.slurm_job_id == 0) return std::nullopt;
    const slurm::AccountingRun* run = nullptr;
    for (const slurm::AccountingRun& r : runs) {
      if (r.job_id != c.slurm_job_id) continue;
      if (!r.sluid.empty()) {
        // The run under the SLUID the attempt holds: a reused id's or a requeue's other runs
        // are not this one.
        if (r.sluid == c.sluid) run = &r;
      } else if (r.working_directory.rfind(attempt.staging_dir, 0) == 0 &&
                 (run == nullptr || r.restart_count >= run->restart_count)) {
        run = &r;  // v0.0.44: no SLUID in the record; the attempt's own directory, last run
      }
    }
    // Not recorded, or not ended there (slurmdbd learns of the end after slurmctld).
    if (run == nullptr || run->end_time == 0 || run->state.empty()) return std::nullopt;
    store::ComponentRecord r = c;
    r.state = run->state;
    r.reason.clear();  // slurmdbd's record keeps no state reason
    r.exit_code.reset();
    r.signal.reset();
    r.end_time = run->end_time;
    recorded.push_back(std::move(r));
  }
  AttemptVerdict v = rollUp(recorded, cancel_requested);
  if (!phase::isTerminal(v.phase)) return std::nullopt;
  // slurmctld holds no job any more: nothing of it is left to cancel.
  v.to_cancel.clear();
  v.requeued.clear();
  v.reason += " (from slurmdbd's record; slurmctld no longer has the job)";
  return v;
}

AttemptVerdict judgeFromSentinels(const attempt::AttemptSentinels& sentinels,
                                  bool cancel_requested) {
  AttemptVerdict v;
  if (!sentinels.exit.empty()) {
    const auto& [pool, exit] = *sentinels.exit.begin();
    const std::string how = "ended with exit code " + std::to_string(exit.exit_code) + " on " +
                            exit.node + " (from its exit sentinel; Slurm no longer has a record)";
    if (exit.exit_code == 0) {
      v.phase = AttemptPhase::kSucceeded;
      v.reason = "the job " + how;
    } else if (cancel_requested) {
      v.phase = AttemptPhase::kCancelled;
      v.cause = EndCause::kCancelled;
      v.reason = "cancelled; the job " + how;
    } else {
      const bool node = !scriptFailure(exit.exit_code).empty();
      v.phase = AttemptPhase::kFailed;
      v.cause = node ? EndCause::kInfrastructure : EndCause::kUser;
      v.reason = "the job " + how;
    }
    return v;
  }
  if (cancel_requested) {
    v.phase = AttemptPhase::kCancelled;
    v.cause = EndCause::kCancelled;
    v.reason = "cancelled; Slurm no longer has a record of the job";
    return v;
  }
  v.phase = AttemptPhase::kFailed;
  if (!sentinels.start.empty()) {
    const auto& [pool, start] = *sentinels.start.begin();
    v.cause = EndCause::kUnobserved;
    v.reason = "ended unobserved: it started on " + start.node + " at " +
               std::to_string(start.time) +
               " (Unix time), left no exit sentinel, and Slurm no longer has a record (killed: "
               "time limit, cancel or node loss)";
  } else {
    v.cause = EndCause::kInfrastructure;
    v.reason = "lost: Slurm has no record of the job after " +
               std::to_string(kMissingPollsToJudge) + " checks and it left no sentinel";
  }
  if (!sentinels.problems.empty()) v.reason += "; unreadable: " + sentinels.problems.front();
  return v;
}

AttemptVerdict noteMissingLogs(AttemptVerdict verdict,
                               const std::vector<std::string>& pools_without_log) {
  if (verdict.phase != AttemptPhase::kFailed || verdict.cause != EndCause::kUser ||
      pools_without_log.empty()) {
    return verdict;
  }
  std::string files;
  for (const auto& pool : pools_without_log) {
    files += (files.empty() ? "" : ", ") + std::string("logs/") + pool + ".out";
  }
  verdict.cause = EndCause::kInfrastructure;
  verdict.reason = std::string(attempt::kLogNeverWrittenReason) + " (missing: " + files +
                   "; Slurm said: " + verdict.reason + ")";
  return verdict;
}

bool applyRecords(store::AttemptRecord& attempt, const std::vector<slurm::JobRecord>& records,
                  bool by_sluid) {
  if (!by_sluid) {
    // Adoption: the records define the components, in het offset order.
    std::vector<const slurm::JobRecord*> sorted;
    for (const auto& r : records) sorted.push_back(&r);
    std::sort(sorted.begin(), sorted.end(), [](const auto* x, const auto* y) {
      return x->het_job_offset.value().value_or(0) < y->het_job_offset.value().value_or(0);
    });
    std::vector<store::ComponentRecord> comps;
    for (const auto* r : sorted) {
      store::ComponentRecord c;
      c.index = static_cast<int>(r->het_job_offset.value().value_or(0));
      const auto* planned = byOffset(attempt, c.index);
      c.pool = planned ? planned->pool : "component-" + std::to_string(c.index);
      copyRecord(c, *r);
      comps.push_back(std::move(c));
    }
    if (!sorted.empty()) {
      const auto* lead = sorted.front();
      attempt.slurm_job_id =
          lead->isHetComponent() ? static_cast<uint64_t>(*lead->het_job_id.value()) : lead->job_id;
    }
    const bool complete = !comps.empty() && comps.size() >= attempt.components.size();
    if (!comps.empty()) attempt.components = std::move(comps);
    return complete;
  }
  bool all = !attempt.components.empty();
  for (auto& c : attempt.components) {
    const slurm::Sluid ours(c.sluid);
    auto it = std::find_if(records.begin(), records.end(), [&](const slurm::JobRecord& r) {
      return !ours.empty() && slurm::Sluid(r.sluid) == ours;
    });
    if (it == records.end()) {
      all = false;
      continue;
    }
    const std::string sluid = c.sluid;
    copyRecord(c, *it);
    c.sluid = sluid;
  }
  return all;
}

std::string TokenChoice::describe(const std::vector<std::string>& not_cancelled) const {
  if (duplicates.empty()) return {};
  auto name = [](const slurm::JobRecord& r) {
    return std::to_string(r.job_id) + " (" + r.sluid + ")";
  };
  std::string kept, others;
  for (const auto& r : adopted) kept += (kept.empty() ? "" : ", ") + name(r);
  for (const auto& r : duplicates) {
    others += (others.empty() ? "" : ", ") + name(r);
    if (std::find(not_cancelled.begin(), not_cancelled.end(), r.sluid) != not_cancelled.end()) {
      others += " [cancel not confirmed yet: sent again every cycle]";
    }
  }
  return std::to_string(duplicate_jobs + 1) +
         " Slurm jobs carried this attempt's submit token (a submit that reached Slurm twice): "
         "kept " +
         std::string(by_claim ? "the one that started first and claimed the attempt, "
                              : "the earliest submitted, ") +
         kept + "; cancelled the duplicate(s) " + others;
}

TokenChoice chooseByToken(const std::vector<slurm::JobRecord>& records,
                          std::optional<uint64_t> claimant) {
  // The Slurm job a record belongs to: a het component's leader, else its own id.
  auto jobOf = [](const slurm::JobRecord& r) {
    return r.isHetComponent() ? static_cast<uint64_t>(*r.het_job_id.value()) : r.job_id;
  };
  std::map<int64_t, std::vector<const slurm::JobRecord*>> by_offset;
  for (const auto& r : records) by_offset[r.het_job_offset.value().value_or(0)].push_back(&r);
  TokenChoice out;
  std::set<uint64_t> jobs;
  for (const auto& r : records) jobs.insert(jobOf(r));
  out.by_claim = jobs.size() > 1 && claimant && jobs.count(*claimant) > 0;
  std::set<uint64_t> duplicate_jobs;
  for (auto& [offset, group] : by_offset) {
    std::sort(group.begin(), group.end(), [&](const auto* x, const auto* y) {
      if (out.by_claim && (jobOf(*x) == *claimant) != (jobOf(*y) == *claimant)) {
        return jobOf(*x) == *claimant;
      }
      const int64_t tx = x->submit_time.value().value_or(INT64_MAX);
      const int64_t ty = y->submit_time.value().value_or(INT64_MAX);
      return tx != ty ? tx < ty : x->job_id < y->job_id;
    });
    out.adopted.push_back(*group.front());
    for (size_t i = 1; i < group.size(); ++i) {
      out.duplicates.push_back(*group[i]);
      duplicate_jobs.insert(group[i]->isHetComponent()
                                ? static_cast<uint64_t>(*group[i]->het_job_id.value())
                                : group[i]->job_id);
    }
  }
  out.duplicate_jobs = static_cast<int>(duplicate_jobs.size());
  return out;
}

bool foundClaimedByAnother(const store::AttemptRecord& attempt) {
  return std::any_of(attempt.components.begin(), attempt.components.end(), [](const auto& c) {
    return baseStateOf(c.state) == slurm::JobBaseState::kFailed &&
           (c.exit_code == slurm::kExitAlreadyClaimed || c.exit_code == slurm::kExitCannotClaim);
  });
}

AttemptVerdict holdForCancel(AttemptVerdict verdict, const std::string& what) {
  verdict.phase = AttemptPhase::kReleasing;
  verdict.reason += "; cancelling " + what + " so it never runs again (sent again every cycle)";
  return verdict;
}

namespace {

// A job Slurm requeued ran once already: its attempt ends, its cause the infrastructure's.
// `found` names the SLUIDs and states it came back under.
AttemptVerdict requeuedVerdict(const std::string& found) {
  AttemptVerdict v;
  v.phase = AttemptPhase::kFailed;
  v.cause = EndCause::kInfrastructure;
  v.reason = "Slurm requeued the job: it came back under a new SLUID, " + found;
  return v;
}

std::string joinedStates(const std::vector<std::string>& state) {
  std::string joined;
  for (const auto& name : state) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}

}  // namespace

AttemptVerdict requeuedUnderNewSluid(const std::vector<slurm::JobRecord>& records) {
  std::string found;
  for (const auto& r : records) {
    found += (found.empty() ? "" : ", ") + r.sluid + " " + joinedStates(r.job_state);
    if (!r.state_reason.empty() && r.state_reason != "None") {
      found += " (Slurm's reason: " + r.state_reason + ")";
    }
  }
  AttemptVerdict v = requeuedVerdict(found);
  for (const auto& r : records) {
    v.requeued.push_back(static_cast<int>(r.het_job_offset.value().value_or(0)));
  }
  return v;
}

namespace {

bool waitsOrRuns(const store::ComponentRecord& c) {
  const AttemptPhase p = mapComponent(c.state, c.reason, c.exit_code, c.signal, false).phase;
  return p == AttemptPhase::kQueued || p == AttemptPhase::kRunning;
}

}  // namespace

bool requeuedAlready(const std::vector<slurm::JobRecord>& records) {
  return std::any_of(records.begin(), records.end(),
                     [](const slurm::JobRecord& r) { return r.restart_cnt > 0; });
}

std::vector<std::string> liveSluids(const std::vector<slurm::JobRecord>& records) {
  std::vector<std::string> live;
  for (const auto& r : records) {
    store::ComponentRecord c;
    c.state = r.job_state;
    c.reason = r.state_reason;
    if (!r.sluid.empty() && waitsOrRuns(c)) live.push_back(r.sluid);
  }
  return live;
}

bool heldForRequeue(const store::AttemptRecord& stored) {
  if (stored.phase != AttemptPhase::kReleasing) return false;
  const AttemptPhase rolled = rollUp(stored.components, false).phase;
  return rolled == AttemptPhase::kQueued || rolled == AttemptPhase::kRunning;
}

AttemptVerdict stillRequeued(const std::vector<store::ComponentRecord>& observed) {
  std::string found;
  std::vector<int> waiting;
  for (const auto& c : observed) {
    found += (found.empty() ? "" : ", ") + c.sluid + " " + joinedStates(c.state);
    if (waitsOrRuns(c)) waiting.push_back(c.index);
  }
  AttemptVerdict v = requeuedVerdict("now " + found);
  v.requeued = std::move(waiting);
  return v;
}

AttemptVerdict rejectUnrunnable(const AttemptVerdict& queued, int64_t waited_ms) {
  AttemptVerdict v;
  v.phase = AttemptPhase::kFailed;
  v.cause = EndCause::kRejected;
  v.reason = "Slurm can never run the job as submitted, cancelled after it waited " +
             std::to_string((waited_ms + 59'999) / 60'000) + " min: " + queued.reason;
  return v;
}

}  // namespace tuneplane::control
