// How TunePlane launches a first-class framework (LlamaFactory) from the configuration a spec
// carries: it writes the config into the attempt directory as YAML with the keys TunePlane
// owns added, and runs `llamafactory-cli train <that file>` as the Ray driver on the head
// node with USE_RAY=1, so that LlamaFactory trains through Ray on every GPU of the job:
//
//   stage                 the job's task (spec.framework.task)
//   output_dir            the job's checkpoint directory (TUNEPLANE_CHECKPOINT_DIR), the same
//                         for every attempt: LlamaFactory resumes from its highest
//                         checkpoint-N unless overwrite_output_dir is true
//   overwrite_output_dir  false with spec.retry.resume on (the default), true with it off
//   ray_num_workers       the job's GPUs across all pools (one Ray worker per GPU)
//
// LlamaFactory 0.9.5 and later asks Ray for one placement bundle {"CPU": 10, "GPU": 1} per
// worker and waits until the group is ready; so every Ray node of the job advertises at
// least 10 logical CPUs per GPU (LaunchRequest::ray_min_cpus_per_gpu; docs/decisions.md says
// why this rather than a refusal). The spec's rules (spec/framework_rules.h) have already
// refused what would contradict these keys. Pure.
#pragma once

#include <string_view>

#include "launch/launch_request.h"
#include "spec/job_spec.h"

namespace tuneplane::launch {

// The config file's name in the attempt directory.
inline constexpr std::string_view kLlamaFactoryConfigFile = "llamafactory.yaml";
// The CPUs LlamaFactory's placement group asks per GPU (its trainer_utils.py).
inline constexpr int kLlamaFactoryCpusPerGpu = 10;

// Fills what launching LlamaFactory needs into `request`: command, the config file (inputs),
// USE_RAY=1 (environment), ray_min_cpus_per_gpu and resume_record.
// REQUIRES: spec passed spec::judgeFramework as a llamafactory job (config is an object);
// request's identity, components, container_attempt_dir and container_checkpoint_dir are set.
void addLlamaFactoryLaunch(const spec::JobSpec& spec, LaunchRequest& request);

}  // namespace tuneplane::launch
