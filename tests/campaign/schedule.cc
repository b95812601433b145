// See schedule.h. Only std::mt19937_64's raw output is used (its sequence is fixed by the
// standard; the <random> distributions are not), so a seed means the same schedule with any
// standard library.
#include "campaign/schedule.h"

#include <algorithm>
#include <random>
#include <sstream>

namespace tuneplane::campaign {
namespace {

// How often each fault is drawn, in Fault's order: the costly ones (a serve restart, a slow
// window, a busy cluster held until a duplicate is cancelled, a full filesystem) less often.
// The single-serve mode's weights are issue 21's (issue 37's kinds 0), so its seeds keep their
// schedules; the replica mode adds issue 37's, the ones that wait for a failover (a stopped
// leader, a lease retaken) least often.
constexpr int kSingleWeights[kFaultKinds] = {10, 10, 8, 4, 5, 8, 8, 5, 8, 8, 8,
                                             5,  8,  5, 5, 0, 0, 0, 0, 0, 0, 0};
constexpr int kReplicaWeights[kFaultKinds] = {10, 10, 8, 4, 5, 8, 8, 5, 8, 8, 8,
                                              5,  8,  5, 5, 9, 6, 4, 3, 6, 5, 4};

class Draw {
 public:
  explicit Draw(uint64_t seed) : random_(seed) {}
  // In [low, high].
  int between(int low, int high) {
    return low + static_cast<int>(random_() % static_cast<uint64_t>(high - low + 1));
  }
  bool chance(int percent) { return between(1, 100) <= percent; }
  uint32_t word() { return static_cast<uint32_t>(random_() >> 32); }

