// The explicit launch: everything the batch script and the submit body need, with no
// defaults left to Slurm or to the image — the artifact, every mount, and the topology
// (one component per pool). Built by launch/assembler.h from a validated spec and the
// site catalog; rendered by slurm/script_renderer.h and slurm/submit_body.h.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catalog/runtime_registry.h"
#include "catalog/site_config.h"

namespace tuneplane::launch {

struct Artifact {
  std::string path;  // absolute
  catalog::ArtifactFormat format = catalog::ArtifactFormat::kSqsh;
  std::string sha256;  // verified on the control plane before rendering, and on the node

  bool operator==(const Artifact&) const = default;
};

struct Mount {
  std::string source;  // absolute path on the node
  std::string target;  // absolute path in the container
  bool read_only = true;

  bool operator==(const Mount&) const = default;
};

// One het-job component per spec pool, in pool order.
struct Component {
  std::string pool_name;
  std::string partition;
  std::optional<std::string> constraint;  // the GPU series' slurm_constraint; none for CPU
  int nodes = 1;
  int gpus_per_node = 0;
  std::string gres_type;  // empty: "gres/gpu:N", else "gres/gpu:TYPE:N"
  int cpus_per_node = 1;  // one task per node, with this many CPUs
  int memory_mb = 0;      // per node
  int scratch_mb = 0;     // per node local disk (spec scratch_gb * 1024); 0: none requested.
                          // Submit body: temporary_disk_per_node. GPU pools only.
  std::chrono::minutes time_limit{0};  // 0: none sent, the partition's default applies
  // Nodes this component must not get (Slurm's excluded_nodes): the ones an earlier attempt of
  // the job failed on, when the pool still fits without them (pipeline: retries that learn).
  std::vector<std::string> excluded_nodes;

  bool operator==(const Component&) const = default;
};

// Where a job's time limit comes from; every component gets the same limit.
enum class TimeLimitSource {
  kSpec,              // spec.resources.time_limit
  kSiteDefault,       // the spec sets none: the site's default_time_limit
  kPartitionDefault,  // neither sets one: no time_limit is sent, so the partition's
                      // DefaultTime (else its MaxTime) applies
};

// "spec", "site_default", "partition_default": the names in validate's JSON and launch.json.
inline const char* toString(TimeLimitSource source) {
  switch (source) {
    case TimeLimitSource::kSpec:
      return "spec";
    case TimeLimitSource::kSiteDefault:
      return "site_default";
    case TimeLimitSource::kPartitionDefault:
      return "partition_default";
  }
  return "?";
}

// A file TunePlane writes into the attempt directory beside job.sh, read-only like it: a
// first-class framework's configuration (LlamaFactory's YAML). The container sees it at
// <container_attempt_dir>/<name>.
struct StagedInput {
  std::string name;  // a plain file name ([A-Za-z0-9._-], not starting with '.')
  std::string content;

  bool operator==(const StagedInput&) const = default;
};

// What the batch script records, just before the driver starts, about the step this attempt
// starts from (logs/resume.json: slurm/script_renderer.h), for `describe`.
enum class ResumeRecord {
  kNone,            // nothing: the framework does not say (a custom job)
  kLastCheckpoint,  // the highest N of checkpoint_dir/checkpoint-N, 0 without one: where
                    // LlamaFactory (transformers' get_last_checkpoint) resumes
  kFromScratch,     // 0: the framework starts over (spec.retry.resume off)
};

// "none", "last_checkpoint", "from_scratch": the names in launch.json.
inline const char* toString(ResumeRecord record) {
  switch (record) {
    case ResumeRecord::kNone:
      return "none";
    case ResumeRecord::kLastCheckpoint:
      return "last_checkpoint";
    case ResumeRecord::kFromScratch:
      return "from_scratch";
  }
  return "?";
}

// Who this attempt is. The submit token is unique per attempt and goes into the Slurm
// job's comment, so a job whose receipt was lost can be found again.
struct AttemptIdentity {
  std::string job_id;  // TunePlane's job id (TUNEPLANE_JOB_ID)
  int attempt = 1;     // 1-based (TUNEPLANE_ATTEMPT)
  std::string submit_token;

