// A site file drafted from what slurmrestd reports (GET /nodes/, /partitions/): the GPU
// series, the default partitions, and the facts the operator passes on the command line.
// Every guessed value carries a comment saying where it came from. Fail-closed stays the
// rule: a series whose nodes share no feature gets no slurm_constraint, so the assembly
// layer refuses its pools until the operator sets one. Pure: `tuneplane site init` asks
// slurmrestd and writes the file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "slurm/job_record.h"

namespace tuneplane::siteinit {

struct DraftInputs {
  std::string slurm_url;
  std::string token_file;                        // absolute
  std::string user;                              // slurm.user
  std::string user_source;                       // where `user` came from, for its comment
  std::optional<std::string> staging_root;       // --staging-root
  std::optional<std::string> runtime;            // --runtime: pyxis or apptainer
  bool per_user = false;                         // --identity per_user: slurm.identity
  std::string listen = "127.0.0.1:8080";         // --listen: server.listen
  std::string state_dir = "/var/lib/tuneplane";  // --state-dir: server.db goes there
};

// One GPU series: the nodes with the same GRES type, GPUs per node and features.
struct SeriesDraft {
  std::string name;
  std::string gres_type;  // empty: the nodes' GRES names no type
  int64_t gpus_per_node = 0;
  std::vector<std::string> features;  // shared by every node of the series (sorted)
  std::vector<std::string> nodes;
};

// The series found on the nodes (those with `gpu` GRES), in a stable order (by GRES type,
// GPUs per node, features); names are the GRES type, made unique with -2, -3, ….
std::vector<SeriesDraft> gpuSeries(const std::vector<slurm::NodeInfo>& nodes);

// The site file's text (YAML with comments), a server: section included: `listen`, the
// database under `state_dir`, no tokens yet.
std::string draftSiteYaml(const DraftInputs& inputs,
                          const std::vector<slurm::PartitionInfo>& partitions,
                          const std::vector<slurm::NodeInfo>& nodes);

// The runtime registry written beside it: no runtime yet, and a commented example of one.
std::string draftRegistryYaml(const DraftInputs& inputs);

}  // namespace tuneplane::siteinit
