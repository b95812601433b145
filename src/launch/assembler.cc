#include "launch/assembler.h"

#include <climits>
#include <iterator>
#include <optional>

#include "catalog/artifact_verifier.h"
#include "catalog/file_paths.h"
#include "common/name_suggestion.h"
#include "launch/attempt_identity.h"
#include "launch/error_codes.h"
#include "launch/framework_launch.h"
#include "spec/framework_rules.h"

namespace tuneplane::launch {
namespace {

using catalog::ArtifactFormat;
using catalog::ContainerRuntime;

constexpr const char* kDefaultSchedulerPath = "/usr/local/bin:/usr/bin:/bin";
constexpr int kMiBPerGiB = 1024;

std::string poolField(std::size_t i, const char* key) {
  return "spec.resources.pools[" + std::to_string(i) + "]." + key;
}

ArtifactFormat formatFor(ContainerRuntime runtime) {
  return runtime == ContainerRuntime::kPyxis ? ArtifactFormat::kSqsh : ArtifactFormat::kSif;
}

bool isCustomRuntime(const std::string& id) {
  return id.starts_with(catalog::kCustomRuntimePrefix);
}

// Collects every violation; each rule below adds at most one error per field. A rule runs
// only when each of its inputs is known (see known()), so on a partly read spec it never
// judges a default that stands in for a value the parser could not read.
class Assembler {
 public:
  // `partial`: null when `spec` is complete; else the spec as far as it parsed.
  Assembler(const spec::JobSpec& spec, const spec::PartialSpec* partial,
            const catalog::SiteConfig& site, const catalog::RuntimeRegistry& registry)
      : spec_(spec), site_(site), registry_(registry) {
    if (partial != nullptr) readable_.emplace(*partial);
  }

  // Every backend rule that can be judged, in rule order: the refusals, the runtime, the
  // time limit, then the pools (job-wide rules first, then each pool in order).
  Errors judge() {
    checkRules();
    return std::move(errors_);
  }

