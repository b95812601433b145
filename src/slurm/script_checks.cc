// See script_checks.h.
#include "slurm/script_checks.h"

#include <string>
#include <string_view>
#include "common/text_checks.h"

namespace tuneplane::slurm {
namespace {

constexpr std::size_t kMaxComponents = 128;
// Far above any framework's need (LlamaFactory: 10), so the count a node advertises stays a
// small number whatever its GPUs.
constexpr int kMaxRayCpusPerGpu = 1024;
// The script's own variables (tp_srun, tp_container, …) start with this; a job variable of
// that name, exported before `exec "$tp_srun"`, could otherwise replace what runs.
constexpr const char* kScriptVariablePrefix = "tp_";

bool isEnvName(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

class Collector {
 public:
  void add(std::string code, std::string field, std::string message) {
    errors_.push_back(Error{std::move(code), std::move(field), std::move(message)});
  }
  // Any string that reaches the script or the body.
  void noNul(std::string_view value, const std::string& field) {
    if (value.find('\0') != std::string_view::npos) {
      add("render.nul_byte", field, "contains a NUL byte, which a shell script cannot hold");
    }
    if (!isUtf8(value)) {
      add("render.not_utf8", field, "is not valid UTF-8, which the JSON submit body needs");
    }
  }
  // A path that goes into a bind list: absolute, no ',' or ':'.
  void bindPath(std::string_view value, const std::string& field) {
    noNul(value, field);
    if (value.empty() || value.front() != '/') {
      add("render.path_not_absolute", field, "must be an absolute path");
    }
    if (value.find_first_of(",:") != std::string_view::npos) {
      add("render.bind_separator", field,
          "contains ',' or ':', which Pyxis --container-mounts and Apptainer --bind cannot "
          "express");
    }
  }
  Errors take() { return std::move(errors_); }

 private:
  Errors errors_;
};

// The numbers the Ray part renders: Ray would refuse the rest when it starts (the site
// loader holds sites to the same rules; a launch.json is checked again here).
void checkRay(Collector& c, const catalog::RayConfig& ray) {
  for (const auto& [name, port] : ray.pinnedPorts()) {
    if (port < 1 || port > 65535) c.add("render.bad_ray_port", "ray." + name, "not a port");
  }
  if (ray.min_worker_port.has_value() != ray.max_worker_port.has_value() ||
      (ray.min_worker_port && *ray.max_worker_port <= *ray.min_worker_port)) {
    c.add("render.bad_ray_port", "ray.max_worker_port",
          "min_worker_port and max_worker_port come together, the second above the first");
  }
  if (ray.dashboard_port && !ray.dashboard) {
    c.add("render.bad_ray_port", "ray.dashboard_port", "set while the dashboard is off");
  }
  if (ray.join_timeout_seconds < 1) {
    c.add("render.bad_join_timeout", "ray.join_timeout_seconds", "must be at least 1");
  }
}

}  // namespace

Checked<void> checkRenderable(const launch::LaunchRequest& request) {
  Collector c;
  const auto& components = request.components;
  if (components.empty()) c.add("render.no_components", "components", "at least one is needed");
  if (components.size() > kMaxComponents) {
    c.add("render.too_many_components", "components", "slurmrestd takes at most 128");
  }
  if (!request.uses_gpus && components.size() > 1) {
    c.add("render.cpu_multi_component", "components", "a CPU-only job has exactly one pool");
  }
  for (std::size_t i = 0; i < components.size(); ++i) {
    const auto& comp = components[i];
    const std::string field = "components[" + std::to_string(i) + "]";
    const std::string& pool = comp.pool_name;
    c.noNul(pool, field + ".pool_name");
    if (pool.empty() || pool == "." || pool == ".." ||
        pool.find_first_of("/\\") != std::string::npos) {
      c.add("render.bad_pool_name", field + ".pool_name",
            "must be non-empty, not '.' or '..', without '/' or '\\' (it names log files)");
    }
    c.noNul(comp.partition, field + ".partition");
    if (comp.constraint) c.noNul(*comp.constraint, field + ".constraint");
    c.noNul(comp.gres_type, field + ".gres_type");
    for (std::size_t k = 0; k < comp.excluded_nodes.size(); ++k) {
      c.noNul(comp.excluded_nodes[k], field + ".excluded_nodes[" + std::to_string(k) + "]");
    }
    if (comp.nodes < 1) c.add("render.bad_nodes", field + ".nodes", "must be at least 1");
    if (comp.cpus_per_node < 1) {
      c.add("render.bad_cpus", field + ".cpus_per_node", "must be at least 1");
    }
    if (comp.scratch_mb < 0) c.add("render.bad_scratch", field + ".scratch_mb", "negative");
    if (request.uses_gpus && comp.gpus_per_node < 1) {
      c.add("render.gpu_component_without_gpus", field + ".gpus_per_node",
            "every component of a Ray (GPU) job needs GPUs");
    }
    if (!request.uses_gpus && (comp.nodes != 1 || comp.gpus_per_node != 0)) {
      c.add("render.cpu_topology", field, "a CPU-only job runs on one node without GPUs");
    }
  }
  c.noNul(request.job_name, "job_name");
  c.noNul(request.identity.submit_token, "identity.submit_token");
  c.noNul(request.identity.job_id, "identity.job_id");
  c.noNul(request.artifact.path, "artifact.path");
  if (request.artifact.path.empty() || request.artifact.path.front() != '/') {
    c.add("render.path_not_absolute", "artifact.path", "must be an absolute path");
  }
  if (!isSha256Hex(request.artifact.sha256)) {
    c.add("render.bad_sha256", "artifact.sha256", "must be 64 lower-case hex digits");
  }
  for (std::size_t i = 0; i < request.mounts.size(); ++i) {
    const std::string field = "mounts[" + std::to_string(i) + "]";
    c.bindPath(request.mounts[i].source, field + ".source");
    c.bindPath(request.mounts[i].target, field + ".target");
  }
  if (!request.container_output_dir.empty()) {  // the container's working directory
    c.bindPath(request.container_output_dir, "container_output_dir");
  }
  // The job's checkpoint directory: the script reads it on the host; both paths are mounted.
  if (!request.checkpoint_dir.empty() || !request.container_checkpoint_dir.empty()) {
    c.bindPath(request.checkpoint_dir, "checkpoint_dir");
    c.bindPath(request.container_checkpoint_dir, "container_checkpoint_dir");
  }
  if (request.resume_record != launch::ResumeRecord::kNone && request.checkpoint_dir.empty()) {
    c.add("render.resume_without_checkpoints", "resume_record",
          "a resume record reads the job's checkpoint directory, and there is none");
  }
  for (std::size_t i = 0; i < request.inputs.size(); ++i) {
    const std::string field = "inputs[" + std::to_string(i) + "]";
    const std::string& name = request.inputs[i].name;
    c.noNul(name, field + ".name");
    c.noNul(request.inputs[i].content, field + ".content");
    bool plain = !name.empty() && name.front() != '.';
    for (char ch : name) {
      plain = plain && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                        (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-');
    }
    if (!plain) {
      c.add("render.bad_input_name", field + ".name",
            "must be a plain file name: letters, digits, '.', '_', '-', not starting with '.'");
    }
  }
  if (request.ray_min_cpus_per_gpu < 0 || request.ray_min_cpus_per_gpu > kMaxRayCpusPerGpu) {
    c.add("render.bad_ray_cpus", "ray_min_cpus_per_gpu",
          "must be between 0 and " + std::to_string(kMaxRayCpusPerGpu));
  }
  for (std::size_t i = 0; i < request.command.size(); ++i) {
    c.noNul(request.command[i], "command[" + std::to_string(i) + "]");
  }
  if (request.command.empty()) c.add("render.no_command", "command", "nothing to run");
  const auto checkEnv = [&c](const auto& env, const std::string& name) {
    for (std::size_t i = 0; i < env.size(); ++i) {
      const std::string field = name + "[" + std::to_string(i) + "]";
      if (!isEnvName(env[i].first)) {
        c.add("render.bad_env_name", field, "name must match [A-Za-z_][A-Za-z0-9_]*");
      } else if (env[i].first.rfind(kScriptVariablePrefix, 0) == 0) {
        c.add("render.reserved_env_name", field,
              "names starting with 'tp_' are the batch script's own variables");
      }
      c.noNul(env[i].second, field);
    }
  };
  checkEnv(request.environment, "environment");
  checkEnv(request.scheduler_environment, "scheduler_environment");
  c.noNul(request.attempt_dir, "attempt_dir");
  c.noNul(request.logs_dir, "logs_dir");
  if (request.logs_dir.find('\\') != std::string::npos) {
    c.add("render.backslash_in_logs_dir", "logs_dir",
          "Slurm treats '\\' in output paths as an escape, so the logs would land elsewhere");
  }
  c.noNul(request.ray.executable, "ray.executable");
  checkRay(c, request.ray);
  if (request.account) c.noNul(*request.account, "account");
  if (request.qos) c.noNul(*request.qos, "qos");
  // The warning's signal is a word of the steps' `trap` and of the submit body (a launch.json
  // is checked again here, as the site loader checks the site).
  if (request.preemption_warning) {
    bool known = false;
    for (const char* name : catalog::kPreemptionSignals) {
      known = known || request.preemption_warning->signal == name;
    }
    if (!known) {
      c.add("render.bad_preemption_signal", "preemption_warning.signal",
            "must be one of " + catalog::preemptionSignalList());
    }
    const auto seconds = request.preemption_warning->before_end.count();
    if (seconds < 1 || seconds > 65535) {
      c.add("render.bad_preemption_delay", "preemption_warning.before_end",
            "must be whole seconds from 1 to 65535");
    }
  }
  // The script runs `umask <job_umask>` and Slurm reads SLURM_UMASK: four octal digits.
  if (!request.job_umask.empty() &&
      (request.job_umask.size() != 4 || request.job_umask.front() != '0' ||
       request.job_umask.find_first_not_of("01234567") != std::string::npos)) {
    c.add("render.bad_umask", "job_umask", "must be four octal digits starting with 0 (0022)");
  }
  Errors errors = c.take();
  if (!errors.empty()) return failAll(std::move(errors));
  return {};
}

}  // namespace tuneplane::slurm
