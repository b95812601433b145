#include "siteinit/site_draft.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "doctor/gres.h"

namespace tuneplane::siteinit {
namespace {

constexpr const char* kGpuGres = "gpu";

// A YAML scalar: JSON's double-quoted string is one, with every escape YAML needs.
std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump();
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

// Series names allow letters, digits and `_-.` (the site file's rule).
std::string seriesName(const std::string& gres_type) {
  std::string name;
  for (char c : gres_type.empty() ? std::string(kGpuGres) : gres_type) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    name += ok ? c : '-';
  }
  return name;
}

bool hasGpus(const slurm::NodeInfo& node) {
  return doctor::gpusOfType(doctor::parseGres(node.gres), "") > 0;
}

// The partition holding the most of `nodes` (first reported on a tie), with that count.
std::pair<std::string, size_t> partitionOf(const std::vector<slurm::PartitionInfo>& partitions,
                                           const std::vector<const slurm::NodeInfo*>& nodes) {
  std::pair<std::string, size_t> best{"", 0};
  for (const auto& partition : partitions) {
    size_t count = 0;
    for (const auto* node : nodes) {
      count += std::count(node->partitions.begin(), node->partitions.end(), partition.name);
    }
    if (count > best.second) best = {partition.name, count};
  }
  return best;
}

std::vector<std::string> names(const std::vector<const slurm::NodeInfo*>& nodes) {
  std::vector<std::string> out;
  for (const auto* node : nodes) out.push_back(node->name);
  return out;
}

}  // namespace

std::vector<SeriesDraft> gpuSeries(const std::vector<slurm::NodeInfo>& nodes) {
  using Key = std::tuple<std::string, int64_t, std::vector<std::string>>;
  std::map<Key, std::vector<std::string>> groups;
  for (const auto& node : nodes) {
    std::vector<std::string> features = node.features;
    std::sort(features.begin(), features.end());
    features.erase(std::unique(features.begin(), features.end()), features.end());
    // Each GPU type on the node is a series of its own (a node may hold two types).
    std::map<std::string, int64_t> per_type;
    for (const auto& entry : doctor::parseGres(node.gres)) {
      if (entry.name == kGpuGres && entry.count > 0) per_type[entry.type] += entry.count;
    }
    for (const auto& [type, count] : per_type) groups[{type, count, features}].push_back(node.name);
  }
  std::vector<SeriesDraft> series;
  std::map<std::string, int> taken;
  for (const auto& [key, members] : groups) {
    const auto& [type, count, features] = key;
    std::string name = seriesName(type);
    if (const int seen = taken[name]++; seen > 0) name += "-" + std::to_string(seen + 1);
    series.push_back(SeriesDraft{name, type, count, features, members});
  }
  return series;
}

