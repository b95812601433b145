// A hermetic site for CLI tests: a temp dir with a small artifact (its sha256 computed here),
// a runtime registry, a site file whose token file holds a sentinel, a staging root, and a
// runner that starts the built `tuneplane` binary with TUNEPLANE_* cleared from its env.
#pragma once

#include <grp.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "staging/staging_fs.h"
#include "support/os_user.h"
#include "support/subprocess.h"
#include "support/test_files.h"
#include "support/test_paths.h"

extern char** environ;

namespace tuneplane::cli::testing {

inline std::string tuneplaneBinary() {
  return (test::binaryDir() / "src/cli/tuneplane").string();
}
// Written into the site's token file: it must never appear in anything staged or printed.
inline constexpr const char* kSentinelToken = "eyJTENTINEL.token-must-never-be-staged.x9";

using test::readFile;  // support/test_files.h
using test::writeFile;

inline std::string sha256Of(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", digest[i]);
    hex += buf;
  }
  return hex;
}

using test::anotherUser;
using test::currentGroup;
using test::currentUser;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class CliFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-cli-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::create_directories(dir_ + "/artifacts");
    std::filesystem::create_directories(dir_ + "/staging");
    artifact_ = dir_ + "/artifacts/demo.sqsh";
    writeFile(artifact_, "not really squashfs, but bytes with a known digest\n");
    artifact_sha_ = sha256Of(readFile(artifact_));
    writeFile(dir_ + "/token.jwt", kSentinelToken);
    std::filesystem::permissions(dir_ + "/token.jwt", std::filesystem::perms::owner_read |
                                                          std::filesystem::perms::owner_write);
    writeRegistry(dir_ + "/runtimes.yaml", artifact_sha_);
    writeFile(dir_ + "/site.yaml", siteYaml("runtimes.yaml"));
  }
  // Staged attempts are read-only: the staging seam's removeTree makes them writable first.
  void TearDown() override { staging::PosixStagingFs().removeTree(dir_); }

  std::string siteYaml(const std::string& registry) const {
    return "slurm:\n"
           "  url: http://127.0.0.1:6820\n"
           "  user: " +
           currentUser() +
           "\n"
           "  token_file: token.jwt\n"
           "  job_environment:\n"
           "    PATH: /usr/local/bin:/usr/bin:/bin\n"
           "partitions:\n"
           "  gpu: gpu\n"
           "  cpu: cpu\n"
           "gpu_series:\n"
           "  - name: h100\n"
           "    slurm_constraint: h100\n"
           "    gpus_per_node: 8\n"
           "    gres_type: h100\n"
           "  - name: unpinned\n"
           "    gpus_per_node: 4\n"
           "container_runtime: pyxis\n"
           "staging_root: " +
           dir_ + "/staging\n" + "runtime_registry_file: " + registry + "\n";
  }

  // Three runtimes of the one artifact: custom-demo and llamafactory-0-9 with digest `sha`,
  // custom-tampered with a digest it never has.
  void writeRegistry(const std::string& path, const std::string& sha) const {
    const auto runtime = [this](const std::string& id, const std::string& digest,
                                const std::string& framework) {
      return "  - id: " + id + "\n    format: sqsh\n    path: " + artifact_ +
             "\n    sha256: " + digest + "\n    frameworks: [" + framework + "]\n";
    };
    writeFile(path, "runtimes:\n" + runtime("custom-demo", sha, "custom") +
                        runtime("custom-tampered", std::string(64, '0'), "custom") +
                        runtime("llamafactory-0-9", sha, "llamafactory"));
  }

  // Writes a spec into the temp dir and returns its path.
  std::string spec(const std::string& name, const std::string& text) const {
    const std::string path = dir_ + "/" + name;
    writeFile(path, text);
    return path;
  }

  std::string site() const { return dir_ + "/site.yaml"; }

  // Runs the built binary (bounded: see support/subprocess.h); `env` entries are added to
  // the parent's env minus TUNEPLANE_*.
  RunResult run(const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env = {}) const {
    std::vector<std::string> env_entries;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::string_view(*e).starts_with("TUNEPLANE_")) continue;
      env_entries.emplace_back(*e);
    }
    for (const auto& [k, v] : env) env_entries.push_back(k + "=" + v);
    std::vector<std::string> argv = {tuneplaneBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto child = test::runProcess(argv, {.scratch = dir_, .env = env_entries});
    return {child.exit_code, child.out, child.err};
  }

  // Runs `bash -n` on a script; true when it parses.
  bool bashParses(const std::string& script) const {
    const std::string path = dir_ + "/.script.sh";
    writeFile(path, script);
    const std::string command = "bash -n '" + path + "' 2>" + dir_ + "/.bash-n.err";
    return std::system(command.c_str()) == 0;
  }

  std::string dir_;
  std::string artifact_;
  std::string artifact_sha_;
};

// A CPU-only custom job that passes every rule; `extra` is appended under `spec:`.
inline std::string cpuSpec(const std::string& runtime = "custom-demo",
                           const std::string& pool_extra = "", const std::string& extra = "") {
  return "apiVersion: tuneplane.io/v1\n"
         "kind: TrainingJob\n"
         "metadata:\n"
         "  name: hello\n"
         "spec:\n"
         "  framework:\n"
         "    name: custom\n"
         "    task: custom\n"
         "    runtime_id: " +
         runtime +
         "\n"
         "    command: [\"python3\", \"-c\", \"print('hi $(not) `cmd`')\"]\n"
         "  resources:\n"
         "    time_limit: 10m\n"
         "    pools:\n"
         "      - name: main\n"
         "        nodes: 1\n"
         "        gpus_per_node: 0\n"
         "        cpus: 2\n"
         "        memory_gb: 1\n" +
         pool_extra + extra;
}

// Two GPU pools: a heterogeneous job.
inline std::string heteroSpec(const std::string& second_series = "h100") {
  return "apiVersion: tuneplane.io/v1\n"
         "kind: TrainingJob\n"
         "metadata:\n"
         "  name: sft-run\n"
         "spec:\n"
         "  framework:\n"
         "    name: llamafactory\n"
         "    task: sft\n"
         "    runtime_id: llamafactory-0-9\n"
         "    config:\n"
         "      model_name_or_path: /models/Qwen2.5-7B\n"
         "      dataset: alpaca_en_demo\n"
         "      finetuning_type: lora\n"
         "      do_train: true\n"
         "  resources:\n"
         "    time_limit: 2h\n"
         "    pools:\n"
         "      - name: trainers\n"
         "        gpu_series: h100\n"
         "        nodes: 2\n"
         "        gpus_per_node: 8\n"
         "        cpus: 64\n"
         "        memory_gb: 256\n"
         "      - name: evals\n"
         "        gpu_series: " +
         second_series +
         "\n"
         "        nodes: 1\n"
         "        gpus_per_node: 2\n"
         "        cpus: 16\n"
         "        memory_gb: 64\n";
}

}  // namespace tuneplane::cli::testing
