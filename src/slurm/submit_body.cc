// See submit_body.h. Numbers that slurmrestd dumps as {set, infinite, number} are sent in
// that form too (plain integers are also accepted, but the struct says "set" explicitly).
#include "slurm/submit_body.h"

#include <string>

namespace tuneplane::slurm {
namespace {

nlohmann::json noValNumber(long long number) {
  return {{"set", true}, {"infinite", false}, {"number", number}};
}

nlohmann::json componentJson(const launch::LaunchRequest& request, const launch::Component& c,
                             const nlohmann::json& environment) {
  nlohmann::json job = nlohmann::json::object();
  job["name"] = request.job_name;
  job["comment"] = request.identity.submit_token;
  job["partition"] = c.partition;
  if (c.constraint) job["constraints"] = *c.constraint;
  if (c.gpus_per_node > 0) job["tres_per_node"] = tresPerNode(c);
  job["cpus_per_task"] = c.cpus_per_node;
  job["tasks_per_node"] = 1;
  job["minimum_nodes"] = c.nodes;
  job["maximum_nodes"] = c.nodes;
  if (c.memory_mb > 0) job["memory_per_node"] = noValNumber(c.memory_mb);
  // --tmp: MiB of node-local disk (TmpFS), like sbatch's default unit.
  if (c.scratch_mb > 0) job["temporary_disk_per_node"] = c.scratch_mb;
  if (c.time_limit.count() > 0) job["time_limit"] = noValNumber(c.time_limit.count());
  if (!c.excluded_nodes.empty()) job["excluded_nodes"] = c.excluded_nodes;
  if (needsWholeNodes(request)) job["shared"] = nlohmann::json::array({"none"});
  job["requeue"] = false;
  job["current_working_directory"] = request.attempt_dir;
  job["environment"] = environment;
  job["standard_output"] = schedulerLogPath(request.logs_dir, c.pool_name, ".out");
  job["standard_error"] = schedulerLogPath(request.logs_dir, c.pool_name, ".err");
  // Appended to, never truncated: Slurm opens them again when it restarts a requeued job,
  // and the attempt's logs must outlive that start (which runs nothing, script_renderer.h).
  job["open_mode"] = nlohmann::json::array({"APPEND"});
  if (request.account) job["account"] = *request.account;
  if (request.qos) job["qos"] = *request.qos;
  // sbatch --signal=SIG@T without "B:": Slurm signals every step's tasks (the training), not
  // the batch shell, T s before the end and, where PreemptParameters=send_user_signal, when a
  // preemption's GraceTime starts (docs/decisions.md, "The preemption warning").
  if (request.preemption_warning) {
    job["kill_warning_signal"] = request.preemption_warning->signal;
    job["kill_warning_delay"] = noValNumber(request.preemption_warning->before_end.count());
    job["kill_warning_flags"] = nlohmann::json::array();
  }
  return job;
}

}  // namespace

bool needsWholeNodes(const launch::LaunchRequest& request) {
  return request.uses_gpus && request.ray.pinsPorts();
}

std::string tresPerNode(const launch::Component& component) {
  std::string tres = "gres/gpu:";
  if (!component.gres_type.empty()) tres += component.gres_type + ":";
  return tres + std::to_string(component.gpus_per_node);
}

std::string schedulerLogPath(const std::string& logs_dir, const std::string& pool,
                             std::string_view suffix) {
  std::string path = logs_dir;
  if (path.empty() || path.back() != '/') path += '/';
  path += pool;
  path += suffix;
  std::string escaped;
  for (char c : path) {
    escaped += c;
    if (c == '%') escaped += '%';
  }
  return escaped;
}

nlohmann::json buildSubmitBody(const launch::LaunchRequest& request, const std::string& script) {
  // The batch step's own environment: never the user's job variables (those reach only the
  // container, through the script), plus who this attempt is.
  nlohmann::json environment = nlohmann::json::array();
  for (const auto& [name, value] : request.scheduler_environment) {
    environment.push_back(name + "=" + value);
  }
  environment.push_back("TUNEPLANE_JOB_ID=" + request.identity.job_id);
  environment.push_back("TUNEPLANE_ATTEMPT=" + std::to_string(request.identity.attempt));
  // per_user: Slurm creates the stdout/stderr files with this umask (and the batch script
  // starts with it), so TunePlane reads them through the "other" bits. Last: it wins over a
  // site's job_environment.
  if (!request.job_umask.empty()) environment.push_back("SLURM_UMASK=" + request.job_umask);

  nlohmann::json body = nlohmann::json::object();
  body["script"] = script;
  if (request.components.size() == 1) {
    body["job"] = componentJson(request, request.components.front(), environment);
  } else {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& c : request.components) jobs.push_back(componentJson(request, c, environment));
    body["jobs"] = std::move(jobs);
  }
  return body;
}

}  // namespace tuneplane::slurm
