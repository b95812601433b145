// The simulator's job model: what a submit asked for (JobRequest, one per het component)
// and what slurmctld would hold about it (Job). Plain values; the Simulator owns them
// under its lock. Base states and flags use Slurm's own spelling.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/accounting.h"

namespace tuneplane::sim {

// A reading of the simulator's steady clock (SimulatorOptions::clock): what every epilog, time
// limit, KillWait, requeue delay, MinJobAge and timed fault is scheduled on. A test that drives
// the clock moves all of them at once; `max()` is "not yet known" (an epilog waiting for its
// step to end).
using SimInstant = std::chrono::milliseconds;

// One component of a submit, as parsed from v0.0.45_job_desc_msg.
struct JobRequest {
  std::string name;
  std::string partition;  // resolved: the default partition when not given
  std::string cwd;
  std::vector<std::string> environment;
  std::string standard_output;  // pattern as given ("" = default slurm-%j.out)
  std::string standard_error;
  std::string standard_input;
  std::string comment;
  std::string account;  // as named ("" = none)
  std::string qos;      // as named ("" = none)
  std::string constraints;
  std::vector<std::string> excluded_nodes;  // never allocated (a list, or a CSV string)
  std::string tres_per_node;
  std::string tres_per_job;
  std::string script;  // component 0 only
  std::optional<int64_t> time_limit_min;
  int cpus_per_task = 1;
  int nodes = 1;
  int tasks = 1;
  int tasks_per_node = 0;  // 0 = not given
  std::optional<int64_t> memory_per_node_mb;
  std::optional<int64_t> memory_per_cpu_mb;
  bool hold = false;
  bool requeue = true;
  bool append_output = false;  // open_mode ["APPEND"]
  // --signal=[B:]SIG@T: kept as given, for tests to read. The simulator sends the signal at
  // a preemption (Simulator::preemptJob), not before the time limit.
  std::string kill_warning_signal;              // "" = none
  std::optional<int64_t> kill_warning_delay;    // seconds before the end
  std::vector<std::string> kill_warning_flags;  // e.g. BATCH_JOB
  // Derived at validation.
  int gpus_per_node = 0;
  std::string gpu_type;
  Charge charge;  // the account and QoS it is charged to (accounting.h)
};

// Slurm's exit_code record.
struct ExitCode {
  std::string status = "SUCCESS";  // SUCCESS | ERROR | SIGNALED
  int return_code = 0;
  int signal = 0;
};

struct Job {
  uint32_t id = 0;
  uint64_t sluid = 0;
  JobRequest request;
  std::string user;
  uint32_t user_id = 0;
  uint32_t group_id = 0;
  std::string group;

  std::string base_state = "PENDING";  // PENDING RUNNING COMPLETED FAILED CANCELLED TIMEOUT …
  bool completing = false;             // epilog still running: resources held
  std::string reason = "None";         // state_reason
  ExitCode exit_code;

  int64_t submit_time = 0;  // Unix seconds
  int64_t start_time = 0;
  int64_t end_time = 0;
  int64_t last_change = 0;  // Unix seconds; drives /jobs/?update_time=

  uint32_t het_job_id = 0;  // leader id, 0 when not a het job
  uint32_t het_offset = 0;
  std::vector<uint32_t> het_members;  // on the leader: every component's id, in order

  // Allocation (RUNNING and COMPLETING).
  std::vector<std::string> alloc_nodes;
  int alloc_cpus_per_node = 0;
  int64_t alloc_mem_per_node = 0;
  int alloc_gpus_per_node = 0;
  bool resources_held = false;

  // Process of the batch step (leader only).
  pid_t pid = -1;
  std::string kill_state;      // base state to take when the killed process ends
  SimInstant deadline{};       // time limit
  SimInstant kill_escalate{};  // SIGKILL after this
  SimInstant epilog_end{};
  std::string stdout_expanded;
  std::string stderr_expanded;
  bool purged = false;

  // Requeue (Simulator::requeueJob): `requeuing` while the killed batch step and the epilog
  // run; at the epilog's end the job pends again with a new SLUID (Slurm's
  // batch_requeue_fini), not eligible before `begin_after` (reason BeginTime), or held.
  bool requeuing = false;
  SimInstant begin_after{};
  int restart_count = 0;          // restart_cnt: how many times it was requeued
  std::string state_description;  // e.g. "job requeued in held state"
  std::string stuck_reason;       // Simulator::neverStart: pends with this reason, never starts
  bool purge_early = false;       // Simulator::purgeJob: forgotten as soon as it has ended
  // Simulator::preemptJob: when slurmctld chose to preempt it (Unix seconds; 0 when it has
  // not), and when its grace time ends on the simulator's clock (leader), at which it is
  // killed and ends PREEMPTED (23_preemption.json).
  int64_t preempt_time = 0;
  SimInstant grace_end = SimInstant::max();
  size_t history = static_cast<size_t>(-1);  // leader: its entry in the simulator's history

  bool finished() const { return base_state != "PENDING" && base_state != "RUNNING"; }
  bool isHet() const { return het_job_id != 0; }
};

}  // namespace tuneplane::sim
