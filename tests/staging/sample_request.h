// A LaunchRequest with every field set to a non-default value, for staging tests.
#pragma once

#include <string>

#include "launch/attempt_identity.h"
#include "launch/launch_request.h"

namespace tuneplane::staging::testing {

inline launch::LaunchRequest sampleRequest(const std::string& attempt_dir) {
  launch::LaunchRequest r;
  r.job_name = "hello";
  r.identity = {"hello-0a1b2c3d", 2, "tp-00112233445566778899aabbccddeeff"};
  r.framework = "llamafactory/sft";
  r.container_runtime = catalog::ContainerRuntime::kApptainer;
  r.artifact = {"/shared/runtimes/lf.sif", catalog::ArtifactFormat::kSif, std::string(64, 'a')};
  r.mounts = {{"/shared/datasets", "/datasets", true},
              {attempt_dir, attempt_dir, true},
              {attempt_dir + "/output", attempt_dir + "/output", false}};
  launch::Component gpu;
  gpu.pool_name = "trainers";
  gpu.partition = "gpu";
  gpu.constraint = "h100";
  gpu.nodes = 2;
  gpu.gpus_per_node = 8;
  gpu.gres_type = "h100";
  gpu.cpus_per_node = 96;
  gpu.memory_mb = 512 * 1024;
  gpu.scratch_mb = 100 * 1024;
  gpu.time_limit = std::chrono::minutes(90);
  launch::Component other = gpu;
  other.pool_name = "evals";
  other.constraint.reset();
  other.gres_type = "";
  other.nodes = 1;
  r.components = {gpu, other};
  r.time_limit_source = launch::TimeLimitSource::kSiteDefault;
  r.uses_gpus = true;
  r.command = {"python3", "-c", "print('it''s $(not) a `command`')"};
  r.environment = {{"ZETA", "last-but-first"}, {"ALPHA", "a b"}, {"TUNEPLANE_JOB_ID", "x"}};
  r.scheduler_environment = {{"PATH", "/usr/bin:/bin"}};
  r.attempt_dir = attempt_dir;
  r.logs_dir = attempt_dir + "/logs";
  r.output_dir = attempt_dir + "/output";
  r.fence_dir = launch::fenceDirFor(attempt_dir);
  r.container_attempt_dir = attempt_dir;
  r.container_output_dir = attempt_dir + "/output";
  // <job dir>/checkpoints, beside <job dir>/attempts/<n>.
  const std::string job_dir = attempt_dir.substr(0, attempt_dir.rfind("/attempts/"));
  r.checkpoint_dir = job_dir + "/checkpoints";
  r.container_checkpoint_dir = "/checkpoints";
  r.resume_record = launch::ResumeRecord::kLastCheckpoint;
  r.ray_min_cpus_per_gpu = 10;
  r.inputs = {{"llamafactory.yaml", "stage: sft\nnote: \"it's $(not) a `command`\"\n"}};
  r.account = "ml";
  r.qos = "high";
  r.ray.port = 7000;
  r.ray.dashboard = true;
  r.ray.dashboard_port = 7001;
  r.ray.node_manager_port = 7002;
  r.ray.object_manager_port = 7003;
  r.ray.min_worker_port = 11000;
  r.ray.max_worker_port = 11999;
  r.ray.ray_client_server_port = 7004;
  r.ray.dashboard_agent_listen_port = 7005;
  r.ray.join_timeout_seconds = 42;
  r.ray.executable = "/opt/ray/bin/ray";
  return r;
}

}  // namespace tuneplane::staging::testing
