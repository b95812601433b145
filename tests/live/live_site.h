// A site for the live suite in a fresh directory of the shared dir: a stand-in `apptainer`
// (the cluster has no Apptainer: it drops the container options and runs the command on
// the node), a small runtime artifact with its real hash, a registry and a site file that
// points at a slurmrestd. Everything is readable by the job's user, who runs it on a node.
// Thread-safety: functions of their arguments (they write files).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "live_config.h"
#include "staging/stager.h"
#include "support/test_files.h"

namespace tuneplane::live {

using test::readFile;  // support/test_files.h
using test::writeFile;

// A stand-in for `apptainer exec` on a cluster without Apptainer: drops the options and the
// image (the batch script has verified its hash already) and runs the command on the node,
// with APPTAINERENV_NAME set as NAME, as Apptainer does in the container.
inline constexpr const char* kApptainerStandIn = R"(#!/bin/bash
[[ ${1-} == exec ]] || { echo "apptainer stand-in: expected exec" >&2; exit 92; }
shift
for name in "${!APPTAINERENV_@}"; do
  export "${name#APPTAINERENV_}=${!name}"
  unset "$name"
done
while (($#)); do
  case $1 in
    --bind | --pwd) shift 2 ;;
    --nv | --no-home) shift ;;
    *) break ;;
  esac
done
shift
exec "$@"
)";

// The cluster's credential (the token file, else the JWT key) copied into `dir`/secrets/ as this
// process's alone (0600): serve refuses a credential others can read or another user owns
// (doctor/credential_checks.h), and the cluster's own file is the cluster's to keep as it
// likes. The copy's path, or nullopt when it cannot be made.
inline std::optional<std::string> privateCredential(const Live& live, const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string source = live.token_file ? *live.token_file : *live.key_file;
  const std::string copy = dir + "/secrets/" + fs::path(source).filename().string();
  std::error_code ec;
  fs::create_directories(dir + "/secrets", ec);
  fs::permissions(dir + "/secrets", fs::perms::owner_all, ec);
  if (ec) return std::nullopt;
  writeFile(copy, readFile(source), fs::perms::owner_read | fs::perms::owner_write);
  return copy;
}

// The site file's credential line for `privateCredential`'s copy.
inline std::string credentialLine(const Live& live, const std::string& copy) {
  return (live.token_file ? "  token_file: " : "  jwt_key_file: ") + copy + "\n";
}

// A one-node CPU job of the site's runtime custom-demo named `name` that runs
// `bash -c COMMAND` (five minutes at most): the job spec every live test submits. `command`
// goes inside a YAML string in double quotes: it must not hold one unescaped.
inline std::string cpuJobSpec(const std::string& name, const std::string& command) {
  return "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: " + name +
         "\nspec:\n  framework:\n    name: custom\n    task: custom\n    runtime_id: custom-demo\n"
         "    command: [\"bash\", \"-c\", \"" +
         command +
         "\"]\n"
         "  resources:\n    time_limit: 5m\n    pools:\n      - name: main\n        nodes: 1\n"
         "        gpus_per_node: 0\n        cpus: 1\n        memory_gb: 1\n";
}

// Makes `prefix`XXXXXX under the shared dir with bin/apptainer, artifacts/demo.sif (runtime
// custom-demo), runtimes.yaml, staging/ and site.yaml, whose slurmrestd is `url`;
// `extra_slurm` adds lines under `slurm:`, `extra_yaml` top-level keys. The directory, or
// nullopt when it cannot be made.
inline std::optional<std::string> makeLiveSite(const Live& live, const std::string& prefix,
                                               const std::string& url,
                                               const std::string& extra_slurm = "",
                                               const std::string& extra_yaml = "") {
  namespace fs = std::filesystem;
  std::string dir = live.shared_dir + "/" + prefix + "XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return std::nullopt;
  const auto open_dir = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec;
  fs::permissions(dir, open_dir);
  for (const char* sub : {"/bin", "/artifacts", "/staging"}) {
    fs::create_directories(dir + sub);
    fs::permissions(dir + sub, open_dir);
  }
  const auto readable = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                        fs::perms::others_read;
  writeFile(dir + "/bin/apptainer", kApptainerStandIn, open_dir);
  const std::string artifact = dir + "/artifacts/demo.sif";
  writeFile(artifact, "a stand-in for a SIF image, with a known digest\n", readable);
  writeFile(dir + "/runtimes.yaml",
            "runtimes:\n  - id: custom-demo\n    format: sif\n    path: " + artifact +
                "\n    sha256: " + staging::sha256Hex(readFile(artifact)) +
                "\n    frameworks: [custom]\n",
            readable);
  const auto credential = privateCredential(live, dir);
  if (!credential) return std::nullopt;
  writeFile(dir + "/site.yaml",
            "slurm:\n  url: " + url + "\n  api_version: " + live.api_version +
                "\n  user: " + live.user + "\n" + credentialLine(live, *credential) + extra_slurm +
                "  job_environment:\n    PATH: " + dir + "/bin:" + live.slurm_bin +
                ":/usr/local/bin:/usr/bin:/bin\n"
                "partitions:\n  gpu: gpu\n  cpu: cpu\n"
                "gpu_series:\n  - name: h100\n    slurm_constraint: h100\n"
                "    gpus_per_node: 2\n    gres_type: h100\n"
                "container_runtime: apptainer\n"
                "staging_root: " +
                dir + "/staging\nruntime_registry_file: runtimes.yaml\n" + extra_yaml,
            readable);
  return dir;
}

}  // namespace tuneplane::live
