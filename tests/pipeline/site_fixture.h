// A hermetic site for the control tests: a temp dir with a small runtime artifact (an
// Apptainer "SIF" the simulator's stand-in accepts), a runtime registry, a JWT key, a
// staging root and a site file pointing at a slurmrestd URL (the simulator's, or an
// unreachable one for tests that never talk to Slurm). Specs are built from a few knobs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pipeline/launch_pipeline.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "support/os_user.h"
#include "support/test_files.h"

namespace tuneplane::pipeline::testing {

// Written into the site's token file: it must never appear in anything staged.
inline constexpr const char* kSentinelToken = "eyJTENTINEL.token-must-never-be-staged.x9";
inline constexpr const char* kJwtKey = "0123456789abcdef0123456789abcdef-test-key";

using test::readFile;  // support/test_files.h
using test::writeFile;

class SiteDir {
 public:
  // `slurm_url`: where the site's slurmrestd is. `use_token_file`: a token file holding
  // kSentinelToken instead of the JWT key (tests that never talk to Slurm).
  // `extra_job_env`: more `    NAME: value` lines under slurm.job_environment;
  // `extra_yaml`: more top-level site keys (e.g. a ray block).
  explicit SiteDir(const std::string& slurm_url = "http://127.0.0.1:9", bool use_token_file = false,
                   const std::string& extra_job_env = "", const std::string& extra_yaml = "") {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tp-control-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    dir_ = tmpl;
    std::filesystem::create_directories(dir_ + "/artifacts");
    std::filesystem::create_directories(dir_ + "/staging");
    artifact_ = dir_ + "/artifacts/demo.sif";
    writeFile(artifact_, "a stand-in for a SIF image, with a known digest\n");
    // Credentials are this user's alone, as serve requires (doctor/credential_checks.h).
    writeFile(dir_ + "/token.jwt", kSentinelToken,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    writeFile(dir_ + "/jwt.key", kJwtKey,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    writeFile(dir_ + "/runtimes.yaml",
              "runtimes:\n"
              "  - id: custom-demo\n"
              "    format: sif\n"
              "    path: " +
                  artifact_ + "\n    sha256: " + staging::sha256Hex(readFile(artifact_)) +
                  "\n    frameworks: [custom]\n"
                  "  - id: custom-tampered\n"
                  "    format: sif\n"
                  "    path: " +
                  artifact_ + "\n    sha256: " + std::string(64, '0') +
                  "\n    frameworks: [custom]\n");
    writeFile(site(),
              "slurm:\n"
              "  url: " +
                  slurm_url + "\n  user: " + test::currentUser() + "\n" +
                  (use_token_file ? "  token_file: token.jwt\n" : "  jwt_key_file: jwt.key\n") +
                  "  job_environment:\n"
                  "    PATH: /usr/local/bin:/usr/bin:/bin\n"
                  // The job's fence read every second (slurm/script_renderer.h): a retry after
                  // an attempt that ended unobserved (a NODE_FAIL) waits 3P + G = 4 s, not 40.
                  "    TUNEPLANE_FENCE_POLL_SECONDS: \"1\"\n"
                  "    TUNEPLANE_FENCE_GRACE_SECONDS: \"1\"\n" +
                  extra_job_env +
                  "partitions:\n"
                  "  gpu: gpu\n"
                  "  cpu: cpu\n"
                  "gpu_series:\n"
                  "  - name: h100\n"
                  "    slurm_constraint: h100\n"
                  "    gpus_per_node: 2\n"
                  "    gres_type: h100\n"
                  "  - name: a100\n"
                  "    slurm_constraint: a100\n"
                  "    gpus_per_node: 2\n"
                  "    gres_type: a100\n"
                  "container_runtime: apptainer\n"
                  "staging_root: " +
                  dir_ + "/staging\nruntime_registry_file: runtimes.yaml\n" + extra_yaml);
  }
  // Staged attempts are read-only: the staging seam's removeTree makes them writable first.
  ~SiteDir() { staging::PosixStagingFs().removeTree(dir_); }
  SiteDir(const SiteDir&) = delete;
  SiteDir& operator=(const SiteDir&) = delete;

  const std::string& dir() const { return dir_; }
  std::string site() const { return dir_ + "/site.yaml"; }
  // Adds keys to the site file's slurm: block; `lines` are indented two spaces.
  void addSlurmYaml(const std::string& lines) const {
    std::string text = readFile(site());
    text.replace(text.find("slurm:\n"), 7, "slurm:\n" + lines);
    writeFile(site(), text);
  }
  std::string stagingRoot() const { return dir_ + "/staging"; }
  std::string keyFile() const { return dir_ + "/jwt.key"; }

  SiteContext context() const {
    auto loaded = loadSiteContext(site(), SiteEnvironment{});
    EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().front().describe());
    return loaded ? *loaded : SiteContext{};
  }

  // Writes a spec into the temp dir and returns its path.
  std::string specFile(const std::string& name, const std::string& text) const {
    const std::string path = dir_ + "/" + name;
    writeFile(path, text);
    return path;
  }

 private:
  std::string dir_;
  std::string artifact_;
};

// A stand-in Ray under `dir`/fake-ray, for GPU jobs in the simulator (which runs no real Ray):
// `ray start --block` reports the head's address the way Ray does (a file in its
// --temp-dir), then every node just blocks; a python `ray` module whose nodes are all alive.
// Returns the directory: `ray` is the executable, `py/` goes on the job's PYTHONPATH.
inline std::string writeFakeRay(const std::string& dir) {
  const std::string fake = dir + "/fake-ray";
  std::filesystem::create_directories(fake + "/py");
  writeFile(fake + "/ray",
            "#!/bin/bash\n"
            "for arg in \"$@\"; do\n"
            "  case $arg in --temp-dir=*) echo 127.0.0.1:6379 >\"${arg#*=}/ray_current_cluster\" "
            ";; esac\n"
            "done\n"
            "exec sleep 300\n");
  std::filesystem::permissions(fake + "/ray", std::filesystem::perms::owner_all);
  writeFile(fake + "/py/ray.py",
            "_on = False\n"
            "def is_initialized():\n    return _on\n"
            "def init(address=None, logging_level=None):\n    global _on\n    _on = True\n"
            "def nodes():\n    return [{'Alive': True}] * 16\n");
  return fake;
}

// A two-pool (het) GPU job running `bash -c SCRIPT` (the script is not quoted: keep it
// free of double quotes); `extra` is appended under `spec:`.
inline std::string hetSpec(const std::string& script, const std::string& extra = "") {
  return "apiVersion: tuneplane.io/v1\n"
         "kind: TrainingJob\n"
         "metadata:\n"
         "  name: het\n"
         "spec:\n"
         "  framework:\n"
         "    name: custom\n"
         "    task: custom\n"
         "    runtime_id: custom-demo\n"
         "    command: [\"bash\", \"-c\", \"" +
         script +
         "\"]\n"
         "  resources:\n"
         "    time_limit: 60m\n"
         "    pools:\n"
         "      - name: learners\n"
         "        gpu_series: h100\n"
         "        gpus_per_node: 2\n"
         "        cpus: 1\n"
         "        memory_gb: 1\n"
         "      - name: actors\n"
         "        gpu_series: a100\n"
         "        gpus_per_node: 2\n"
         "        cpus: 1\n"
         "        memory_gb: 1\n" +
         extra;
}

// A CPU-only custom job running `bash -c SCRIPT`; `extra` is appended under `spec:`
// (e.g. a retry block), `pool_extra` under the pool.
inline std::string cpuSpec(const std::string& script = "echo hello", const std::string& extra = "",
                           const std::string& name = "hello", const std::string& pool_extra = "",
                           const std::string& runtime = "custom-demo") {
  std::string quoted;
  for (char c : script) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return "apiVersion: tuneplane.io/v1\n"
         "kind: TrainingJob\n"
         "metadata:\n"
         "  name: " +
         name +
         "\n"
         "spec:\n"
         "  framework:\n"
         "    name: custom\n"
         "    task: custom\n"
         "    runtime_id: " +
         runtime +
         "\n"
         "    command: [\"bash\", \"-c\", \"" +
         quoted +
         "\"]\n"
         "  resources:\n"
         "    time_limit: 10m\n"
         "    pools:\n"
         "      - name: main\n"
         "        nodes: 1\n"
         "        gpus_per_node: 0\n"
         "        cpus: 1\n"
         "        memory_gb: 1\n" +
         pool_extra + extra;
}

// "  retry:\n    max_attempts: N\n    backoff_seconds: B\n    on: ON\n"
inline std::string retryBlock(int max_attempts, int backoff_seconds, const std::string& on) {
  return "  retry:\n    max_attempts: " + std::to_string(max_attempts) +
         "\n    backoff_seconds: " + std::to_string(backoff_seconds) + "\n    on: " + on + "\n";
}

}  // namespace tuneplane::pipeline::testing