std::string draftSiteYaml(const DraftInputs& inputs,
                          const std::vector<slurm::PartitionInfo>& partitions,
                          const std::vector<slurm::NodeInfo>& nodes) {
  std::vector<const slurm::NodeInfo*> gpu_nodes;
  std::vector<const slurm::NodeInfo*> cpu_nodes;
  for (const auto& node : nodes) (hasGpus(node) ? gpu_nodes : cpu_nodes).push_back(&node);

  std::ostringstream out;
  out << "# Drafted by `tuneplane site init` from slurmrestd's /nodes/ and /partitions/ at\n"
      << "# " << inputs.slurm_url << ". Every guessed value says where it came from: check\n"
      << "# them, then run `tuneplane doctor --site <this file>`.\n"
      << "slurm:\n"
      << "  url: " << quoted(inputs.slurm_url) << "  # --slurm\n"
      << "  api_version: auto  # the newest REST API both slurmrestd and TunePlane speak\n"
      << "  user: " << quoted(inputs.user) << "  # " << inputs.user_source << "\n"
      << "  token_file: " << quoted(inputs.token_file)
      << "  # --token-file: owned by slurm.user, mode 0600, renewed before it expires\n"
      << "  job_environment:  # the batch step's environment on the nodes (srun, the runtime)\n"
      << "    PATH: /usr/local/bin:/usr/bin:/bin\n";
  if (inputs.per_user) {
    out << "  # --identity per_user: every job runs as its user's Unix account (server.tokens[]\n"
           "  # .unix_user); the token above must be SlurmUser's, which can act as ANY user: keep\n"
           "  # it to serve alone. Once per user, an operator makes\n"
           "  # <staging_root>/users/<name> (docs/operators.md, 'Every user as themselves').\n"
           "  identity: per_user\n";
  }

  out << "partitions:\n";
  const auto [gpu_partition, gpu_count] = partitionOf(partitions, gpu_nodes);
  const auto [cpu_partition, cpu_count] = partitionOf(partitions, cpu_nodes);
  if (gpu_count > 0) {
    out << "  gpu: " << quoted(gpu_partition) << "  # holds " << gpu_count << " of the "
        << gpu_nodes.size() << " GPU nodes (" << joined(names(gpu_nodes), ", ") << ")\n";
  } else if (cpu_count > 0) {
    out << "  gpu: " << quoted(cpu_partition)
        << "  # no partition holds a GPU node: GPU pools would go to the CPU partition\n";
  } else {
    out << "  gpu: gpu  # the default: no partition holds a node\n";
  }
  if (cpu_count > 0) {
    out << "  cpu: " << quoted(cpu_partition) << "  # holds " << cpu_count << " of the "
        << cpu_nodes.size() << " nodes without GPUs (" << joined(names(cpu_nodes), ", ") << ")\n";
  } else if (gpu_count > 0) {
    out << "  cpu: " << quoted(gpu_partition)
        << "  # no partition holds a node without GPUs: CPU pools share the GPU partition\n";
  } else {
    out << "  cpu: cpu  # the default: no partition holds a node\n";
  }
  // Every partition Slurm has: a pool naming another is refused when a spec is validated,
  // with the names there are, instead of failing later in Slurm.
  if (!partitions.empty()) {
    std::vector<std::string> all;
    for (const auto& partition : partitions) all.push_back(quoted(partition.name));
    out << "  allowed: [" << joined(all, ", ")
        << "]  # every partition slurmrestd listed: a pool may name these\n";
  }

  const auto series = gpuSeries(nodes);
  if (series.empty()) {
    out << "gpu_series: []  # no node reports gpu GRES\n";
  } else {
    out << "gpu_series:\n";
  }
  for (const auto& s : series) {
    out << "  - name: " << quoted(s.name) << "  # nodes " << joined(s.nodes, ", ") << "\n";
    if (s.features.empty()) {
      out << "    # No slurm_constraint: these nodes share no feature, so the assembly layer\n"
          << "    # refuses every pool of this series until one is set (give the nodes a\n"
          << "    # feature in slurm.conf, then name it here).\n";
    } else {
      out << "    slurm_constraint: " << quoted(joined(s.features, "&"))
          << "  # the features these nodes share\n";
    }
    out << "    gpus_per_node: " << s.gpus_per_node << "  # their GRES: gpu"
        << (s.gres_type.empty() ? "" : ":" + s.gres_type) << ":" << s.gpus_per_node << "\n";
    if (!s.gres_type.empty()) {
      out << "    gres_type: " << quoted(s.gres_type) << "  # the GRES type of their GPUs\n";
    } else {
      out << "    # no gres_type: their GRES names no GPU type\n";
    }
  }

  if (inputs.runtime) {
    out << "container_runtime: " << quoted(*inputs.runtime) << "  # --runtime\n";
  } else {
    out << "container_runtime: apptainer  # a guess: slurmrestd does not say; pyxis or "
           "apptainer (--runtime)\n";
  }
  if (inputs.staging_root) {
    out << "staging_root: " << quoted(*inputs.staging_root) << "  # --staging-root\n";
  } else {
    out << "staging_root: /shared/tuneplane/attempts  # a placeholder (--staging-root): a "
           "directory the nodes and this host share\n";
  }
  out << "runtime_registry_file: runtimes.yaml  # the runtimes jobs may use, beside this file "
         "(docs/operators.md, \"Runtime registry\")\n";
  out << "server:  # tuneplane serve (docs/operators.md, \"tuneplane serve and the /v1 API\")\n"
      << "  listen: " << quoted(inputs.listen)
      << "  # --listen; another address than loopback needs tls (or a proxy)\n"
      << "  db: " << quoted(inputs.state_dir + "/tuneplane.db")
      << "  # --state-dir: the unit's StateDirectory, writable by serve's user\n"
      << "  tokens: []  # the API's users: `tuneplane token add USER --site <this file>`\n";
  return out.str();
}

std::string draftRegistryYaml(const DraftInputs& inputs) {
  const std::string root = inputs.staging_root
                               ? std::filesystem::path(*inputs.staging_root).parent_path().string()
                               : std::string("/shared/tuneplane");
  std::ostringstream out;
  out << "# The runtime registry (docs/operators.md, \"Runtime registry\"): the images jobs may\n"
      << "# run, each pinned by its SHA-256 (`sha256sum IMAGE`), on the filesystem the nodes\n"
      << "# share. Drafted empty by `tuneplane site init`: list yours, e.g.\n"
      << "#   runtimes:\n"
      << "#     - id: custom-python-3.11\n"
      << "#       format: " << (inputs.runtime && *inputs.runtime == "pyxis" ? "sqsh" : "sif")
      << "\n"
      << "#       path: " << root << "/runtimes/python-3.11."
      << (inputs.runtime && *inputs.runtime == "pyxis" ? "sqsh" : "sif") << "\n"
      << "#       sha256: <64 hex digits>\n"
      << "#       frameworks: [custom]\n"
      << "runtimes: []\n";
  return out.str();
}

}  // namespace tuneplane::siteinit