  bool operator==(const AttemptIdentity&) const = default;
};

// Where a job's code folder (spec.workdir) is mounted, read-only, in the container; the job's
// TUNEPLANE_WORKDIR names it (docs/users.md, "Ship your code").
inline constexpr const char* kContainerWorkdir = "/workdir";

// The job's code folder, uploaded once (POST /v1/workdirs) and copied into each attempt's
// directory when it is staged (staging/workdir_store.h), so every attempt gets the same bytes.
struct Workdir {
  std::string sha256;         // lower-case hex: common/workdir_tree.h's workdirTreeSha256
  std::string source;         // where serve keeps the upload; "" when not known (offline render)
  std::string dir;            // attempt_dir/workdir: the attempt's copy
  std::string container_dir;  // kContainerWorkdir

  bool operator==(const Workdir&) const = default;
};

// The umask of a per_user job (LaunchRequest::job_umask): nothing is taken from the group and
// the others' read and search bits.
inline constexpr const char* kPerUserJobUmask = "0022";

struct LaunchRequest {
  std::string job_name;  // metadata.name; the Slurm job name
  AttemptIdentity identity;
  std::string framework;  // "name/task"
  catalog::ContainerRuntime container_runtime = catalog::ContainerRuntime::kPyxis;
  Artifact artifact;
  std::vector<Mount> mounts;  // site mounts, then the attempt dir, then the output dir
  std::vector<Component> components;
  TimeLimitSource time_limit_source = TimeLimitSource::kPartitionDefault;  // of components'
  bool uses_gpus = false;  // any component with GPUs: Ray across all nodes
  // argv of the entrypoint (spec command followed by args; for llamafactory, TunePlane's
  // `llamafactory-cli train <config>`), run inside the container.
  std::vector<std::string> command;
  // Reaches the process inside the container: user env, then TUNEPLANE_JOB_ID,
  // TUNEPLANE_ATTEMPT, TUNEPLANE_OUTPUT_DIR, TUNEPLANE_CHECKPOINT_DIR, TUNEPLANE_RESUME (and
  // the framework's own, e.g. USE_RAY). Order kept as given.
  std::vector<std::pair<std::string, std::string>> environment;
  // Files written into the attempt directory for the framework (its configuration).
  std::vector<StagedInput> inputs;
  // The batch step's own environment (the site's job_environment, e.g. PATH for srun);
  // goes into the submit body's `environment`.
  std::vector<std::pair<std::string, std::string>> scheduler_environment;
  std::string attempt_dir;            // on the shared filesystem; the job's working directory
  std::string logs_dir;               // attempt_dir/logs: Slurm's stdout/stderr per component
  std::string output_dir;             // where the job writes its results
  std::string container_attempt_dir;  // where attempt_dir is mounted inside the container
  std::string container_output_dir;   // where output_dir is mounted inside the container
  // The job-level fence (staging/job_fence.h): the script runs its command only while no later
  // attempt of the job has a mark there.
  std::string fence_dir;
  // The job's checkpoint directory, beside its attempts (<staging_root>/jobs/<id>/checkpoints):
  // one for every attempt, made when the first is staged and never replaced, writable by the
  // job, so attempt N+1 finds what attempt N saved. Only the job's current attempt runs to
  // write it (the exactly-once fence: docs/decisions.md). Empty: the job has none.
  std::string checkpoint_dir;
  std::string container_checkpoint_dir;  // where checkpoint_dir is mounted in the container
  // spec.workdir: nullopt when the job ships no code. Mounted read-only after the attempt dir.
  std::optional<Workdir> workdir;
  ResumeRecord resume_record = ResumeRecord::kNone;
  std::optional<std::string> account;
  std::optional<std::string> qos;
  // slurm.identity per_user: the umask the job runs with, kPerUserJobUmask — the batch
  // script's `umask` and the submit body's SLURM_UMASK (which Slurm applies to the stdout and
  // stderr files) — so that TunePlane, not in the job user's group, reads what the job writes
  // through the "other" bits, while the user's staging directory keeps every other user out
  // (staging/job_access.h). "": none set, Slurm's and the shell's own apply (shared mode).
  std::string job_umask;
  // slurm.preemption_warning, when on: the submit body's kill_warning_* fields and the job's
  // TUNEPLANE_PREEMPT_SIGNAL. nullopt: none asked (the site turned it off).
  std::optional<catalog::PreemptionWarning> preemption_warning;
  catalog::RayConfig ray;
  // The logical CPUs each Ray node advertises per GPU, at least: 0 for none beyond the CPUs
  // Slurm gave the node. A framework whose placement group asks a fixed number of CPUs per
  // GPU (LlamaFactory: 10) needs them advertised, or the group never becomes ready; Ray's
  // CPU resource is a count it schedules by, not a core (docs/decisions.md).
  int ray_min_cpus_per_gpu = 0;
};

}  // namespace tuneplane::launch