 private:
  std::mt19937_64 random_;
};

Fault drawFault(Draw& draw, CampaignMode mode) {
  const int* weights = mode == CampaignMode::kSingleSqlite ? kSingleWeights : kReplicaWeights;
  int total = 0;
  for (int i = 0; i < kFaultKinds; ++i) total += weights[i];
  int at = draw.between(1, total);
  for (int i = 0; i < kFaultKinds; ++i) {
    at -= weights[i];
    if (at <= 0) return static_cast<Fault>(i);
  }
  return Fault::kKillServe;
}

bool isIssue37(Fault fault) {
  return static_cast<int>(fault) >= kSingleServeFaultKinds;
}

}  // namespace

const char* describe(JobKind kind) {
  switch (kind) {
    case JobKind::kShort:
      return "short CPU job";
    case JobKind::kLong:
      return "long CPU job";
    case JobKind::kHet:
      return "het GPU job";
    case JobKind::kFailing:
      return "failing job (retry budget 2)";
  }
  return "";
}

const char* describe(CampaignMode mode) {
  switch (mode) {
    case CampaignMode::kSingleSqlite:
      return "one serve on SQLite";
    case CampaignMode::kReplicasPostgres:
      return "three serve replicas on PostgreSQL through fault proxies";
  }
  return "";
}

const char* describeStrike(const Step& step) {
  if (step.fault == Fault::kDropSubmit && step.reset) return "submit connection reset";
  if (step.fault == Fault::kDbCut && step.reset) return "database connections reset";
  if (step.fault == Fault::kNodeFail && step.preempt) return "running job PREEMPTED";
  return describe(step.fault);
}

const char* describe(Fault fault) {
  switch (fault) {
    case Fault::kDropSubmit:
      return "submit answer dropped";
    case Fault::kServerErrors:
      return "5xx burst";
    case Fault::kThrottle:
      return "429 burst";
    case Fault::kSlowAnswers:
      return "answers delayed past the client's timeout";
    case Fault::kDuplicateSubmit:
      return "submit carried out twice, answer lost (busy cluster)";
    case Fault::kSlurmRestart:
      return "slurmrestd restart";
    case Fault::kPurge:
      return "running job purged from Slurm's memory once it ends";
    case Fault::kIdReuse:
      return "finished job purged + restart: numeric id reused";
    case Fault::kRequeue:
      return "running job REQUEUED (new SLUID)";
    case Fault::kStallDelete:
      return "user cancel whose DELETE times out";
    case Fault::kNodeFail:
      return "running job ends NODE_FAIL";
    case Fault::kExpireTokens:
      return "every token expired";
    case Fault::kKillServe:
      return "serve SIGKILLed and restarted";
    case Fault::kStagingFull:
      return "staging filesystem full (ENOSPC)";
    case Fault::kClockStep:
      return "serve's wall clock stepped forward";
    case Fault::kLyingReads:
      return "Slurm's reads lie (empty state poll, bare 404, 502 listing)";
    case Fault::kClaimUncreatable:
      return "claims that cannot be created on the node";
    case Fault::kStopLeader:
      return "leader SIGSTOPped inside its transaction, resumed after a takeover";
    case Fault::kLeaseRetaken:
      return "lease lost and retaken";
    case Fault::kDbCut:
      return "database connections cut";
    case Fault::kDbStallWriter:
      return "writer frozen inside its transaction holding the writers' lock";
    case Fault::kDbDelay:
      return "database traffic delayed";
  }
  return "";
}

std::vector<Step> makeSchedule(uint64_t seed, ScheduleSize size, CampaignMode mode) {
  Draw draw(seed);
  std::vector<Step> steps;
  // Which of the jobs+faults slots are faults: a seeded shuffle, the first step a job.
  std::vector<char> slots(static_cast<size_t>(size.jobs + size.faults), 0);
  std::fill(slots.begin(), slots.begin() + size.faults, 1);
  for (size_t i = slots.size(); i > 1; --i) {
    std::swap(slots[i - 1], slots[static_cast<size_t>(draw.between(0, static_cast<int>(i) - 1))]);
  }
  if (!slots.empty() && slots.front()) {
    const auto job = std::find(slots.begin(), slots.end(), 0);
    if (job != slots.end()) std::swap(*job, slots.front());
  }
  for (const char fault : slots) {
    Step s;
    s.is_fault = fault != 0;
    s.pause_ms = draw.between(0, 250);
    if (!fault) {
      const int kind = draw.between(1, 100);
      s.job = kind <= 40   ? JobKind::kShort
              : kind <= 65 ? JobKind::kLong
              : kind <= 80 ? JobKind::kHet
                           : JobKind::kFailing;
      s.sleep_s = draw.between(1, 4);
      if (draw.chance(20)) s.cancel_after_ms = draw.between(0, 3000);
    } else {
      s.fault = drawFault(draw, mode);
      s.count = s.fault == Fault::kThrottle ? draw.between(3, 10) : draw.between(1, 4);
      s.status = draw.chance(50) ? 500 : 503;
      s.window_ms = s.fault == Fault::kKillServe ? draw.between(0, 800) : draw.between(1000, 2500);
      s.pick = draw.word();
      s.step_minutes = 1 + static_cast<int>(s.pick % 180);  // no draw of its own
      // Half the dropped answers are resets, read from a draw the drop does not use, so a
      // seed's schedule is the one it was before resets existed.
      s.reset = (s.fault == Fault::kDropSubmit || s.fault == Fault::kDbCut) && s.status == 503;
      // Half the node failures are preemptions (issue 47) with a grace time of 1-2 s, read
      // from draws a node failure does not use: a seed's schedule is the one it was before.
      s.preempt = s.fault == Fault::kNodeFail && s.count >= 3;
      s.grace_s = s.preempt ? s.window_ms / 1000 : 0;
      if (isIssue37(s.fault)) {
        // Draws of their own: issue 37's kinds never come up in the single-serve mode, so
        // its seeds draw what they drew before.
        s.hold_ms =
            s.fault == Fault::kDbStallWriter ? draw.between(2000, 18000) : draw.between(2000, 8000);
        s.chunk_delay_ms = draw.between(20, 250);
        if (s.fault == Fault::kDbDelay) s.hold_ms = std::min(s.hold_ms, 6000);
      }
    }
    steps.push_back(s);
  }
  return steps;
}

std::string describe(const std::vector<Step>& schedule) {
  std::ostringstream out;
  int n = 0;
  for (const Step& s : schedule) {
    out << "  " << ++n << ". +" << s.pause_ms << " ms: ";
    if (!s.is_fault) {
      out << describe(s.job);
      if (s.job == JobKind::kLong) out << " (" << s.sleep_s << " s)";
      if (s.cancel_after_ms >= 0)
        out << ", cancelled by its user after " << s.cancel_after_ms << " ms";
    } else {
      out << "FAULT " << describeStrike(s);
      switch (s.fault) {
        case Fault::kServerErrors:
          out << " (" << s.count << " × " << s.status << ")";
          break;
        case Fault::kThrottle:
          out << " (" << s.count << " × 429)";
          break;
        case Fault::kSlowAnswers:
          out << " (" << s.window_ms << " ms)";
          break;
        case Fault::kKillServe:
          out << " (down " << s.window_ms << " ms)";
          break;
        case Fault::kStagingFull:
          out << " (" << s.window_ms << " ms)";
          break;
        case Fault::kClockStep:
          out << " (+" << s.step_minutes << " min)";
          break;
        case Fault::kLyingReads:
          out << " (" << s.hold_ms << " ms)";
          break;
        case Fault::kClaimUncreatable:
          out << " (" << s.count << (s.status == 503 ? " dangling links" : " directories") << ")";
          break;
        case Fault::kDbStallWriter:
          out << " (" << s.hold_ms << " ms, pick " << s.pick << ")";
          break;
        case Fault::kDbDelay:
          out << " (" << s.chunk_delay_ms << " ms a chunk for " << s.hold_ms << " ms, pick "
              << s.pick << ")";
          break;
        case Fault::kDbCut:
          out << " (pick " << s.pick << ")";
          break;
        case Fault::kNodeFail:
          if (s.preempt) out << " (grace " << s.grace_s << " s)";
          out << " (pick " << s.pick << ")";
          break;
        case Fault::kPurge:
        case Fault::kIdReuse:
        case Fault::kRequeue:
        case Fault::kStallDelete:
          out << " (pick " << s.pick << ")";
          break;
        default:
          break;
      }
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace tuneplane::campaign
