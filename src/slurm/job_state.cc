#include "slurm/job_state.h"

#include <array>
#include <cstdlib>
#include <cstring>

namespace tuneplane::slurm {
namespace {

constexpr size_t kBases = 12;  // the names before the flags in kNames
constexpr size_t kFlags = 16;

// Base states in enum order (after kNone), then flags in bit order: Slurm 26.05's names.
constexpr std::array<std::string_view, kBases + kFlags> kNames = {
    "PENDING",       "RUNNING",   "SUSPENDED",     "COMPLETED",     "CANCELLED", "FAILED",
    "TIMEOUT",       "NODE_FAIL", "PREEMPTED",     "BOOT_FAIL",     "DEADLINE",  "OUT_OF_MEMORY",
    "LAUNCH_FAILED", "REQUEUED",  "REQUEUE_HOLD",  "SPECIAL_EXIT",  "RESIZING",  "CONFIGURING",
    "COMPLETING",    "STOPPED",   "RECONFIG_FAIL", "POWER_UP_NODE", "REVOKED",   "REQUEUE_FED",
    "RESV_DEL_HOLD", "SIGNALING", "STAGE_OUT",     "EXPEDITING"};

// Name → position in kNames, for a decoder that looks up every state of a 10,000-job answer:
// one slot per name, found from the length and the first and fourth letters (no two names share a
// slot: the constructor checks), then compared as two overlapping words, not byte by byte. Every
// name is 6 to 16 bytes long.
class NameIndex {
 public:
  NameIndex() {
    at_.fill(-1);
    for (size_t i = 0; i < kNames.size(); ++i) {
      int& slot = at_[slotOf(kNames[i])];
      if (slot != -1 || kNames[i].size() < 6 || kNames[i].size() > 16) std::abort();
      slot = static_cast<int>(i);
    }
  }
  int find(std::string_view name) const {
    if (name.size() < 6 || name.size() > 16) return -1;
    const int at = at_[slotOf(name)];
    if (at < 0 || kNames[static_cast<size_t>(at)].size() != name.size()) return -1;
    const std::string_view known = kNames[static_cast<size_t>(at)];
    return sameEnds(name, known) ? at : -1;
  }

 private:
  static constexpr size_t kSlots = 64;
  static size_t slotOf(std::string_view name) {  // REQUIRES: name.size() >= 4
    const auto first = static_cast<unsigned char>(name[0]);
    const auto fourth = static_cast<unsigned char>(name[3]);
    return (name.size() + first * 5 + fourth * 2) % kSlots;
  }
  // Two words that cover the whole name between them (they overlap when it is shorter).
  template <typename Word>
  static bool sameWords(std::string_view a, std::string_view b) {
    Word a0, a1, b0, b1;
    std::memcpy(&a0, a.data(), sizeof(Word));
    std::memcpy(&b0, b.data(), sizeof(Word));
    std::memcpy(&a1, a.data() + a.size() - sizeof(Word), sizeof(Word));
    std::memcpy(&b1, b.data() + b.size() - sizeof(Word), sizeof(Word));
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  static bool sameEnds(std::string_view a, std::string_view b) {
    return a.size() >= 8 ? sameWords<uint64_t>(a, b) : sameWords<uint32_t>(a, b);
  }
  std::array<int, kSlots> at_{};
};

const NameIndex kIndex;

// Calls `name(text)` for each name of `state` in Slurm's order.
template <typename Name>
void eachName(const JobState& state, Name&& name) {
  if (state.base() == JobBaseState::kNone) return;
  name(jobStateName(state.base()));
  for (size_t bit = 0; bit < kFlags; ++bit) {
    if ((state.flags() >> bit) & 1u) name(kNames[kBases + bit]);
  }
}

}  // namespace

void JobStateNames::add(std::string_view name) {
  if (compact_) {
    const int at = kIndex.find(name);
    if (!any_) {
      if (at >= 0 && static_cast<size_t>(at) < kBases) {
        base_ = static_cast<JobBaseState>(at + 1);
        any_ = true;
        return;
      }
    } else if (at >= 0 && static_cast<size_t>(at) >= kBases) {
      const auto bit = static_cast<uint16_t>(1u << (static_cast<size_t>(at) - kBases));
      if (bit > flags_) {  // after every flag so far: in Slurm's order, and not twice
        flags_ |= bit;
        return;
      }
    }
    // No compact form: the names so far, then this one and the rest, verbatim.
    compact_ = false;
    verbatim_ = JobState(base_, flags_).names();
  }
  verbatim_.emplace_back(name);
  any_ = true;
}

void JobStateNames::clear() {
  compact_ = true;
  any_ = false;
  base_ = JobBaseState::kNone;
  flags_ = 0;
  verbatim_.clear();
}

std::optional<JobState> JobState::fromNames(const std::vector<std::string>& names) {
  JobStateNames reader;
  for (const std::string& name : names) {
    reader.add(name);
    if (!reader.isCompact()) return std::nullopt;
  }
  return reader.state();
}

std::vector<std::string> JobState::names() const {
  std::vector<std::string> out;
  out.reserve(1 + static_cast<size_t>(__builtin_popcount(flags_)));
  eachName(*this, [&](std::string_view name) { out.emplace_back(name); });
  return out;
}

bool JobState::sameNames(const std::vector<std::string>& names) const {
  size_t i = 0;
  bool same = true;
  eachName(*this, [&](std::string_view name) {
    same = same && i < names.size() && names[i] == name;
    ++i;
  });
  return same && i == names.size();
}

std::string_view jobStateName(JobBaseState base) {
  if (base == JobBaseState::kNone) return "";
  return kNames[static_cast<size_t>(base) - 1];
}

std::optional<JobBaseState> parseJobBaseState(std::string_view name) {
  const int at = kIndex.find(name);
  if (at < 0 || static_cast<size_t>(at) >= kBases) return std::nullopt;
  return static_cast<JobBaseState>(at + 1);
}

std::optional<JobStateFlag> parseJobStateFlag(std::string_view name) {
  const int at = kIndex.find(name);
  if (at < 0 || static_cast<size_t>(at) < kBases) return std::nullopt;
  return static_cast<JobStateFlag>(1u << (static_cast<size_t>(at) - kBases));
}

std::string_view jobStateName(JobStateFlag flag) {
  const auto bits = static_cast<unsigned>(flag);
  return kNames[kBases + static_cast<size_t>(__builtin_ctz(bits))];
}

}  // namespace tuneplane::slurm
