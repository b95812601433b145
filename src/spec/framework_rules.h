// What a spec's framework section must hold, by framework. A custom job (and any framework
// TunePlane does not launch itself) runs its own command. A first-class framework — today
// LlamaFactory — is launched by TunePlane from the configuration the spec carries
// (spec.framework.config), and TunePlane owns what makes a launch on Slurm work: where the
// checkpoints go, how many Ray workers train, and whether a retry resumes. The rules, each
// reported with its field path and code, all in one pass (the parser runs them last):
//
//   custom and others   command required (spec.missing_field); no config
//                       (spec.config_not_allowed)
//   llamafactory        config required (spec.missing_field); no command or args
//                       (spec.command_not_allowed); the task is a LlamaFactory stage
//                       (spec.invalid_value); the config's top-level keys are argument names
//                       (spec.invalid_name) and not the ones TunePlane sets — output_dir,
//                       ray_num_workers, resources_per_worker (spec.reserved_config_key);
//                       `stage`, when given, is the task (spec.wrong_type,
//                       spec.stage_mismatch); `overwrite_output_dir` is a boolean
//                       (spec.wrong_type) that agrees with spec.retry.resume (true only
//                       with resume off, false only with it on), and resume_from_checkpoint
//                       is set only with resume off (spec.resume_conflict); no USE_RAY in
//                       spec.framework.env (spec.reserved_env).
//
// A rule is judged only from fields the parser read cleanly (PartialSpec::readable), so one
// problem gives one error. Pure.
#pragma once

#include <array>
#include <string_view>

#include "common/result.h"
#include "spec/partial_spec.h"

namespace tuneplane::spec {

inline constexpr std::string_view kLlamaFactory = "llamafactory";

// LlamaFactory's training stages (its `stage` argument): the task of a llamafactory job.
inline constexpr std::array<std::string_view, 6> kLlamaFactoryStages = {"pt",  "sft", "rm",
                                                                        "ppo", "dpo", "kto"};

// The config keys TunePlane writes itself for a llamafactory job.
inline constexpr std::string_view kOutputDirKey = "output_dir";
inline constexpr std::string_view kRayNumWorkersKey = "ray_num_workers";
inline constexpr std::string_view kResourcesPerWorkerKey = "resources_per_worker";
inline constexpr std::string_view kStageKey = "stage";
inline constexpr std::string_view kOverwriteOutputDirKey = "overwrite_output_dir";
inline constexpr std::string_view kResumeFromCheckpointKey = "resume_from_checkpoint";
// The driver's switch into Ray mode, which TunePlane sets for llamafactory jobs.
inline constexpr std::string_view kUseRayEnv = "USE_RAY";

// True for a framework that TunePlane launches from spec.framework.config.
bool launchedFromConfig(std::string_view framework_name);

// Which keys the spec's framework section holds, whatever their values: a key given with a
// bad value is still given (and refused where it does not belong).
struct FrameworkKeys {
  bool command = false;
  bool args = false;
  bool config = false;
};

// The rules above, over a spec as far as it parsed. Errors in rule order: the command or
// config's presence, the task, the config's keys in key order, the environment.
Errors judgeFramework(const PartialSpec& partial, const FrameworkKeys& given);

}  // namespace tuneplane::spec
