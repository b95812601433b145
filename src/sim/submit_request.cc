#include "sim/submit_request.h"

#include <algorithm>
#include <sstream>

namespace tuneplane::sim {
namespace {

using nlohmann::json;

// Numbers may come plain or as {"set", "infinite", "number"} (v0.0.45_uint32_no_val).
std::optional<int64_t> numberField(const json& job, const char* key) {
  const auto it = job.find(key);
  if (it == job.end() || it->is_null()) return std::nullopt;
  if (it->is_number()) return it->get<int64_t>();
  if (it->is_object()) {
    if (!it->value("set", true) || it->value("infinite", false)) return std::nullopt;
    const auto n = it->find("number");
    if (n != it->end() && n->is_number()) return n->get<int64_t>();
  }
  if (it->is_string()) {
    try {
      return std::stoll(it->get<std::string>());
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string stringField(const json& job, const char* key) {
  const auto it = job.find(key);
  return it != job.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// data_parser's names for JSON types in "Ignoring unknown field" warnings.
std::string parserTypeName(const json& v) {
  if (v.is_number_float()) return "floating point number";
  if (v.is_number()) return "64 bit integer";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_array()) return "list";
  if (v.is_object()) return "dictionary";
  return "null";
}

std::vector<std::string> splitAny(const std::string& s, const std::string& seps);

JobRequest parseComponent(const json& job, const std::string& path, json& warnings,
                          const SimApi& api) {
  JobRequest r;
  for (const auto& [key, value] : job.items()) {
    if (!api.isJobDescField(key)) {
      warnings.push_back(
          {{"description", "Ignoring unknown field \"" + key + "\" of type " +
                               parserTypeName(value) + " in DATA_PARSER_JOB_DESC_MSG"},
           {"source", path + key + "/"}});
    }
  }
  r.name = stringField(job, "name");
  r.partition = stringField(job, "partition");
  r.cwd = stringField(job, "current_working_directory");
  if (const auto env = job.find("environment"); env != job.end() && env->is_array())
    for (const auto& e : *env)
      if (e.is_string()) r.environment.push_back(e.get<std::string>());
  r.standard_output = stringField(job, "standard_output");
  r.standard_error = stringField(job, "standard_error");
  r.standard_input = stringField(job, "standard_input");
  r.comment = stringField(job, "comment");
  r.account = stringField(job, "account");
  r.qos = stringField(job, "qos");
  r.constraints = stringField(job, "constraints");
  if (const auto x = job.find("excluded_nodes"); x != job.end()) {
    if (x->is_array()) {
      for (const auto& n : *x)
        if (n.is_string()) r.excluded_nodes.push_back(n.get<std::string>());
    } else if (x->is_string()) {
      r.excluded_nodes = splitAny(x->get<std::string>(), ",");
    }
  }
  r.tres_per_node = stringField(job, "tres_per_node");
  r.tres_per_job = stringField(job, "tres_per_job");
  r.script = stringField(job, "script");
  r.time_limit_min = numberField(job, "time_limit");
  r.cpus_per_task = static_cast<int>(numberField(job, "cpus_per_task").value_or(1));
  r.nodes = static_cast<int>(numberField(job, "minimum_nodes").value_or(1));
  if (const auto n = stringField(job, "nodes"); !n.empty()) {
    try {
      r.nodes = std::stoi(n);
    } catch (...) {
    }
  }
  r.tasks_per_node = static_cast<int>(numberField(job, "tasks_per_node").value_or(0));
  r.tasks = static_cast<int>(
      numberField(job, "tasks")
          .value_or(r.tasks_per_node > 0 ? r.tasks_per_node * std::max(1, r.nodes) : 1));
  r.memory_per_node_mb = numberField(job, "memory_per_node");
  r.memory_per_cpu_mb = numberField(job, "memory_per_cpu");
  if (const auto h = job.find("hold"); h != job.end() && h->is_boolean()) r.hold = *h;
  if (const auto q = job.find("requeue"); q != job.end() && q->is_boolean()) r.requeue = *q;
  if (const auto m = job.find("open_mode"); m != job.end() && m->is_array())
    r.append_output = std::find(m->begin(), m->end(), json("APPEND")) != m->end();
  r.kill_warning_signal = stringField(job, "kill_warning_signal");
  r.kill_warning_delay = numberField(job, "kill_warning_delay");
  if (const auto f = job.find("kill_warning_flags"); f != job.end() && f->is_array())
    for (const auto& flag : *f)
      if (flag.is_string()) r.kill_warning_flags.push_back(flag.get<std::string>());
  if (r.nodes < 1) r.nodes = 1;
  if (r.cpus_per_task < 1) r.cpus_per_task = 1;
  return r;
}

std::vector<std::string> splitAny(const std::string& s, const std::string& seps) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (seps.find(c) != std::string::npos) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool knownFeature(const ClusterConfig& cluster, const std::string& feature) {
  for (const auto& n : cluster.nodes)
    if (std::find(n.features.begin(), n.features.end(), feature) != n.features.end()) return true;
  return false;
}

ApiError submitError(bool het, int number, const SimRelease& release) {
  return ApiError{release.refusal_status, number,
                  het ? "HetJob submission failed" : "Batch job submission failed",
                  het ? "slurm_submit_batch_het_job()" : "slurm_submit_batch_job()", ""};
}

}  // namespace

int parseGpuTres(const std::string& tres, std::string* type) {
  // Accepts a comma list; only the gres/gpu entry counts.
  for (const auto& item : splitAny(tres, ",")) {
    const auto parts = splitAny(item, ":");
    if (parts.empty() || (parts[0] != "gres/gpu" && parts[0] != "gpu")) continue;
    if (parts.size() == 1) return 1;
    if (parts.size() == 2) {
      try {
        return std::stoi(parts[1]);
      } catch (...) {
        if (type) *type = parts[1];
        return 1;
      }
    }
    if (type) *type = parts[1];
    try {
      return std::stoi(parts[2]);
    } catch (...) {
      return 1;
    }
  }
  return 0;
}

bool featuresMatch(const std::string& constraints, const std::vector<std::string>& features) {
  if (constraints.empty()) return true;
  auto has = [&](const std::string& f) {
    return std::find(features.begin(), features.end(), f) != features.end();
  };
  // "a|b" any; "a&b" / "a,b" all. Brackets and counts are beyond the simulator.
  if (constraints.find('|') != std::string::npos) {
    for (const auto& f : splitAny(constraints, "|"))
      if (has(f)) return true;
    return false;
  }
  for (const auto& f : splitAny(constraints, "&,"))
    if (!has(f)) return false;
  return true;
}

SubmitOutcome planSubmit(const json& body, const ClusterConfig& cluster) {
  const SimApi& api = *findSimApi("v0.0.45");
  return planSubmit(body, cluster, api, api.release);
}

SubmitOutcome planSubmit(const json& body, const ClusterConfig& cluster, const SimApi& api,
                         const SimRelease& release, const Submitter& who) {
  SubmitOutcome out;
  auto reject = [&](ApiError e, Leftover leftover = Leftover::kNone,
                    std::vector<JobRequest> comps = {}) {
    out.accepted = false;
    out.rejection = SubmitRejection{std::move(e), leftover, std::move(comps)};
    return out;
  };
  const bool has_job = body.is_object() && body.contains("job");
  const bool has_jobs = body.is_object() && body.contains("jobs");
  if (has_job && has_jobs)
    return reject({422, kErrRestInvalidQuery,
                   "Specify only one \"job\" or \"jobs\" fields but never both", "_job_post", ""});
  SubmitPlan plan;
  plan.het = has_jobs;
  if (has_jobs) {
    const json& jobs = body["jobs"];
    if (!jobs.is_array() || jobs.empty() || jobs.size() > 128)
      return reject({422, kErrRestInvalidQuery, "Rejecting request. Failure parsing parameters",
                     "_job_post", ""});
    for (size_t i = 0; i < jobs.size(); ++i)
      plan.components.push_back(parseComponent(jobs[i].is_object() ? jobs[i] : json::object(),
                                               "#/jobs/" + std::to_string(i) + "/", plan.warnings,
                                               api));
  } else {
    plan.components.push_back(
        parseComponent(has_job && body["job"].is_object() ? body["job"] : json::object(), "#/job/",
                       plan.warnings, api));
  }
  // The top-level script wins; a script in component ≥ 1 is ignored.
  if (body.is_object() && body.contains("script") && body["script"].is_string())
    plan.components[0].script = body["script"].get<std::string>();
  for (size_t i = 1; i < plan.components.size(); ++i) plan.components[i].script.clear();
  if (plan.components[0].script.empty())
    return reject({422, kErrRestInvalidQuery,
                   "Populated \"script\" field is required for job submission", "_job_post", ""});
  // slurmctld cannot place the caller (19: proxy and minted tokens alike): 500 in every
  // release, nothing made.
  if (!who.known) {
    ApiError e = submitError(plan.het, kErrUserUnknown, release);
    e.http_status = 500;
    return reject(e);
  }

  // slurmctld's checks, component by component. A het job whose later component fails
  // still leaves its leader behind, cancelled (11b).
  for (size_t i = 0; i < plan.components.size(); ++i) {
    JobRequest& c = plan.components[i];
    const Leftover partial = i > 0 ? Leftover::kCancelledLeader : Leftover::kNone;
    if (c.cwd.empty())
      return reject(submitError(plan.het, kErrMissingCwd, release), partial, plan.components);
    if (c.environment.empty())
      return reject(submitError(plan.het, release.missing_environment_error, release), partial,
                    plan.components);
    if (c.partition.empty()) {
      const auto* def = cluster.defaultPartition();
      c.partition = def ? def->name : "";
    }
    const PartitionConfig* part = cluster.partition(c.partition);
    if (!part)
      return reject(submitError(plan.het, kErrInvalidPartition, release), partial, plan.components);
    if (cluster.accounting) {
      const int refused = chargeJob(*cluster.accounting, who.user, c.account, c.qos, &c.charge);
      if (refused != 0)
        return reject(submitError(plan.het, refused, release), partial, plan.components);
    } else {
      c.charge = unenforcedCharge(c.account, c.qos);
    }
    for (const auto& f : splitAny(c.constraints, "&,|"))
      if (!knownFeature(cluster, f))
        return reject(submitError(plan.het, kErrInvalidFeature, release), partial, plan.components);
    std::string type;
    int gpus = parseGpuTres(c.tres_per_node, &type);
    if (gpus == 0 && !c.tres_per_job.empty())
      gpus = (parseGpuTres(c.tres_per_job, &type) + c.nodes - 1) / c.nodes;
    c.gpus_per_node = gpus;
    c.gpu_type = type;
    // Nodes of the partition that could ever hold one node's share of the job.
    int eligible = 0, roomy = 0;
    const int cpus =
        c.cpus_per_task *
        std::max(1, c.tasks_per_node > 0 ? c.tasks_per_node : (c.tasks + c.nodes - 1) / c.nodes);
    const int64_t mem = c.memory_per_node_mb.value_or(
        c.memory_per_cpu_mb ? *c.memory_per_cpu_mb * cpus : cluster.default_memory_mb);
    for (const auto& name : part->nodes) {
      const NodeConfig* n = cluster.node(name);
      if (!n || !featuresMatch(c.constraints, n->features)) continue;
      if (gpus > n->gpus || (!type.empty() && gpus > 0 && type != n->gpu_type)) continue;
      ++eligible;
      if (cpus <= n->cpus && mem <= n->memory_mb) ++roomy;
    }
    if (eligible < c.nodes) {
      auto e = submitError(plan.het, kErrNodeConfigUnavailable, release);
      return reject(e, i > 0 ? Leftover::kCancelledLeader : Leftover::kFailedRecord,
                    plan.components);
    }
    if (roomy < c.nodes) plan.pending_reason = "PartitionConfig";
  }
  if (!plan.pending_reason.empty()) {
    const std::string msg = slurmStrerror(kErrPartitionConfigNow);
    const std::string src = plan.het ? "slurm_submit_batch_het_job()" : "slurm_submit_batch_job()";
    plan.warnings.push_back(
        {{"description", "Job submission resulted in non-zero return code: " + msg},
         {"source", src}});
    plan.warnings.push_back({{"description", msg}, {"source", src}});
  }
  const bool held = std::any_of(plan.components.begin(), plan.components.end(),
                                [](const JobRequest& r) { return r.hold; });
  if (held) {
    const std::string msg = "Job is in held state, pending scheduler release";
    const std::string src = plan.het ? "slurm_submit_batch_het_job()" : "slurm_submit_batch_job()";
    plan.warnings.push_back(
        {{"description", "Job submission resulted in non-zero return code: " + msg},
         {"source", src}});
    plan.warnings.push_back({{"description", msg}, {"source", src}});
  }
  out.accepted = true;
  out.plan = std::move(plan);
  return out;
}

}  // namespace tuneplane::sim