  Checked<LaunchRequest> run(const AttemptIdentity& identity, const std::string& attempt_dir,
                             const std::string& checkpoint_dir) {
    auto [runtime, components] = checkRules();
    checkAttemptDir(attempt_dir, checkpoint_dir);
    if (!errors_.empty()) return failAll(std::move(errors_));

    LaunchRequest out;
    out.job_name = spec_.metadata.name;
    out.identity = identity;
    out.framework = spec_.framework.name + "/" + spec_.framework.task;
    out.container_runtime = site_.container_runtime;
    out.artifact = Artifact{runtime->path, runtime->format, runtime->sha256};
    out.attempt_dir = attempt_dir;
    out.logs_dir = attempt_dir + "/logs";
    out.output_dir = attempt_dir + "/output";
    out.fence_dir = fenceDirFor(attempt_dir);
    // The attempt is mounted at the same path inside the container so that paths in the
    // environment file and the logs mean the same thing on the node and in the container.
    out.container_attempt_dir = out.attempt_dir;
    out.container_output_dir = out.output_dir;
    for (const catalog::SiteMount& m : site_.mounts) {
      out.mounts.push_back(Mount{m.source, m.target, m.read_only});
    }
    out.mounts.push_back(Mount{out.attempt_dir, out.container_attempt_dir, true});
    // The job's code, copied into the attempt when it is staged, read-only at /workdir.
    if (spec_.workdir) {
      out.workdir = Workdir{*spec_.workdir, "", out.attempt_dir + "/workdir", kContainerWorkdir};
      out.mounts.push_back(Mount{out.workdir->dir, out.workdir->container_dir, true});
    }
    out.mounts.push_back(Mount{out.output_dir, out.container_output_dir, false});
    // The job's checkpoint directory, at the same path inside as well (see above).
    out.checkpoint_dir = checkpoint_dir;
    out.container_checkpoint_dir = checkpoint_dir;
    if (!checkpoint_dir.empty()) {
      out.mounts.push_back(Mount{out.checkpoint_dir, out.container_checkpoint_dir, false});
    }
    out.components = std::move(components);
    out.time_limit_source = time_limit_source_;
    for (const Component& c : out.components) out.uses_gpus = out.uses_gpus || c.gpus_per_node > 0;
    out.command = spec_.framework.command;
    out.command.insert(out.command.end(), spec_.framework.args.begin(), spec_.framework.args.end());
    // std::map iterates in name order: the environment is sorted by name.
    for (const auto& [name, value] : spec_.framework.env) out.environment.emplace_back(name, value);
    out.environment.emplace_back("TUNEPLANE_JOB_ID", identity.job_id);
    out.environment.emplace_back("TUNEPLANE_ATTEMPT", std::to_string(identity.attempt));
    out.environment.emplace_back("TUNEPLANE_OUTPUT_DIR", out.container_output_dir);
    if (out.workdir) out.environment.emplace_back("TUNEPLANE_WORKDIR", out.workdir->container_dir);
    if (!checkpoint_dir.empty()) {
      out.environment.emplace_back("TUNEPLANE_CHECKPOINT_DIR", out.container_checkpoint_dir);
    }
    out.environment.emplace_back("TUNEPLANE_RESUME", spec_.retry.resume ? "1" : "0");
    // The signal Slurm sends every step's tasks before the end (slurm.preemption_warning): a
    // word from catalog::kPreemptionSignals; none when the site turned the warning off.
    if (site_.slurm.preemption_warning.enabled) {
      out.environment.emplace_back("TUNEPLANE_PREEMPT_SIGNAL",
                                   site_.slurm.preemption_warning.signal);
    }
    for (const auto& [name, value] : site_.slurm.job_environment) {
      out.scheduler_environment.emplace_back(name, value);
    }
    // slurmrestd refuses a submit whose environment is empty.
    if (out.scheduler_environment.empty()) {
      out.scheduler_environment.emplace_back("PATH", kDefaultSchedulerPath);
    }
    // The spec's choice (serve checked it against the user's token), else the site's.
    out.account = spec_.scheduling.account ? spec_.scheduling.account : site_.slurm.account;
    out.qos = spec_.scheduling.qos ? spec_.scheduling.qos : site_.slurm.qos;
    if (site_.slurm.identity == catalog::IdentityMode::kPerUser) out.job_umask = kPerUserJobUmask;
    if (site_.slurm.preemption_warning.enabled) {
      out.preemption_warning = site_.slurm.preemption_warning;
    }
    out.ray = site_.ray;
    // A first-class framework: TunePlane writes its command, config and environment.
    if (spec::launchedFromConfig(spec_.framework.name)) addLlamaFactoryLaunch(spec_, out);
    return out;
  }

 private:
  struct RulesOutcome {
    const catalog::Runtime* runtime;  // null when the runtime is unknown or not given
    std::vector<Component> components;
  };

  RulesOutcome checkRules() {
    checkRefusals();
    const catalog::Runtime* runtime = checkRuntime();
    resolveTimeLimit();
    std::vector<Component> components = checkTopology(runtime);
    return {runtime, std::move(components)};
  }

  void add(const char* code, std::string field, std::string message) {
    errors_.push_back(Error{code, std::move(field), std::move(message)});
  }

  // A field is known when it was read cleanly, or was legitimately left out (its default
  // then holds); a field with a structural error, or inside one, is not judged again.
  bool known(const std::string& field) const { return !readable_ || readable_->readable(field); }

  void checkRefusals() {
    if (known("kind") && spec_.kind != spec::JobKind::kTrainingJob) {
      add(codes::kKindNotSupported, "kind",
          std::string(spec::toString(spec_.kind)) +
              " cannot run on Slurm: there is no inbound path to a compute node; only "
              "TrainingJob is supported");
    }
    for (std::size_t i = 0; i < spec_.data.volumes.size(); ++i) {
      add(codes::kVolumesNotSupported, "spec.data.volumes[" + std::to_string(i) + "]",
          "volume '" + spec_.data.volumes[i].name +
              "' cannot be mounted on Slurm: the platform does not control the image's bind "
              "list; put the data on the shared filesystem and use a site mount");
    }
    if (known("spec.framework.image") && spec_.framework.image) {
      add(codes::kImageNotSupported, "spec.framework.image",
          "an OCI image is not materialised on Slurm; name a published SQSH/SIF runtime with "
          "spec.framework.runtime_id instead");
    }
  }

