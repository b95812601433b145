// Slurm's pending reasons (`state_reason` of a PENDING job) that mean the job can never run
// as it was submitted: the request itself breaks a partition's, account's or QOS's rules,
// so waiting changes nothing until an administrator changes the configuration. Every other
// reason (Resources, Priority, QOSJobLimit, Dependency, …) is a wait. The names are Slurm's
// own, as job_state_reason_string (src/common/slurm_protocol_defs.c) spells them; the
// control loop cancels such a job after a grace period (site file: slurm.unrunnable_grace).
// Pure; thread-safe.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace tuneplane::slurm {

struct UnrunnableReason {
  std::string_view name;   // Slurm's state_reason, verbatim
  std::string_view words;  // what it means, for people
};

inline constexpr std::array<UnrunnableReason, 7> kUnrunnableReasons = {{
    {"BadConstraints", "no node can satisfy the job's constraints"},
    {"PartitionConfig", "the partition's configuration does not allow the job"},
    {"InvalidAccount", "the job's account is invalid"},
    {"InvalidQOS", "the job's QOS is invalid"},
    {"PartitionNodeLimit", "the job asks for more nodes than its partition allows"},
    {"PartitionTimeLimit", "the job's time limit exceeds its partition's time limit"},
    {"AccountNotAllowed", "the job's account may not use its partition"},
}};

// The words for `reason` when it is one of kUnrunnableReasons, else nullopt (a wait).
inline std::optional<std::string_view> unrunnableReason(std::string_view reason) {
  for (const auto& r : kUnrunnableReasons) {
    if (r.name == reason) return r.words;
  }
  return std::nullopt;
}

}  // namespace tuneplane::slurm
