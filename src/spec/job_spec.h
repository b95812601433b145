// The job spec a user submits, as plain values (Kubernetes style: apiVersion, kind,
// metadata, spec). Parsed from YAML or JSON by spec_parser.h, which also runs the
// structural checks. This module is pure and knows nothing of Slurm or of the site.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tuneplane::spec {

inline constexpr const char* kApiVersion = "tuneplane.io/v1";

enum class JobKind {
  kTrainingJob,      // the only kind the Slurm backend runs
  kPlayground,       // parses; refused by launch/ (no inbound path to a compute node)
  kModelDeployment,  // parses; refused by launch/ (same reason)
};

enum class RetryOn {
  kInfrastructure,  // retry only failures outside the user's code (node failure, lost job…)
  kAny,             // retry any failure, including a non-zero exit of the user's command
  kNever,           // never retry a failure
};
// A preemption is not a failure: retry.on does not govern it (max_preemptions does).

// Preemptions a job is retried after by default: a site that preempts may do so often, and
// a preemption is not the job's fault (docs/decisions.md, "Preemption is not failure
// (issue 47)").
inline constexpr int kDefaultMaxPreemptions = 10;

struct Metadata {
  std::string name;  // DNS label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters
  std::map<std::string, std::string> labels;

  bool operator==(const Metadata&) const = default;
};

struct Framework {
  std::string name;                       // e.g. "custom", "llamafactory"
  std::string task;                       // e.g. "custom", "sft"
  std::optional<std::string> runtime_id;  // id in the runtime registry
  std::optional<std::string> image;       // OCI image; refused on Slurm
  std::vector<std::string> command;       // argv of the entrypoint (not for llamafactory)
  std::vector<std::string> args;          // appended to command
  std::map<std::string, std::string> env;
  // A first-class framework's own configuration (LlamaFactory's keys), a JSON object: the
  // values as YAML 1.2 and JSON read them (framework_config.h). Set only for llamafactory
  // jobs, which TunePlane launches from it instead of a command (framework_rules.h).
  std::optional<nlohmann::json> config;

  bool operator==(const Framework&) const = default;
};

struct Pool {
  std::string name;                       // DNS label; unique within the job
  std::optional<std::string> gpu_series;  // required when gpus_per_node > 0
  int nodes = 1;                          // >= 1
  int gpus_per_node = 0;                  // >= 0
  int cpus = 0;                           // per node, >= 1 (required)
  int memory_gb = 0;                      // per node, >= 1 (required)
  std::optional<int> scratch_gb;          // >= 0 when given; refused for CPU-only jobs
  std::optional<std::string> partition;   // else the site's gpu/cpu default

  bool operator==(const Pool&) const = default;
};

struct Resources {
  // From "90m", "2h", "1d", "1h30m"; > 0 when set. Unset: the site's default_time_limit
  // applies, else the partition's default (launch/ decides which).
  std::optional<std::chrono::minutes> time_limit;
  std::vector<Pool> pools;  // at least one

  bool operator==(const Resources&) const = default;
};

struct Volume {
  std::string name;  // what the user wrote, kept only to name it in the refusal

  bool operator==(const Volume&) const = default;
};

struct Data {
  std::vector<Volume> volumes;  // any entry is refused on Slurm

  bool operator==(const Data&) const = default;
};

struct RetryPolicy {
  int max_attempts = 1;     // >= 1, total attempts including the first; preempted ones
                            // are not counted
  int backoff_seconds = 0;  // >= 0, wait before the next attempt
  RetryOn on = RetryOn::kInfrastructure;
  // Whether a retried attempt continues from what earlier attempts left in the job's
  // checkpoint directory (TUNEPLANE_CHECKPOINT_DIR): LlamaFactory resumes from its highest
  // checkpoint; false makes it start over (overwrite_output_dir) and tells a custom job
  // TUNEPLANE_RESUME=0.
  bool resume = true;
  // >= 0: preempted attempts retried, whatever `on` says, without using one of
  // max_attempts; 0 ends the job Failed (cause preempted) at its first preemption.
  int max_preemptions = kDefaultMaxPreemptions;

  bool operator==(const RetryPolicy&) const = default;
};

// What Slurm charges the job to, chosen among what the submitting user may use (serve checks
// the choice against the user's token: server.tokens[].slurm_account, .qos). Unset: the
// user's default, which serve writes into the spec it stores, else the site's
// slurm.account / slurm.qos.
struct Scheduling {
  std::optional<std::string> account;  // Slurm account (fair share, accounting)
  std::optional<std::string> qos;      // Slurm QOS

  bool operator==(const Scheduling&) const = default;
};

struct JobSpec {
  std::string api_version;  // kApiVersion
  JobKind kind = JobKind::kTrainingJob;
  Metadata metadata;
  Framework framework;
  Resources resources;
  Data data;
  RetryPolicy retry;
  Scheduling scheduling;
  // spec.workdir, "sha256:<64 hex>" in the text: the job's code folder, uploaded before
  // (POST /v1/workdirs; `tuneplane submit --workdir DIR`), bound read-only at /workdir. Held
  // here as the 64 lower-case hex digits; nullopt: the job ships no code.
  std::optional<std::string> workdir;

  bool operator==(const JobSpec&) const = default;
};

const char* toString(JobKind kind);
const char* toString(RetryOn on);

}  // namespace tuneplane::spec
