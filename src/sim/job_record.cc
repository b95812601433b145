#include "sim/job_record.h"

#include <csignal>
#include <cstring>

#include "sim/sluid.h"

namespace tuneplane::sim {
namespace {

using nlohmann::json;

std::string signalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? abbrev : "";
}

json exitCodeJson(const ExitCode& e) {
  json out = {
      {"status", json::array({e.status})},
      {"return_code", noVal(e.return_code, e.status != "SIGNALED")},
      {"signal",
       {{"id", noVal(e.signal, e.signal != 0)}, {"name", e.signal ? signalName(e.signal) : ""}}}};
  return out;
}

std::string tresString(int64_t cpus_per_node, int64_t mem_per_node, int64_t gpus_per_node,
                       int64_t nodes) {
  const int64_t cpus = cpus_per_node * nodes;
  std::string s = "cpu=" + std::to_string(cpus) + ",mem=" + std::to_string(mem_per_node * nodes) +
                  "M" + ",node=" + std::to_string(nodes) + ",billing=" + std::to_string(cpus);
  if (gpus_per_node > 0) s += ",gres/gpu=" + std::to_string(gpus_per_node * nodes);
  return s;
}

json jobResources(const Job& job, const ClusterConfig& cluster, const SimApi& api) {
  json res = api.job_template["job_resources"];
  json alloc = json::array();
  int index = 0;
  for (const auto& name : job.alloc_nodes) {
    const NodeConfig* node = cluster.node(name);
    const int node_cpus = node ? node->cpus : job.alloc_cpus_per_node;
    json sockets = json::array();
    for (int s = 0; s < node_cpus; ++s) {
      sockets.push_back(
          {{"index", s},
           {"cores",
            json::array(
                {{{"index", 0},
                  {"status",
                   json::array({s < job.alloc_cpus_per_node ? "ALLOCATED" : "UNALLOCATED"})}}})}});
    }
    alloc.push_back({{"index", index++},
                     {"name", name},
                     {"cpus", {{"count", job.alloc_cpus_per_node}, {"used", 0}}},
                     {"memory", {{"used", 0}, {"allocated", job.alloc_mem_per_node}}},
                     {"sockets", sockets}});
  }
  res["nodes"]["count"] = job.alloc_nodes.size();
  res["nodes"]["list"] = compressHostlist(job.alloc_nodes);
  res["nodes"]["allocation"] = alloc;
  res["cpus"] = job.alloc_cpus_per_node * static_cast<int>(job.alloc_nodes.size());
  return res;
}

}  // namespace

json noVal(int64_t number, bool set) {
  return {{"set", set}, {"infinite", false}, {"number", set ? number : 0}};
}

json jobStateArray(const Job& job) {
  // A requeue shows no REQUEUED or REQUEUE_HOLD flag (17_requeue_running, 17b): slurmctld
  // sets them only inside the requeue RPC.
  json state = json::array({job.base_state});
  if (job.completing) state.push_back("COMPLETING");
  return state;
}

json jobStateEntry(const Job& job) {
  std::string id = std::to_string(job.id);
  if (job.isHet()) id += "+" + std::to_string(job.het_offset);
  return {{"job_id", id}, {"state", jobStateArray(job)}};
}

std::string expandOutputPattern(const std::string& pattern, const Job& job,
                                const std::string& first_node) {
  const std::string p = pattern.empty() ? "slurm-%j.out" : pattern;
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != '%' || i + 1 >= p.size()) {
      out += p[i];
      continue;
    }
    const char c = p[++i];
    switch (c) {
      case 'j':
        out += std::to_string(job.id);
        break;
      case 'A':
        out += std::to_string(job.isHet() ? job.het_job_id : job.id);
        break;
      case 'a':
        out += "4294967294";
        break;
      case 'x':
        out += job.request.name;
        break;
      case 'S':
        out += formatSluid(job.sluid);
        break;
      case 'u':
        out += job.user;
        break;
      case 'N':
        out += first_node;
        break;
      case 'r':
        out += "0";
        break;
      case '%':
        out += '%';
        break;
      default:
        out += '%';
        out += c;
    }
  }
  if (!out.empty() && out[0] != '/') out = job.request.cwd + "/" + out;
  return out;
}

