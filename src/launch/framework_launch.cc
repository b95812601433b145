// See framework_launch.h.
#include "launch/framework_launch.h"

#include <string>

#include "launch/config_yaml.h"
#include "spec/framework_rules.h"

namespace tuneplane::launch {

void addLlamaFactoryLaunch(const spec::JobSpec& spec, LaunchRequest& request) {
  nlohmann::json config = spec.framework.config.value_or(nlohmann::json::object());
  int gpus = 0;
  for (const Component& c : request.components) gpus += c.nodes * c.gpus_per_node;
  const bool resume = spec.retry.resume;
  config[std::string(spec::kStageKey)] = spec.framework.task;
  config[std::string(spec::kOutputDirKey)] = request.container_checkpoint_dir;
  config[std::string(spec::kOverwriteOutputDirKey)] = !resume;
  config[std::string(spec::kRayNumWorkersKey)] = gpus;

  const std::string comment =
      "LlamaFactory's training configuration for TunePlane job " + request.identity.job_id +
      ", attempt " + std::to_string(request.identity.attempt) +
      ": spec.framework.config, with what TunePlane sets:\n"
      "stage (the task), output_dir (the job's checkpoint directory, shared by its attempts),\n"
      "overwrite_output_dir (from spec.retry.resume) and ray_num_workers (the job's GPUs).";
  request.inputs.push_back(
      StagedInput{std::string(kLlamaFactoryConfigFile), configYaml(config, comment)});
  request.command = {"llamafactory-cli", "train",
                     request.container_attempt_dir + "/" + std::string(kLlamaFactoryConfigFile)};
  request.environment.emplace_back(std::string(spec::kUseRayEnv), "1");
  request.ray_min_cpus_per_gpu = kLlamaFactoryCpusPerGpu;
  // With resume on, LlamaFactory continues from the highest checkpoint (the rules refuse a
  // resume_from_checkpoint then); with it off, from scratch, or from the user's own
  // resume_from_checkpoint, which the script cannot see.
  if (resume) {
    request.resume_record = ResumeRecord::kLastCheckpoint;
  } else if (!config.contains(std::string(spec::kResumeFromCheckpointKey))) {
    request.resume_record = ResumeRecord::kFromScratch;
  }
}

}  // namespace tuneplane::launch
