// See capabilities.h.
#include "api/capabilities.h"

#include "launch/error_codes.h"

namespace tuneplane::api {

using nlohmann::json;

namespace {

constexpr const char* kNoInboundPath =
    "cannot run on Slurm: there is no inbound path to a compute node (a batch job cannot be "
    "reached from outside the cluster); only TrainingJob is supported";

}  // namespace

Error kindRefusal(const std::string& kind) {
  return Error{launch::codes::kKindNotSupported, "kind", kind + " " + kNoInboundPath};
}

json capabilitiesJson(const pipeline::SiteContext& context, const json& slurm_api,
                      const workdir::Limits& workdir) {
  const catalog::SiteConfig& site = context.site;
  // The version spoken: negotiated (auto) when the server says, else as configured.
  json api =
      slurm_api.is_object()
          ? slurm_api
          : json{{"configured", site.slurm.api_version},
                 {"version",
                  site.slurm.api_version == "auto" ? json(nullptr) : json(site.slurm.api_version)},
                 {"negotiated", false},
                 {"offered", json::array()},
                 {"release", nullptr},
                 {"degradations", json::array()}};
  const json spoken = api["version"].is_string() ? api["version"] : api["configured"];
  json series = json::array();
  for (const auto& s : site.gpu_series) {
    json entry = {{"name", s.name},
                  {"gpus_per_node", s.gpus_per_node},
                  {"gres_type", s.gres_type},
                  {"slurm_constraint", s.slurm_constraint ? json(*s.slurm_constraint) : json()},
                  {"usable", s.slurm_constraint.has_value()}};
    if (!s.slurm_constraint) {
      entry["reason"] =
          "no slurm_constraint in the site file: pools of this series are refused "
          "(launch.gpu_series_without_constraint)";
    }
    series.push_back(std::move(entry));
  }
  json runtimes = json::array();
  for (const auto& r : context.registry.runtimes) {
    runtimes.push_back(
        {{"id", r.id}, {"format", catalog::toString(r.format)}, {"frameworks", r.frameworks}});
  }
  return {
      {"backend", "slurm"},
      {"api_versions", {"v1"}},
      {"slurm_api_version", spoken},
      {"slurm_api", std::move(api)},
      {"container_runtime", catalog::toString(site.container_runtime)},
      {"kinds",
       {{"TrainingJob", {{"supported", true}}},
        {"Playground",
         {{"supported", false}, {"reason", std::string("Playground ") + kNoInboundPath}}},
        {"ModelDeployment",
         {{"supported", false}, {"reason", std::string("ModelDeployment ") + kNoInboundPath}}}}},
      {"features",
       {{"data_volumes",
         {{"supported", false},
          {"code", launch::codes::kVolumesNotSupported},
          {"reason",
           "spec.data.volumes cannot be mounted: the platform does not control the image's bind "
           "list; put the data on the shared filesystem and use a site mount"}}},
        {"oci_images",
         {{"supported", false},
          {"code", launch::codes::kImageNotSupported},
          {"reason",
           "spec.framework.image is not materialised implicitly: runtimes are SQSH/SIF artifacts "
           "from the runtime registry (spec.framework.runtime_id)"}}},
        {"heterogeneous_jobs", {{"supported", true}}},
        {"retries", {{"supported", true}, {"slurm_requeue", false}}}}},
      {"cpu_only_rules",
       {"framework custom/custom", "exactly one pool", "nodes: 1", "gpus_per_node: 0",
        "positive cpus and memory_gb", "a CPU-capable partition",
        "spec.framework.runtime_id set to a custom-… id from the runtime registry, "
        "spec.framework.image omitted",
        "no scratch, no multi-machine CPU requests"}},
      {"partitions",
       {{"gpu", site.partitions.gpu},
        {"cpu", site.partitions.cpu},
        {"allowed", site.partitions.allowed ? json(site.partitions.known()) : json(nullptr)}}},
      {"gpu_series", std::move(series)},
      {"runtimes", std::move(runtimes)},
      {"limits",
       {{"log_bytes", 64 * 1024},
        {"log_lines", 2000},
        {"workdir_max_bytes", workdir.max_bytes},
        {"workdir_max_files", workdir.max_files}}}};
}

}  // namespace tuneplane::api
