#include "sim/batch_env.h"

#include <map>
#include <string_view>

#include "sim/sluid.h"

namespace tuneplane::sim {

std::vector<std::string> batchEnvironment(const std::vector<const Job*>& components,
                                          const std::string& cluster_name,
                                          const std::string& bin_dir, const std::string& job_dir,
                                          bool with_sluid) {
  const Job& lead = *components.front();
  // Later entries win, as a real step's SLURM_* values override the submitted ones.
  std::map<std::string, std::string> env;
  std::vector<std::string> order;
  auto set = [&](const std::string& k, const std::string& v) {
    if (!env.count(k)) order.push_back(k);
    env[k] = v;
  };
  for (const auto& kv : lead.request.environment) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  const std::string path = env.count("PATH") ? env["PATH"] : "/usr/local/bin:/usr/bin:/bin";
  set("PATH", bin_dir + ":" + path);
  const std::string nodelist = compressHostlist(lead.alloc_nodes);
  const std::string nnodes = std::to_string(lead.alloc_nodes.size());
  set("SLURM_JOB_ID", std::to_string(lead.id));
  set("SLURM_JOBID", std::to_string(lead.id));
  if (with_sluid) set("SLURM_JOB_SLUID", formatSluid(lead.sluid));
  set("SLURM_JOB_NAME", lead.request.name);
  set("SLURM_JOB_NODELIST", nodelist);
  set("SLURM_NODELIST", nodelist);
  set("SLURM_JOB_NUM_NODES", nnodes);
  set("SLURM_NNODES", nnodes);
  set("SLURM_SUBMIT_DIR", lead.request.cwd);
  set("SLURM_SUBMIT_HOST", "localhost");
  set("SLURM_CLUSTER_NAME", cluster_name);
  set("SLURM_JOB_PARTITION", lead.request.partition);
  // env.c sets it only for a job started again (requeued): never "0".
  if (lead.restart_count > 0) set("SLURM_RESTART_COUNT", std::to_string(lead.restart_count));
  set("SLURMD_NODENAME", lead.alloc_nodes.empty() ? "" : lead.alloc_nodes.front());
  set("SLURM_JOB_USER", lead.user);
  set("SLURM_JOB_UID", std::to_string(lead.user_id));
  set("SLURM_JOB_GID", std::to_string(lead.group_id));
  set("SLURM_JOB_CPUS_PER_NODE", std::to_string(lead.alloc_cpus_per_node) +
                                     (lead.alloc_nodes.size() > 1 ? "(x" + nnodes + ")" : ""));
  set("SLURM_CPUS_ON_NODE", std::to_string(lead.alloc_cpus_per_node));
  set("SLURM_MEM_PER_NODE", std::to_string(lead.alloc_mem_per_node));
  set("SLURM_NODEID", "0");
  set("SLURM_PROCID", "0");
  set("SLURM_LOCALID", "0");
  set("SLURM_TASK_PID", "0");
  set("SLURM_GTIDS", "0");
  const Charge& charge = lead.request.charge;
  set("SLURM_JOB_QOS", charge.qos.empty() ? "normal" : charge.qos);
  set("SLURM_JOB_ACCOUNT", charge.account);
  set("SLURM_PRIO_PROCESS", "0");
  set("SLURM_SCRIPT_CONTEXT", "prolog_task");
  set("ENVIRONMENT", "BATCH");
  if (lead.alloc_gpus_per_node > 0) {
    std::string ids;
    for (int i = 0; i < lead.alloc_gpus_per_node; ++i) ids += (i ? "," : "") + std::to_string(i);
    set("SLURM_JOB_GPUS", ids);
    set("CUDA_VISIBLE_DEVICES", ids);
    set("GPU_DEVICE_ORDINAL", ids);
  }
  if (lead.isHet()) {
    set("SLURM_HET_SIZE", std::to_string(components.size()));
    for (size_t i = 0; i < components.size(); ++i) {
      const Job& c = *components[i];
      const std::string n = std::to_string(i);
      set("SLURM_JOB_ID_HET_GROUP_" + n, std::to_string(c.id));
      set("SLURM_JOB_NODELIST_HET_GROUP_" + n, compressHostlist(c.alloc_nodes));
      set("SLURM_JOB_NUM_NODES_HET_GROUP_" + n, std::to_string(c.alloc_nodes.size()));
      set("SLURM_JOB_PARTITION_HET_GROUP_" + n, c.request.partition);
      set("SLURM_JOB_CPUS_PER_NODE_HET_GROUP_" + n, std::to_string(c.alloc_cpus_per_node));
    }
  }
  // For the stand-ins only (a real node has no such thing): where srun counts steps.
  set("TUNEPLANE_SLURMSIM_JOB_DIR", job_dir);
  std::vector<std::string> out;
  out.reserve(order.size());
  for (const auto& k : order) out.push_back(k + "=" + env[k]);
  return out;
}

std::optional<mode_t> submittedUmask(const std::vector<std::string>& environment) {
  constexpr std::string_view kName = "SLURM_UMASK=";
  std::optional<mode_t> found;
  for (const auto& kv : environment) {
    if (kv.rfind(kName, 0) != 0) continue;
    const std::string value = kv.substr(kName.size());
    found.reset();  // the last one wins, as in the step's environment
    if (value.empty() || value.size() > 4 ||
        value.find_first_not_of("01234567") != std::string::npos)
      continue;
    found = static_cast<mode_t>(std::stoul(value, nullptr, 8));
  }
  return found;
}

}  // namespace tuneplane::sim
