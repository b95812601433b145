// Slurm's pending reasons (`state_reason` of a PENDING job) that mean the job can never run
// as it was submitted: the request itself breaks a partition's, account's or QOS's rules,
// so waiting changes nothing until an administrator changes the configuration. Every other
// reason (Resources, Priority, QOSJobLimit, Dependency, …) is a wait; the common ones are
// in words below (kWaitReasons), for people. The names are Slurm's
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

// The waits users meet most (squeue(1), "JOB REASON CODES"), in words: why a pending job
// has not started yet. The API says them beside the code (api/job_waiting.h).
inline constexpr std::array<UnrunnableReason, 22> kWaitReasons = {{
    {"Priority", "jobs of higher priority are ahead of it in the partition's queue"},
    {"Resources", "waiting for enough nodes, CPUs, GPUs or memory to become free"},
    {"Dependency", "waiting for a job it depends on"},
    {"DependencyNeverSatisfied", "a job it depends on failed: it will never start"},
    {"BeginTime", "its start time has not come"},
    {"JobHeldUser", "held by its user"},
    {"JobHeldAdmin", "held by an administrator"},
    {"ReqNodeNotAvail", "a node it needs is not available (down, drained or reserved)"},
    {"NodeDown", "a node it needs is down"},
    {"PartitionDown", "its partition is down"},
    {"PartitionInactive", "its partition is inactive"},
    {"Reservation", "waiting for its reservation"},
    {"Licenses", "waiting for licenses"},
    {"QOSJobLimit", "its QOS runs as many jobs as it allows"},
    {"QOSMaxJobsPerUserLimit", "you run as many jobs as your QOS allows"},
    {"QOSGrpGRES", "its QOS's GPUs (or other GRES) are all in use"},
    {"QOSGrpCpuLimit", "its QOS's CPUs are all in use"},
    {"AssocGrpGRES", "your account's GPU (or other GRES) limit is reached"},
    {"AssocGrpCpuLimit", "your account's CPU limit is reached"},
    {"AssocMaxJobsLimit", "your account runs as many jobs as it allows"},
    {"AssocGrpJobsLimit", "your account's group runs as many jobs as it allows"},
    {"Prolog", "its nodes run their prolog"},
}};

// Why a pending job waits, in words: kWaitReasons' or kUnrunnableReasons' entry for
// `reason`; nullopt for "None", "" and a reason not in the tables (shown as its code).
inline std::optional<std::string_view> pendingReasonWords(std::string_view reason) {
  for (const auto& r : kWaitReasons) {
    if (r.name == reason) return r.words;
  }
  return unrunnableReason(reason);
}

}  // namespace tuneplane::slurm
