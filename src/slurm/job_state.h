// TunePlane's one table of Slurm's job states (Slurm 26.05's job_state_string: 12 base
// states, 16 flags; UPDATE_DB is not one of them — since 24.11 its bit means something else
// and slurmrestd never names it). Everything else that needs a state name or a flag
// (control/status_mapping.h, the decoders, the simulator's tests) reads it from here.
//
// A Slurm job_state list (v0.0.45: one base state, then flags in the order slurmctld emits
// them) in four bytes: the base as an enum, the flags as a bitset. Only a list Slurm itself
// could send has this form — a known base first, then known flags, each once, in Slurm's
// order; any other list (an unknown name, flags out of order, no base) has none, and whoever
// holds the state keeps that list's text instead (job_state_list.h does). Rendering the
// compact form gives back the list's exact text. Thread-safety: a plain value.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::slurm {

// Slurm's base job states (job_state_t), as `job_state[0]` names them.
enum class JobBaseState : uint8_t {
  kNone,         // an empty list: no base state reported
  kPending,      // queued
  kRunning,      // allocated and running
  kSuspended,    // allocated, suspended: resources still held
  kCompleted,    // ended, exit code 0
  kCancelled,    // cancelled by a user or an admin
  kFailed,       // ended with a non-zero exit code or failed to launch
  kTimeout,      // hit its time limit
  kNodeFail,     // a node of its allocation failed
  kPreempted,    // preempted
  kBootFail,     // a node failed to boot
  kDeadline,     // hit its deadline
  kOutOfMemory,  // ended out of memory
};

// Slurm's job state flags, `job_state[1..]`, one bit each; the bit order is the order in
// which slurmctld emits them.
enum class JobStateFlag : uint16_t {
  kLaunchFailed = 1 << 0,
  kRequeued = 1 << 1,
  kRequeueHold = 1 << 2,
  kSpecialExit = 1 << 3,
  kResizing = 1 << 4,
  kConfiguring = 1 << 5,  // nodes booting or the prolog running
  kCompleting = 1 << 6,   // the epilog runs: resources still held
  kStopped = 1 << 7,
  kReconfigFail = 1 << 8,
  kPowerUpNode = 1 << 9,
  kRevoked = 1 << 10,
  kRequeueFed = 1 << 11,
  kResvDelHold = 1 << 12,
  kSignaling = 1 << 13,
  kStageOut = 1 << 14,  // burst-buffer stage-out: resources still held
  kExpediting = 1 << 15,
};

inline constexpr std::array<JobBaseState, 12> kAllBaseStates = {
    JobBaseState::kPending,   JobBaseState::kRunning,   JobBaseState::kSuspended,
    JobBaseState::kCompleted, JobBaseState::kCancelled, JobBaseState::kFailed,
    JobBaseState::kTimeout,   JobBaseState::kNodeFail,  JobBaseState::kPreempted,
    JobBaseState::kBootFail,  JobBaseState::kDeadline,  JobBaseState::kOutOfMemory};
inline constexpr std::array<JobStateFlag, 16> kAllStateFlags = {
    JobStateFlag::kLaunchFailed, JobStateFlag::kRequeued,  JobStateFlag::kRequeueHold,
    JobStateFlag::kSpecialExit,  JobStateFlag::kResizing,  JobStateFlag::kConfiguring,
    JobStateFlag::kCompleting,   JobStateFlag::kStopped,   JobStateFlag::kReconfigFail,
    JobStateFlag::kPowerUpNode,  JobStateFlag::kRevoked,   JobStateFlag::kRequeueFed,
    JobStateFlag::kResvDelHold,  JobStateFlag::kSignaling, JobStateFlag::kStageOut,
    JobStateFlag::kExpediting};

class JobState {
 public:
  constexpr JobState() = default;
  constexpr JobState(JobBaseState base, uint16_t flags) : flags_(flags), base_(base) {}

  // The compact form of `names`, or nullopt when the list has none (see above).
  static std::optional<JobState> fromNames(const std::vector<std::string>& names);

  JobBaseState base() const { return base_; }
  uint16_t flags() const { return flags_; }
  bool has(JobStateFlag flag) const { return (flags_ & static_cast<uint16_t>(flag)) != 0; }

  // The list as Slurm sent it: the base first, then the flags.
  std::vector<std::string> names() const;
  bool sameNames(const std::vector<std::string>& names) const;  // without building names()

  bool operator==(const JobState&) const = default;

 private:
  uint16_t flags_ = 0;
  JobBaseState base_ = JobBaseState::kNone;
};

// Reads a job_state list one name at a time (as a decoder meets them) into its compact form,
// keeping the names themselves only once the list turns out to have none. Nothing is
// allocated for a list that has a compact form.
class JobStateNames {
 public:
  void add(std::string_view name);
  void clear();
  bool isCompact() const { return compact_; }
  // REQUIRES: isCompact().
  JobState state() const { return JobState(base_, flags_); }
  // The names as added. REQUIRES: !isCompact() (else state().names() gives them).
  std::vector<std::string>& verbatim() { return verbatim_; }

 private:
  bool compact_ = true;
  bool any_ = false;  // a name was added
  JobBaseState base_ = JobBaseState::kNone;
  uint16_t flags_ = 0;
  std::vector<std::string> verbatim_;
};

// Slurm's text of a base state ("" for kNone) and of a flag.
std::string_view jobStateName(JobBaseState base);
std::string_view jobStateName(JobStateFlag flag);
// The base state or flag Slurm names `name` (exact, upper case), or nullopt.
std::optional<JobBaseState> parseJobBaseState(std::string_view name);
std::optional<JobStateFlag> parseJobStateFlag(std::string_view name);

}  // namespace tuneplane::slurm