  const catalog::Runtime* checkRuntime() {
    const std::string field = "spec.framework.runtime_id";
    if (!known(field)) return nullptr;
    if (!spec_.framework.runtime_id) {
      add(codes::kRuntimeIdRequired, field,
          "required on Slurm: the id of a runtime in the site's runtime registry");
      return nullptr;
    }
    const std::string& id = *spec_.framework.runtime_id;
    const catalog::Runtime* runtime = registry_.find(id);
    if (runtime == nullptr) {
      std::vector<std::string> ids;
      for (const catalog::Runtime& r : registry_.runtimes) ids.push_back(r.id);
      add(codes::kUnknownRuntime, field,
          withSuggestion("'" + id + "' is not in the runtime registry", id, ids));
      return nullptr;
    }
    const ArtifactFormat needed = formatFor(site_.container_runtime);
    if (runtime->format != needed) {
      add(codes::kRuntimeFormatMismatch, field,
          "runtime '" + id + "' is a " + catalog::toString(runtime->format) +
              " image but this site runs " + catalog::toString(site_.container_runtime) +
              ", which needs " + catalog::toString(needed));
    }
    const std::string& framework = spec_.framework.name;
    if (!known("spec.framework.name")) return runtime;
    bool allowed = framework == "custom" && isCustomRuntime(id);
    for (const std::string& f : runtime->frameworks) allowed = allowed || f == framework;
    if (!allowed) {
      add(codes::kFrameworkNotInRuntime, field,
          "runtime '" + id + "' does not provide framework '" + framework + "'");
    }
    return runtime;
  }

  void checkAttemptDir(const std::string& attempt_dir, const std::string& checkpoint_dir) {
    if (auto problem = catalog::mountPathProblem(attempt_dir)) {
      add(codes::kInvalidAttemptDir, "", "attempt directory '" + attempt_dir + "' " + *problem);
    }
    if (checkpoint_dir.empty()) return;
    if (auto problem = catalog::mountPathProblem(checkpoint_dir)) {
      add(codes::kInvalidCheckpointDir, "",
          "checkpoint directory '" + checkpoint_dir + "' " + *problem);
    }
  }

  // The spec's limit, else the site's default, else none (the partition's default).
  void resolveTimeLimit() {
    const std::string field = "spec.resources.time_limit";
    if (!known(field)) return;
    const auto& limit = spec_.resources.time_limit;
    if (limit && limit->count() <= 0) {
      add(codes::kInvalidTimeLimit, field, "must be positive");
    } else if (limit) {
      time_limit_ = *limit;
      time_limit_source_ = TimeLimitSource::kSpec;
    } else if (site_.default_time_limit) {
      time_limit_ = *site_.default_time_limit;
      time_limit_source_ = TimeLimitSource::kSiteDefault;
    }
  }

  std::vector<Component> checkTopology(const catalog::Runtime* runtime) {
    const auto& pools = spec_.resources.pools;
    std::vector<Component> out;
    if (!known("spec.resources.pools")) return out;
    if (pools.empty()) {
      add(codes::kNoPools, "spec.resources.pools", "needs at least one pool");
      return out;
    }
    // Whether the job is CPU-only is certain only when every pool's GPU count is known.
    std::size_t gpu_pools = 0;
    std::size_t cpu_pools = 0;
    for (std::size_t i = 0; i < pools.size(); ++i) {
      if (!known(poolField(i, "gpus_per_node"))) continue;
      (pools[i].gpus_per_node > 0 ? gpu_pools : cpu_pools) += 1;
    }
    if (gpu_pools > 0 && cpu_pools > 0) {
      add(codes::kMixedPools, "spec.resources.pools",
          "every pool must have GPUs, or none: a GPU job brings up Ray on every node of every "
          "pool, while CPU-only jobs are single-node custom jobs");
    }
    const bool cpu_only = cpu_pools == pools.size();
    if (cpu_only) checkCpuOnlyJob(runtime);
    for (std::size_t i = 0; i < pools.size(); ++i) {
      if (!known(poolField(i, "gpus_per_node"))) {
        Component c;
        checkCommon(i, c);
        out.push_back(std::move(c));
      } else {
        out.push_back(pools[i].gpus_per_node > 0 ? gpuComponent(i) : cpuComponent(i, cpu_only));
      }
    }
    return out;
  }

