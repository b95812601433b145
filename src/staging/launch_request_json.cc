// launch.json ⇄ LaunchRequest. Every field of the struct is written, so the snapshot is
// faithful; reading checks types and names the first offending field.
#include "staging/launch_request_json.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tuneplane::staging {
namespace {

using nlohmann::json;

const char* runtimeName(catalog::ContainerRuntime runtime) {
  return runtime == catalog::ContainerRuntime::kApptainer ? "apptainer" : "pyxis";
}
const char* formatName(catalog::ArtifactFormat format) {
  return format == catalog::ArtifactFormat::kSif ? "sif" : "sqsh";
}

template <typename T>
json optionalToJson(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json pairsToJson(const std::vector<std::pair<std::string, std::string>>& pairs) {
  json out = json::array();
  for (const auto& [name, value] : pairs) out.push_back({{"name", name}, {"value", value}});
  return out;
}

// Reading: each accessor throws BadField with the dotted path; the entry point turns it
// into an Error. Exceptions never leave this file.
struct BadField {
  std::string field;
  std::string message;
};

const json& member(const json& object, const std::string& key, const std::string& path) {
  if (!object.is_object()) throw BadField{path, "must be an object"};
  auto it = object.find(key);
  if (it == object.end()) throw BadField{path + "." + key, "is missing"};
  return *it;
}

std::string str(const json& object, const std::string& key, const std::string& path) {
  const json& v = member(object, key, path);
  if (!v.is_string()) throw BadField{path + "." + key, "must be a string"};
  return v.get<std::string>();
}

std::optional<std::string> optStr(const json& object, const std::string& key,
                                  const std::string& path) {
  const json& v = member(object, key, path);
  if (v.is_null()) return std::nullopt;
  if (!v.is_string()) throw BadField{path + "." + key, "must be a string or null"};
  return v.get<std::string>();
}

int integer(const json& object, const std::string& key, const std::string& path) {
  const json& v = member(object, key, path);
  if (!v.is_number_integer()) throw BadField{path + "." + key, "must be an integer"};
  const auto n = v.get<long long>();
  if (n < INT32_MIN || n > INT32_MAX) throw BadField{path + "." + key, "is out of range"};
  return static_cast<int>(n);
}

std::optional<int> optInteger(const json& object, const std::string& key, const std::string& path) {
  if (member(object, key, path).is_null()) return std::nullopt;
  return integer(object, key, path);
}

bool boolean(const json& object, const std::string& key, const std::string& path) {
  const json& v = member(object, key, path);
  if (!v.is_boolean()) throw BadField{path + "." + key, "must be a boolean"};
  return v.get<bool>();
}

const json& array(const json& object, const std::string& key, const std::string& path) {
  const json& v = member(object, key, path);
  if (!v.is_array()) throw BadField{path + "." + key, "must be an array"};
  return v;
}

std::string indexed(const std::string& path, const std::string& key, std::size_t i) {
  return path + "." + key + "[" + std::to_string(i) + "]";
}

std::vector<std::pair<std::string, std::string>> pairs(const json& object, const std::string& key,
                                                       const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  const json& list = array(object, key, path);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = indexed(path, key, i);
    out.emplace_back(str(list[i], "name", at), str(list[i], "value", at));
  }
  return out;
}

launch::LaunchRequest readRequest(const json& j) {
  const std::string root = "launch";
  if (integer(j, "version", root) != kLaunchJsonVersion) {
    throw BadField{"launch.version", "unsupported version"};
  }
  launch::LaunchRequest r;
  r.job_name = str(j, "job_name", root);
  const json& id = member(j, "identity", root);
  r.identity.job_id = str(id, "job_id", root + ".identity");
  r.identity.attempt = integer(id, "attempt", root + ".identity");
  r.identity.submit_token = str(id, "submit_token", root + ".identity");
  r.framework = str(j, "framework", root);

  const std::string runtime = str(j, "container_runtime", root);
  if (runtime == "pyxis") {
    r.container_runtime = catalog::ContainerRuntime::kPyxis;
  } else if (runtime == "apptainer") {
    r.container_runtime = catalog::ContainerRuntime::kApptainer;
  } else {
    throw BadField{"launch.container_runtime", "must be pyxis or apptainer"};
  }

  const json& artifact = member(j, "artifact", root);
  r.artifact.path = str(artifact, "path", root + ".artifact");
  const std::string format = str(artifact, "format", root + ".artifact");
  if (format == "sqsh") {
    r.artifact.format = catalog::ArtifactFormat::kSqsh;
  } else if (format == "sif") {
    r.artifact.format = catalog::ArtifactFormat::kSif;
  } else {
    throw BadField{"launch.artifact.format", "must be sqsh or sif"};
  }
  r.artifact.sha256 = str(artifact, "sha256", root + ".artifact");

  const json& mounts = array(j, "mounts", root);
  for (std::size_t i = 0; i < mounts.size(); ++i) {
    const std::string at = indexed(root, "mounts", i);
    r.mounts.push_back({str(mounts[i], "source", at), str(mounts[i], "target", at),
                        boolean(mounts[i], "read_only", at)});
  }

  const json& components = array(j, "components", root);
  for (std::size_t i = 0; i < components.size(); ++i) {
    const std::string at = indexed(root, "components", i);
    const json& c = components[i];
    launch::Component component;
    component.pool_name = str(c, "pool_name", at);
    component.partition = str(c, "partition", at);
    component.constraint = optStr(c, "constraint", at);
    component.nodes = integer(c, "nodes", at);
    component.gpus_per_node = integer(c, "gpus_per_node", at);
    component.gres_type = str(c, "gres_type", at);
    component.cpus_per_node = integer(c, "cpus_per_node", at);
    component.memory_mb = integer(c, "memory_mb", at);
    component.scratch_mb = integer(c, "scratch_mb", at);
    component.time_limit = std::chrono::minutes(integer(c, "time_limit_minutes", at));
    // Absent from snapshots staged before exclusions existed.
    if (c.contains("excluded_nodes")) {
      const json& excluded = array(c, "excluded_nodes", at);
      for (std::size_t k = 0; k < excluded.size(); ++k) {
        if (!excluded[k].is_string()) {
          throw BadField{indexed(at, "excluded_nodes", k), "must be a string"};
        }
        component.excluded_nodes.push_back(excluded[k].get<std::string>());
      }
    }
    r.components.push_back(std::move(component));
  }

  const std::string source = str(j, "time_limit_source", root);
  bool named = false;
  for (auto s : {launch::TimeLimitSource::kSpec, launch::TimeLimitSource::kSiteDefault,
                 launch::TimeLimitSource::kPartitionDefault}) {
    if (source == launch::toString(s)) {
      r.time_limit_source = s;
      named = true;
    }
  }
  if (!named) {
    throw BadField{"launch.time_limit_source", "must be spec, site_default or partition_default"};
  }
  r.uses_gpus = boolean(j, "uses_gpus", root);
  const json& command = array(j, "command", root);
  for (std::size_t i = 0; i < command.size(); ++i) {
    if (!command[i].is_string()) throw BadField{indexed(root, "command", i), "must be a string"};
    r.command.push_back(command[i].get<std::string>());
  }
  r.environment = pairs(j, "environment", root);
  const json& inputs = array(j, "inputs", root);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string at = indexed(root, "inputs", i);
    r.inputs.push_back({str(inputs[i], "name", at), str(inputs[i], "content", at)});
  }
  r.scheduler_environment = pairs(j, "scheduler_environment", root);
  r.attempt_dir = str(j, "attempt_dir", root);
  r.logs_dir = str(j, "logs_dir", root);
  r.output_dir = str(j, "output_dir", root);
  r.container_attempt_dir = str(j, "container_attempt_dir", root);
  r.container_output_dir = str(j, "container_output_dir", root);
  // Absent from snapshots staged before the job-level fence existed.
  r.fence_dir = j.contains("fence_dir") ? str(j, "fence_dir", root) : std::string();
  r.checkpoint_dir = str(j, "checkpoint_dir", root);
  r.container_checkpoint_dir = str(j, "container_checkpoint_dir", root);
  const std::string record = str(j, "resume_record", root);
  named = false;
  for (auto k : {launch::ResumeRecord::kNone, launch::ResumeRecord::kLastCheckpoint,
                 launch::ResumeRecord::kFromScratch}) {
    if (record == launch::toString(k)) {
      r.resume_record = k;
      named = true;
    }
  }
  if (!named) {
    throw BadField{"launch.resume_record", "must be none, last_checkpoint or from_scratch"};
  }
  r.account = optStr(j, "account", root);
  r.qos = optStr(j, "qos", root);
  // Only in a per_user site's snapshots (and absent from those staged before it existed).
  r.job_umask = j.contains("job_umask") ? str(j, "job_umask", root) : std::string();
  // Only in the snapshots of jobs that ship their code.
  if (j.contains("workdir")) {
    const json& w = member(j, "workdir", root);
    const std::string at = root + ".workdir";
    r.workdir = launch::Workdir{str(w, "sha256", at), str(w, "source", at), str(w, "dir", at),
                                str(w, "container_dir", at)};
  }

