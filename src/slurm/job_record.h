// Typed views of the records slurmrestd v0.0.45 returns: a job (`GET /job/{id}`, `/jobs/`),
// the submit receipt, ping, partitions and nodes, and the `errors[]`/`warnings[]` every answer
// carries (the light state list of `/jobs/state/` is in job_state_list.h). answer_decoder.h
// fills them from an answer's bytes (shapes checked against tests/data/slurm/transcripts);
// unknown enum strings are kept verbatim, never guessed. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "slurm/job_state_list.h"

namespace tuneplane::slurm {

// Slurm's `{set, infinite, number}` form for numbers that may be unset or unlimited. A plain
// integer decodes as {set=true, infinite=false, number}.
struct NoValNumber {
  bool set = false;
  bool infinite = false;
  int64_t number = 0;

  // The number when it is set and finite.
  std::optional<int64_t> value() const {
    return set && !infinite ? std::optional<int64_t>(number) : std::nullopt;
  }
  bool operator==(const NoValNumber&) const = default;
};

struct ExitCode {
  std::vector<std::string> status;  // "SUCCESS", "ERROR", "SIGNALED", … verbatim
  NoValNumber return_code;
  NoValNumber signal_id;
  std::string signal_name;
  bool operator==(const ExitCode&) const = default;
};

// What the control plane needs of one job record (one het component).
struct JobRecord {
  uint64_t job_id = 0;
  // step_id.sluid, e.g. "sCC1M8VPKSJX00" (a string: values exceed 2^63) as decoded; from the
  // client, the job's key (job_key.h): the SLUID, or "<SLUID>@<id>" on a version whose paths
  // take no SLUID.
  std::string sluid;
  std::string name;
  std::string comment;
  std::string partition;
  std::string features;  // the constraint as Slurm reports it (`constraints` on submit)
  std::string account;
  std::string qos;
  std::string user_name;
  // Base state first, then flags in Slurm's order; unknown strings kept verbatim.
  std::vector<std::string> job_state;
  std::string state_reason;
  std::string state_description;
  ExitCode exit_code;
  ExitCode derived_exit_code;
  NoValNumber het_job_id;      // the leader's numeric id for a het component
  NoValNumber het_job_offset;  // 0, 1, … for het components
  std::string nodes;           // allocated node list, e.g. "gpu[1-2]"
  std::string batch_host;
  NoValNumber node_count;
  NoValNumber cpus;
  NoValNumber cpus_per_task;
  NoValNumber memory_per_node;  // MiB
  NoValNumber memory_per_cpu;
  NoValNumber submit_time;  // Unix seconds
  // When it started; while PENDING, Slurm's own estimate of when it will (set by the
  // backfill scheduler or a begin time; 0 while Slurm has none).
  NoValNumber start_time;
  // When it ends or ended; for a job being preempted, when Slurm ends it (the preemption's
  // time plus GraceTime).
  NoValNumber end_time;
  // When Slurm chose to preempt it (Unix seconds; 0 when it has not). A RUNNING job with
  // one is in its grace time: the warning signal was sent, and Slurm ends it PREEMPTED by
  // end_time (tests/data/slurm/transcripts/23_preemption.json).
  NoValNumber preempt_time;
  NoValNumber time_limit;       // minutes
  std::string standard_output;  // as submitted (patterns like %j unexpanded)
  std::string standard_error;
  std::string stdout_expanded;  // patterns expanded by slurmctld
  std::string stderr_expanded;
  std::string current_working_directory;
  std::string tres_per_node;  // e.g. "gres/gpu:2"
  std::string tres_alloc_str;
  std::vector<std::string> gres_detail;
  std::vector<std::string> flags;
  bool requeue = false;
  bool hold = false;
  int64_t restart_cnt = 0;
  // Slurm's scheduling priority (higher goes first; 0 while held). With start_time, what
  // a PENDING job's place in its partition's queue is read from (api/slurm_queue.h).
  NoValNumber priority;

  // The base state ("" when the record has none).
  const std::string& baseState() const;
  bool hasStateFlag(std::string_view flag) const;  // a flag after the base state
  bool isHetComponent() const { return het_job_id.value().value_or(0) != 0; }
  bool operator==(const JobRecord&) const = default;
};

// One entry of `errors[]` / `warnings[]`.
struct SlurmMessage {
  int error_number = 0;  // 0 for warnings
  std::string error;
  std::string description;
  std::string source;
  bool operator==(const SlurmMessage&) const = default;
};

struct SubmitReceipt {
  uint64_t job_id = 0;  // the leader's for a het job
  std::string step_id;  // "batch"
  std::string job_submit_user_msg;
  std::vector<SlurmMessage> warnings;
  std::vector<SlurmMessage> errors;
  bool operator==(const SubmitReceipt&) const = default;
};

struct ControllerPing {
  std::string hostname;
  bool responding = false;
  bool primary = false;
  int64_t latency_us = 0;
  std::string status;  // "No error", "Protocol authentication error", …
  bool operator==(const ControllerPing&) const = default;
};

struct PingResult {
  std::vector<ControllerPing> controllers;
  std::string release;      // meta.slurm.release, e.g. "26.05.3"
  std::string cluster;      // meta.slurm.cluster
  std::string data_parser;  // meta.plugin.data_parser, e.g. "data_parser/v0.0.45"
  bool anyResponding() const;
  bool operator==(const PingResult&) const = default;
};

struct JobListing {
  std::vector<JobRecord> jobs;
  bool unchanged = false;  // `update_time` given and nothing changed ("No job changes")
  NoValNumber last_update;
  std::vector<SlurmMessage> warnings;
  bool operator==(const JobListing&) const = default;
};

struct PartitionInfo {
  std::string name;
  std::string nodes;  // nodes.configured
  std::vector<std::string> state;
  int64_t total_cpus = 0;
  int64_t total_nodes = 0;
  // GraceTime: seconds a job selected for preemption is given before it ends (both versions);
  // unset when the record has none.
  std::optional<int64_t> grace_time;
  // PreemptMode (v0.0.45 only: CLUSTER_GLOBAL, DISABLED, SUSPEND, REQUEUE, CANCEL, PRIORITY);
  // unset when the record has none (v0.0.44 does not carry it).
  std::optional<std::vector<std::string>> preempt_mode;
  bool operator==(const PartitionInfo&) const = default;
};

struct NodeInfo {
  std::string name;
  std::vector<std::string> state;
  std::vector<std::string> features;
  std::vector<std::string> active_features;
  std::vector<std::string> partitions;
  std::string gres;  // e.g. "gpu:h100:2"
  int64_t cpus = 0;
  int64_t real_memory_mb = 0;
  std::string reason;
  bool operator==(const NodeInfo&) const = default;
};

}  // namespace tuneplane::slurm