json jobRecord(const Job& job, const ClusterConfig& cluster, const SimApi& api) {
  json r = api.job_template;
  const JobRequest& q = job.request;
  const bool allocated = !job.alloc_nodes.empty();
  const int64_t nodes = allocated ? static_cast<int64_t>(job.alloc_nodes.size()) : q.nodes;
  const int cpus_per_node =
      allocated
          ? job.alloc_cpus_per_node
          : q.cpus_per_task * std::max(1, q.tasks_per_node > 0 ? q.tasks_per_node
                                                               : (q.tasks + q.nodes - 1) / q.nodes);
  const int64_t mem =
      allocated ? job.alloc_mem_per_node : q.memory_per_node_mb.value_or(cluster.default_memory_mb);

  r["accrue_time"] = noVal(job.submit_time);
  r["eligible_time"] = noVal(q.hold ? 0 : job.submit_time);
  r["submit_time"] = noVal(job.submit_time);
  r["last_sched_evaluation"] = noVal(job.submit_time);
  r["start_time"] = noVal(job.start_time);
  r["end_time"] = noVal(job.end_time);
  r["preempt_time"] = noVal(job.preempt_time);
  r["batch_host"] = allocated ? job.alloc_nodes.front() : "";
  r["batch_flag"] = true;
  json flags = json::array();
  if (job.start_time && job.base_state == "RUNNING") flags.push_back("JOB_WAS_RUNNING");
  if (q.memory_per_node_mb) flags.push_back("EXACT_MEMORY_REQUESTED");
  if (q.charge.default_account) flags.push_back("USING_DEFAULT_ACCOUNT");
  if (q.charge.default_qos) flags.push_back("USING_DEFAULT_QOS");
  flags.push_back("USING_DEFAULT_WCKEY");
  r["flags"] = flags;
  r["account"] = q.charge.account;
  r["qos"] = q.charge.qos;
  r["association_id"] = q.charge.association_id;
  r["cluster"] = cluster.name;
  r["comment"] = q.comment;
  r["billable_tres"] = noVal(0);
  r["billable_tres"]["number"] = static_cast<double>(cpus_per_node * nodes);
  r["cpus_per_task"] = noVal(q.cpus_per_task);
  r["exit_code"] = exitCodeJson(job.exit_code);
  r["derived_exit_code"] = exitCodeJson(ExitCode{});
  r["features"] = q.constraints;
  std::string excluded;
  for (const auto& n : q.excluded_nodes) excluded += (excluded.empty() ? "" : ",") + n;
  r["excluded_nodes"] = excluded;
  r["gres_detail"] = json::array();
  if (allocated && job.alloc_gpus_per_node > 0) {
    for (const auto& name : job.alloc_nodes) {
      const NodeConfig* n = cluster.node(name);
      std::string type = n && !n->gpu_type.empty() ? n->gpu_type + ":" : "";
      std::string idx =
          job.alloc_gpus_per_node == 1 ? "0" : "0-" + std::to_string(job.alloc_gpus_per_node - 1);
      r["gres_detail"].push_back("gpu:" + type + std::to_string(job.alloc_gpus_per_node) +
                                 "(IDX:" + idx + ")");
    }
  }
  r["group_id"] = job.group_id;
  r["group_name"] = job.group;
  r["het_job_id"] = noVal(job.het_job_id);
  r["het_job_offset"] = noVal(job.het_offset);
  std::string het_set;
  if (job.isHet() && !job.het_members.empty()) {
    het_set = std::to_string(job.het_members.front());
    if (job.het_members.size() > 1) het_set += "-" + std::to_string(job.het_members.back());
  }
  r["het_job_id_set"] = het_set;
  r["job_id"] = job.id;
  r["job_resources"] = allocated ? jobResources(job, cluster, api) : json(nullptr);
  r["job_state"] = jobStateArray(job);
  r["mail_user"] = job.user;
  r["name"] = q.name;
  r["nodes"] = allocated ? compressHostlist(job.alloc_nodes) : "";
  r["cpus"] = noVal(cpus_per_node * nodes);
  r["node_count"] = noVal(nodes);
  r["tasks"] = noVal(q.tasks);
  r["partition"] = q.partition;
  r["memory_per_node"] = noVal(mem);
  r["minimum_cpus_per_node"] = noVal(cpus_per_node);
  r["hold"] = q.hold;
  r["priority"] = noVal(q.hold ? 0 : 1);
  r["requeue"] = q.requeue;
  r["restart_cnt"] = job.restart_count;
  r["state_description"] = job.state_description;
  r["step_id"]["sluid"] = formatSluid(job.sluid);
  r["step_id"]["job_id"] = noVal(job.id);
  r["state_reason"] = job.reason;
  r["standard_input"] = q.standard_input;
  r["standard_output"] = q.standard_output.empty() ? "slurm-%j.out" : q.standard_output;
  r["standard_error"] = q.standard_error;
  const std::string first = allocated ? job.alloc_nodes.front() : "";
  r["stdin_expanded"] = q.standard_input.empty() ? "/dev/null" : q.standard_input;
  r["stdout_expanded"] = expandOutputPattern(q.standard_output, job, first);
  r["stderr_expanded"] = expandOutputPattern(
      q.standard_error.empty() ? q.standard_output : q.standard_error, job, first);
  r["time_limit"] = q.time_limit_min ? noVal(*q.time_limit_min) : noVal(0, false);
  r["tres_per_node"] = q.tres_per_node;
  r["tres_per_job"] = q.tres_per_job;
  r["tres_req_str"] = tresString(cpus_per_node, mem, q.gpus_per_node, nodes);
  r["tres_alloc_str"] = allocated ? tresString(cpus_per_node, mem, q.gpus_per_node, nodes) : "";
  r["user_id"] = job.user_id;
  r["user_name"] = job.user;
  r["current_working_directory"] = q.cwd;
  return r;
}

}  // namespace tuneplane::sim