  const json& ray = member(j, "ray", root);
  const std::string at = root + ".ray";
  r.ray.port = optInteger(ray, "port", at);
  r.ray.node_manager_port = optInteger(ray, "node_manager_port", at);
  r.ray.object_manager_port = optInteger(ray, "object_manager_port", at);
  r.ray.min_worker_port = optInteger(ray, "min_worker_port", at);
  r.ray.max_worker_port = optInteger(ray, "max_worker_port", at);
  r.ray.ray_client_server_port = optInteger(ray, "ray_client_server_port", at);
  r.ray.dashboard_agent_listen_port = optInteger(ray, "dashboard_agent_listen_port", at);
  r.ray.dashboard = boolean(ray, "dashboard", at);
  r.ray.dashboard_port = optInteger(ray, "dashboard_port", at);
  r.ray.join_timeout_seconds = integer(ray, "join_timeout_seconds", at);
  r.ray.executable = str(ray, "executable", at);
  r.ray_min_cpus_per_gpu = integer(j, "ray_min_cpus_per_gpu", root);
  return r;
}

}  // namespace

json launchRequestToJson(const launch::LaunchRequest& r) {
  json mounts = json::array();
  for (const auto& m : r.mounts) {
    mounts.push_back({{"source", m.source}, {"target", m.target}, {"read_only", m.read_only}});
  }
  json inputs = json::array();
  for (const auto& input : r.inputs) {
    inputs.push_back({{"name", input.name}, {"content", input.content}});
  }
  json components = json::array();
  for (const auto& c : r.components) {
    components.push_back({{"pool_name", c.pool_name},
                          {"partition", c.partition},
                          {"constraint", optionalToJson(c.constraint)},
                          {"nodes", c.nodes},
                          {"gpus_per_node", c.gpus_per_node},
                          {"gres_type", c.gres_type},
                          {"cpus_per_node", c.cpus_per_node},
                          {"memory_mb", c.memory_mb},
                          {"scratch_mb", c.scratch_mb},
                          {"time_limit_minutes", c.time_limit.count()},
                          {"excluded_nodes", c.excluded_nodes}});
  }
  json out{
      {"version", kLaunchJsonVersion},
      {"job_name", r.job_name},
      {"identity",
       {{"job_id", r.identity.job_id},
        {"attempt", r.identity.attempt},
        {"submit_token", r.identity.submit_token}}},
      {"framework", r.framework},
      {"container_runtime", runtimeName(r.container_runtime)},
      {"artifact",
       {{"path", r.artifact.path},
        {"format", formatName(r.artifact.format)},
        {"sha256", r.artifact.sha256}}},
      {"mounts", std::move(mounts)},
      {"components", std::move(components)},
      {"time_limit_source", launch::toString(r.time_limit_source)},
      {"uses_gpus", r.uses_gpus},
      {"command", r.command},
      {"environment", pairsToJson(r.environment)},
      {"inputs", std::move(inputs)},
      {"scheduler_environment", pairsToJson(r.scheduler_environment)},
      {"attempt_dir", r.attempt_dir},
      {"logs_dir", r.logs_dir},
      {"output_dir", r.output_dir},
      {"container_attempt_dir", r.container_attempt_dir},
      {"container_output_dir", r.container_output_dir},
      {"fence_dir", r.fence_dir},
      {"checkpoint_dir", r.checkpoint_dir},
      {"container_checkpoint_dir", r.container_checkpoint_dir},
      {"resume_record", launch::toString(r.resume_record)},
      {"account", optionalToJson(r.account)},
      {"qos", optionalToJson(r.qos)},
      {"ray",
       {{"port", optionalToJson(r.ray.port)},
        {"node_manager_port", optionalToJson(r.ray.node_manager_port)},
        {"object_manager_port", optionalToJson(r.ray.object_manager_port)},
        {"min_worker_port", optionalToJson(r.ray.min_worker_port)},
        {"max_worker_port", optionalToJson(r.ray.max_worker_port)},
        {"ray_client_server_port", optionalToJson(r.ray.ray_client_server_port)},
        {"dashboard_agent_listen_port", optionalToJson(r.ray.dashboard_agent_listen_port)},
        {"dashboard", r.ray.dashboard},
        {"dashboard_port", optionalToJson(r.ray.dashboard_port)},
        {"join_timeout_seconds", r.ray.join_timeout_seconds},
        {"executable", r.ray.executable}}},
      {"ray_min_cpus_per_gpu", r.ray_min_cpus_per_gpu},
  };
  // Written only when set, so a shared site's snapshots stay as they were.
  if (!r.job_umask.empty()) out["job_umask"] = r.job_umask;
  // Only for a job that ships its code (spec.workdir).
  if (r.workdir) {
    out["workdir"] = {{"sha256", r.workdir->sha256},
                      {"source", r.workdir->source},
                      {"dir", r.workdir->dir},
                      {"container_dir", r.workdir->container_dir}};
  }
  return out;
}

Result<launch::LaunchRequest> launchRequestFromJson(const json& j) {
  try {
    return readRequest(j);
  } catch (const BadField& bad) {
    return fail("staging.bad_launch_json", bad.field, bad.field + " " + bad.message);
  }
}

}  // namespace tuneplane::staging