  void checkCpuOnlyJob(const catalog::Runtime* runtime) {
    const spec::Framework& f = spec_.framework;
    if (known("spec.framework.name") && known("spec.framework.task") &&
        (f.name != "custom" || f.task != "custom")) {
      add(codes::kCpuNeedsCustom, "spec.framework",
          "a CPU-only job (no pool has GPUs) must be custom/custom, not " + f.name + "/" + f.task);
    }
    if (spec_.resources.pools.size() != 1) {
      add(codes::kCpuSinglePool, "spec.resources.pools", "a CPU-only job has exactly one pool");
    }
    if (runtime != nullptr && !isCustomRuntime(runtime->id)) {
      add(codes::kCpuRuntimeNotCustom, "spec.framework.runtime_id",
          "a CPU-only job runs an explicit custom- runtime, not '" + runtime->id + "'");
    }
  }

  void checkCommon(std::size_t i, Component& c) {
    const spec::Pool& p = spec_.resources.pools[i];
    if (known(poolField(i, "nodes")) && p.nodes < 1) {
      add(codes::kNonPositiveResources, poolField(i, "nodes"), "must be >= 1");
    }
    if (known(poolField(i, "cpus")) && p.cpus < 1) {
      add(codes::kNonPositiveResources, poolField(i, "cpus"), "must be >= 1");
    }
    if (known(poolField(i, "memory_gb"))) {
      if (p.memory_gb < 1) {
        add(codes::kNonPositiveResources, poolField(i, "memory_gb"), "must be >= 1");
      } else if (p.memory_gb > INT_MAX / kMiBPerGiB) {
        add(codes::kTooLarge, poolField(i, "memory_gb"), "is too large");
      }
    }
    c.pool_name = p.name;
    c.nodes = p.nodes;
    c.cpus_per_node = p.cpus;
    c.memory_mb = p.memory_gb > INT_MAX / kMiBPerGiB ? 0 : p.memory_gb * kMiBPerGiB;
    c.time_limit = time_limit_;
  }

  Component cpuComponent(std::size_t i, bool cpu_only) {
    const spec::Pool& p = spec_.resources.pools[i];
    Component c;
    checkCommon(i, c);
    c.partition = p.partition.value_or(site_.partitions.cpu);
    checkPartition(i);
    if (!cpu_only) return c;  // a mixed job (already refused), or one not fully read
    if (known(poolField(i, "nodes")) && p.nodes > 1) {
      add(codes::kCpuMultiNode, poolField(i, "nodes"),
          "a CPU-only job runs on one machine (nodes: 1), not " + std::to_string(p.nodes));
    }
    // scratch_gb: 0 asks for no scratch, which is what a CPU-only job gets (issue 17).
    if (known(poolField(i, "scratch_gb")) && p.scratch_gb.value_or(0) > 0) {
      add(codes::kCpuScratch, poolField(i, "scratch_gb"),
          "scratch is not offered to CPU-only jobs (omit scratch_gb or set it to 0)");
    }
    if (known(poolField(i, "gpu_series")) && p.gpu_series) {
      add(codes::kCpuGpuSeries, poolField(i, "gpu_series"),
          "a pool with gpus_per_node 0 names no GPU series");
    }
    return c;
  }

  // A partition the pool names must be one the site lists, when it lists any: refused here
  // rather than by Slurm after staging.
  void checkPartition(std::size_t i) {
    const std::optional<std::string>& name = spec_.resources.pools[i].partition;
    if (!known(poolField(i, "partition")) || !name || site_.partitions.accepts(*name)) return;
    add(codes::kUnknownPartition, poolField(i, "partition"),
        withSuggestion("'" + *name + "' is not a partition this site offers", *name,
                       site_.partitions.known()));
  }

