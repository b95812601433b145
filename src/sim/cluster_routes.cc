// slurmrestd's routes of the cluster's resources, simulated: GET partitions, nodes and
// licenses, from the cluster file (cluster.h) and the jobs that hold resources now; and GET
// conf, the controller's configuration, of which only what the simulator has is shown.
// Dispatched by http_routes.cc.
#include <algorithm>

#include "sim/job_record.h"
#include "sim/scheduler.h"
#include "sim/simulator_impl.h"

namespace tuneplane::sim {

void SimulatorImpl::routeLicenses(const SimApi& api, httplib::Response& res, bool auth_ok) {
  if (!auth_ok) {
    ApiError e{511, kErrAuth, "slurm_load_licenses() was unable to load licenses",
               "op_handler_licenses", ""};
    return sendJson(api, res, 511,
                    {{"licenses", json::array()},
                     {"last_update", noVal(0)},
                     {"errors", json::array({e.toJson()})}});
  }
  sendJson(
      api, res, 200,
      {{"licenses", json::array()},
       {"last_update", noVal(nowUnix())},
       {"warnings", json::array({{{"description", "Zero licenses to dump"}, {"source", ""}}})}});
}

void SimulatorImpl::routeConf(const SimApi& api, httplib::Response& res, bool auth_ok) {
  // The version's real OpenAPI document lists the route, or the version has none (v0.0.44).
  const std::string path = "/slurm/" + api.name + "/conf";
  if (std::find(api.paths.begin(), api.paths.end(), path) == api.paths.end()) {
    return sendText(res, 404, kUnknownEndpointText);
  }
  if (!auth_ok) {
    ApiError e{511, kErrAuth, "Unable to query configuration", "slurm_load_ctl_conf()", ""};
    return sendJson(api, res, 511, {{"errors", json::array({e.toJson()})}});
  }
  // 24_conf's slurm_conf holds ~200 settings; the simulator shows the ones it has, in their
  // real names and types. PreemptParameters is an array (v0.0.45's csv_string).
  const PreemptionSettings& preemption = cluster_.preemption;
  json conf = {{"ClusterName", cluster_.name},
               {"PreemptType", preemption.type},
               {"PreemptMode", preemption.mode},
               {"PreemptParameters", preemption.parameters},
               {"PreemptExemptTime", noVal(0)}};
  json conf_meta = {{"LastUpdate", nowUnix()}, {"SLURM_VERSION", release().release}};
  sendJson(api, res, 200, {{"slurm_conf", conf}, {"slurm_conf_meta", conf_meta}});
}

void SimulatorImpl::routePartitions(const SimApi& api, httplib::Response& res, bool auth_ok) {
  // A refused token: 511 and nothing else, not even the error (13f_auth_probe).
  if (!auth_ok) return sendJson(api, res, 511, json::object());
  json parts = json::array();
  for (const auto& p : cluster_.partitions) {
    json r = api.partition_template;
    int cpus = 0;
    for (const auto& n : p.nodes)
      if (const NodeConfig* node = cluster_.node(n)) cpus += node->cpus;
    r["name"] = p.name;
    r["cluster"] = cluster_.name;
    r["nodes"]["configured"] = compressHostlist(p.nodes);
    r["nodes"]["total"] = p.nodes.size();
    r["nodes"]["allowed_allocation"] = "";
    r["cpus"]["total"] = cpus;
    r["partition"]["state"] = json::array({"UP"});
    // Only where the version has it (v0.0.44's partition_info has no `flags`).
    if (r.contains("flags")) r["flags"] = p.is_default ? json::array({"DEFAULT"}) : json::array();
    // A partition without a PreemptMode of its own takes the cluster's (GET /conf), as
    // 26.05.3 shows it (v0.0.44's partition_info has no preempt_mode).
    if (r.contains("preempt_mode")) r["preempt_mode"] = json::array({"CLUSTER_GLOBAL"});
    r["maximums"]["time"] = json{{"set", true}, {"infinite", true}, {"number", 0}};
    r["defaults"]["time"] = json{{"set", true}, {"infinite", true}, {"number", 0}};
    parts.push_back(r);
  }
  // The test cluster runs no slurmdbd, and slurmrestd says what it could not ask (13f).
  json warnings = json::array();
  if (!storesAccounting()) {
    warnings.push_back({{"description",
                         "Slurm accounting storage is disabled. Could not query the following: "
                         "[TRES]."},
                        {"source", ""}});
  }
  sendJson(api, res, 200,
           {{"partitions", parts}, {"last_update", noVal(nowUnix())}, {"warnings", warnings}});
}

void SimulatorImpl::routeNodes(const SimApi& api, httplib::Response& res, bool auth_ok) {
  if (!auth_ok) {
    ApiError e{511, kErrAuth, "Unable to query nodes", "slurm_load_node()", ""};
    return sendJson(api, res, 511,
                    {{"nodes", json::array()},
                     {"last_update", noVal(0)},
                     {"errors", json::array({e.toJson()})}});
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, NodeUsage> used;
  for (const auto& [id, job] : jobs_) {
    if (!job.resources_held) continue;
    for (const auto& n : job.alloc_nodes) {
      used[n].cpus += job.alloc_cpus_per_node;
      used[n].memory_mb += job.alloc_mem_per_node;
      used[n].gpus += job.alloc_gpus_per_node;
    }
  }
  json nodes = json::array();
  for (const auto& n : cluster_.nodes) {
    json r = api.node_template;
    const NodeUsage u = used[n.name];
    r["name"] = r["hostname"] = r["address"] = n.name;
    r["cluster_name"] = cluster_.name;
    r["cpus"] = r["effective_cpus"] = n.cpus;
    r["sockets"] = n.cpus;
    r["cores"] = 1;
    r["threads"] = 1;
    r["boards"] = 1;
    r["real_memory"] = n.memory_mb;
    r["alloc_cpus"] = u.cpus;
    r["alloc_idle_cpus"] = n.cpus - u.cpus;
    r["alloc_memory"] = u.memory_mb;
    r["features"] = n.features;
    r["active_features"] = n.features;
    r["gres"] = n.gpus > 0
                    ? "gpu:" + (n.gpu_type.empty() ? "" : n.gpu_type + ":") + std::to_string(n.gpus)
                    : "";
    r["gres_used"] =
        n.gpus > 0 ? "gpu:" + (n.gpu_type.empty() ? "" : n.gpu_type + ":") + std::to_string(u.gpus)
                   : "";
    const char* state = u.cpus == 0 ? "IDLE" : (u.cpus < n.cpus ? "MIXED" : "ALLOCATED");
    r["state"] = json::array({state});
    json partitions = json::array();
    for (const auto& p : cluster_.partitions)
      for (const auto& pn : p.nodes)
        if (pn == n.name) partitions.push_back(p.name);
    r["partitions"] = partitions;
    r["tres"] = "cpu=" + std::to_string(n.cpus) + ",mem=" + std::to_string(n.memory_mb) + "M" +
                (n.gpus > 0 ? ",gres/gpu=" + std::to_string(n.gpus) : "");
    r["version"] = release().release;
    r["operating_system"] = "Linux (simulated)";
    r["architecture"] = "x86_64";
    nodes.push_back(r);
  }
  sendJson(api, res, 200, {{"nodes", nodes}, {"last_update", noVal(nowUnix())}});
}

}  // namespace tuneplane::sim
