// The site the benchmarks that run the control loop use: one CPU partition on a given
// slurmrestd (the simulator), a small runtime artifact with its real hash, a JWT key, a
// staging root; and the small CPU job their POSTs submit.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "staging/stager.h"
#include "support/os_user.h"

namespace tuneplane::bench {

inline void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A site in `dir` whose slurmrestd is `slurm_url`: one CPU partition, a small runtime
// artifact with its real hash, a JWT key, a staging root. Returns the site file's path.
inline std::string writeSite(const std::string& dir, const std::string& slurm_url,
                             const std::string& key_file) {
  std::filesystem::create_directories(dir + "/artifacts");
  std::filesystem::create_directories(dir + "/staging");
  const std::string artifact_text = "a stand-in for a SIF image, with a known digest\n";
  writeText(dir + "/artifacts/demo.sif", artifact_text);
  writeText(dir + "/runtimes.yaml",
            "runtimes:\n  - id: custom-demo\n    format: sif\n    path: " + dir +
                "/artifacts/demo.sif\n    sha256: " + staging::sha256Hex(artifact_text) +
                "\n    frameworks: [custom]\n");
  writeText(dir + "/site.yaml", "slurm:\n  url: " + slurm_url + "\n  user: " + test::currentUser() +
                                    "\n  jwt_key_file: " + key_file +
                                    "\n  job_environment:\n    PATH: /usr/bin:/bin\n"
                                    "partitions:\n  cpu: cpu\n"
                                    "container_runtime: apptainer\n"
                                    "staging_root: " +
                                    dir + "/staging\nruntime_registry_file: runtimes.yaml\n");
  return dir + "/site.yaml";
}

// The small CPU job every POST submits (`tuneplane validate` accepts it).
inline constexpr const char* kSpec =
    "apiVersion: tuneplane.io/v1\n"
    "kind: TrainingJob\n"
    "metadata:\n"
    "  name: bench\n"
    "spec:\n"
    "  framework:\n"
    "    name: custom\n"
    "    task: custom\n"
    "    runtime_id: custom-demo\n"
    "    command: [\"bash\", \"-c\", \"echo hello\"]\n"
    "  resources:\n"
    "    time_limit: 10m\n"
    "    pools:\n"
    "      - name: main\n"
    "        nodes: 1\n"
    "        gpus_per_node: 0\n"
    "        cpus: 1\n"
    "        memory_gb: 1\n";

}  // namespace tuneplane::bench
