// Shared fixtures for the launch tests: a Pyxis site with three GPU series (one without a
// constraint), a runtime registry, and base specs that assemble cleanly, so each test
// changes exactly one thing.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "catalog/runtime_registry.h"
#include "catalog/site_config.h"
#include "launch/launch_request.h"
#include "spec/spec_parser.h"

namespace tuneplane::launch::testing {

inline catalog::SiteConfig testSite() {
  catalog::SiteConfig site;
  site.slurm.url = "http://127.0.0.1:6820";
  site.slurm.user = "tp";
  site.slurm.token_file = "/etc/tp/token";
  site.slurm.account = "acct";
  site.slurm.qos = "high";
  site.slurm.job_environment = {{"PATH", "/opt/slurm/bin:/usr/bin"}, {"LANG", "C.UTF-8"}};
  site.partitions.gpu = "gpu-part";
  site.partitions.cpu = "cpu-part";
  site.gpu_series = {
      {"h100", "h100&ib", 8, "h100"}, {"a100", "a100", 4, ""}, {"l40s", std::nullopt, 4, "l40s"}};
  site.container_runtime = catalog::ContainerRuntime::kPyxis;
  site.staging_root = "/shared/attempts";
  site.mounts = {{"/shared/data", "/data", true}, {"/shared/scratch", "/scratch", false}};
  site.ray.port = 7000;
  return site;
}

// Artifact paths live under `artifact_dir`; hashes are placeholders unless a test writes
// the files (see rules_table_test.cc).
inline catalog::RuntimeRegistry testRegistry(const std::string& artifact_dir = "/shared/rt") {
  using catalog::ArtifactFormat;
  const std::string sha(64, 'a');
  return catalog::RuntimeRegistry{{
      {"custom-torch", ArtifactFormat::kSqsh, artifact_dir + "/custom-torch.sqsh", sha, {}},
      {"custom-py", ArtifactFormat::kSqsh, artifact_dir + "/custom-py.sqsh", sha, {}},
      {"lf", ArtifactFormat::kSqsh, artifact_dir + "/lf.sqsh", sha, {"llamafactory"}},
      {"lf-sif", ArtifactFormat::kSif, artifact_dir + "/lf.sif", sha, {"llamafactory"}},
      {"torch-base", ArtifactFormat::kSqsh, artifact_dir + "/torch-base.sqsh", sha, {"custom"}},
  }};
}

inline constexpr const char* kGpuSpec = R"(apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata:
  name: job
spec:
  framework:
    name: custom
    task: custom
    runtime_id: custom-torch
    command: [python, train.py]
    args: [--epochs, 3]
    env: {ZED: z, ALPHA: a}
  resources:
    time_limit: 2h
    pools:
      - name: main
        gpu_series: h100
        nodes: 2
        gpus_per_node: 8
        cpus: 16
        memory_gb: 64
)";

inline constexpr const char* kCpuSpec = R"(apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata:
  name: cpu-job
spec:
  framework:
    name: custom
    task: custom
    runtime_id: custom-py
    command: [python3, prep.py]
  resources:
    time_limit: 30m
    pools:
      - name: main
        gpus_per_node: 0
        cpus: 4
        memory_gb: 8
)";

inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "test bug: '" << from << "' not in the base spec";
    return text;
  }
  return text.replace(at, from.size(), to);
}

inline spec::JobSpec parsed(const std::string& text) {
  auto spec = spec::parseJobSpec(text);
  if (!spec) {
    ADD_FAILURE() << "test spec does not parse: " << spec.error().front().describe();
    return {};
  }
  return *spec;
}

// `spec` (a custom job with a command and args lines, e.g. kGpuSpec) as a llamafactory/sft
// job on runtime `runtime_id`: the command and args give way to a small LoRA SFT config.
inline std::string asLlamaFactory(const std::string& spec, const std::string& runtime_id = "lf") {
  std::string text = spec;
  const auto replace = [&text](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos) {
      ADD_FAILURE() << "test bug: '" << from << "' not in the spec";
      return;
    }
    text.replace(at, from.size(), to);
  };
  replace("name: custom", "name: llamafactory");
  replace("task: custom", "task: sft");
  const auto runtime = text.find("runtime_id: ");
  if (runtime != std::string::npos) {
    text.replace(runtime, text.find('\n', runtime) - runtime, "runtime_id: " + runtime_id);
  }
  const auto command = text.find("    command: ");
  const auto env = text.find("    env: ");
  const auto end = env != std::string::npos ? env : text.find("  resources:");
  if (command == std::string::npos || end == std::string::npos) {
    ADD_FAILURE() << "test bug: no command in the spec";
    return text;
  }
  text.replace(command, end - command,
               "    config:\n"
               "      model_name_or_path: /models/Qwen2.5-0.5B\n"
               "      finetuning_type: lora\n"
               "      dataset: alpaca_en_demo\n"
               "      learning_rate: 1.0e-4\n"
               "      do_train: true\n");
  return text;
}

inline const AttemptIdentity kIdentity{"job-0001", 2, "tok-abc"};
inline constexpr const char* kAttemptDir = "/shared/attempts/job-0001/2";
inline constexpr const char* kCheckpointDir = "/shared/attempts/job-0001/checkpoints";

}  // namespace tuneplane::launch::testing