  Component gpuComponent(std::size_t i) {
    const spec::Pool& p = spec_.resources.pools[i];
    Component c;
    checkCommon(i, c);
    c.gpus_per_node = p.gpus_per_node;
    c.partition = p.partition.value_or(site_.partitions.gpu);
    checkPartition(i);
    if (known(poolField(i, "scratch_gb")) && p.scratch_gb) {
      if (*p.scratch_gb > INT_MAX / kMiBPerGiB) {
        add(codes::kTooLarge, poolField(i, "scratch_gb"), "is too large");
      } else {
        c.scratch_mb = *p.scratch_gb * kMiBPerGiB;
      }
    }
    if (!known(poolField(i, "gpu_series"))) return c;
    if (!p.gpu_series) {
      add(codes::kGpuSeriesRequired, poolField(i, "gpu_series"),
          "a pool with GPUs names the site's GPU series it runs on");
      return c;
    }
    const catalog::GpuSeries* series = site_.findGpuSeries(*p.gpu_series);
    if (series == nullptr) {
      std::vector<std::string> names;
      for (const catalog::GpuSeries& s : site_.gpu_series) names.push_back(s.name);
      add(codes::kUnknownGpuSeries, poolField(i, "gpu_series"),
          withSuggestion("'" + *p.gpu_series + "' is not a GPU series of this site", *p.gpu_series,
                         names));
      return c;
    }
    if (!series->slurm_constraint) {
      add(codes::kGpuSeriesWithoutConstraint, poolField(i, "gpu_series"),
          "GPU series '" + series->name +
              "' has no slurm_constraint in the site file, so its nodes cannot be pinned; ask the "
              "operator to set one");
    }
    if (p.gpus_per_node > series->gpus_per_node) {
      add(codes::kTooManyGpus, poolField(i, "gpus_per_node"),
          std::to_string(p.gpus_per_node) + " GPUs per node, but a " + series->name + " node has " +
              std::to_string(series->gpus_per_node));
    }
    c.constraint = series->slurm_constraint;
    c.gres_type = series->gres_type;
    return c;
  }

  const spec::JobSpec& spec_;
  std::optional<spec::ReadableFields> readable_;  // empty when the spec is complete
  const catalog::SiteConfig& site_;
  const catalog::RuntimeRegistry& registry_;
  std::chrono::minutes time_limit_{0};
  TimeLimitSource time_limit_source_ = TimeLimitSource::kPartitionDefault;
  Errors errors_;
};

}  // namespace

Checked<LaunchRequest> assembleLaunch(const spec::JobSpec& spec, const catalog::SiteConfig& site,
                                      const catalog::RuntimeRegistry& registry,
                                      const AttemptIdentity& identity,
                                      const std::string& attempt_dir,
                                      const std::string& checkpoint_dir) {
  return Assembler(spec, nullptr, site, registry).run(identity, attempt_dir, checkpoint_dir);
}

Errors judgeSpec(const spec::PartialSpec& spec, const catalog::SiteConfig& site,
                 const catalog::RuntimeRegistry& registry) {
  Errors all = spec.errors;
  Errors rules = Assembler(spec.spec, &spec, site, registry).judge();
  all.insert(all.end(), std::make_move_iterator(rules.begin()),
             std::make_move_iterator(rules.end()));
  return all;
}

Checked<LaunchRequest> prepareLaunch(const spec::JobSpec& spec, const catalog::SiteConfig& site,
                                     const catalog::RuntimeRegistry& registry,
                                     const AttemptIdentity& identity,
                                     const std::string& attempt_dir,
                                     const std::string& checkpoint_dir,
                                     catalog::ArtifactVerifier& verifier) {
  auto request = assembleLaunch(spec, site, registry, identity, attempt_dir, checkpoint_dir);
  if (!request) return request;
  const Status verified = verifier.verify(request->artifact.path, request->artifact.sha256,
                                          "spec.framework.runtime_id");
  if (!verified) return failAll({verified.error()});
  return request;
}

}  // namespace tuneplane::launch
