// See framework_rules.h.
#include "spec/framework_rules.h"

#include <algorithm>
#include <string>

#include "spec/error_codes.h"
#include "spec/names.h"

namespace tuneplane::spec {
namespace {

constexpr const char* kFrameworkPath = "spec.framework";
constexpr const char* kConfigPath = "spec.framework.config";

std::string configField(const std::string& key) {
  return std::string(kConfigPath) + "." + key;
}

std::string stagesText() {
  std::string out;
  for (std::string_view s : kLlamaFactoryStages) out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

bool isStage(std::string_view task) {
  return std::find(kLlamaFactoryStages.begin(), kLlamaFactoryStages.end(), task) !=
         kLlamaFactoryStages.end();
}

class FrameworkJudge {
 public:
  FrameworkJudge(const PartialSpec& partial, const FrameworkKeys& given)
      : spec_(partial.spec), readable_(partial), given_(given) {}

  Errors judge() {
    const Framework& f = spec_.framework;
    if (!readable_.readable("spec.framework.name") || f.name.empty()) return {};
    if (launchedFromConfig(f.name)) {
      judgeLlamaFactory();
    } else {
      judgeCommandJob();
    }
    return std::move(errors_);
  }

 private:
  void add(const char* code, std::string field, std::string message) {
    errors_.push_back(Error{code, std::move(field), std::move(message)});
  }

  void judgeCommandJob() {
    if (!given_.command) {
      add(codes::kMissingField, std::string(kFrameworkPath) + ".command",
          "required field is missing: the argv this job runs");
    }
    if (given_.config) {
      add(codes::kConfigNotAllowed, kConfigPath,
          "only a first-class framework (llamafactory) is launched from a config; a '" +
              spec_.framework.name + "' job runs spec.framework.command");
    }
  }

  void judgeLlamaFactory() {
    const Framework& f = spec_.framework;
    for (const auto& [given, key] : {std::pair{given_.command, "command"}, {given_.args, "args"}}) {
      if (given) {
        add(codes::kCommandNotAllowed, std::string(kFrameworkPath) + "." + key,
            "a llamafactory job is launched by TunePlane (llamafactory-cli train with the "
            "config it writes from spec.framework.config); remove " +
                std::string(key));
      }
    }
    if (!given_.config) {
      add(codes::kMissingField, kConfigPath,
          "required field is missing: LlamaFactory's training configuration (its YAML keys: "
          "model_name_or_path, dataset, finetuning_type, …)");
    }
    const bool task_known = readable_.readable("spec.framework.task") && !f.task.empty();
    if (task_known && !isStage(f.task)) {
      add(codes::kInvalidValue, std::string(kFrameworkPath) + ".task",
          "'" + f.task + "' is not a LlamaFactory stage (" + stagesText() + ")");
    }
    if (f.config && f.config->is_object() && readable_.readable(kConfigPath)) {
      for (const auto& [key, value] : f.config->items()) {
        judgeConfigKey(key, value, task_known && isStage(f.task));
      }
    }
    if (readable_.readable("spec.framework.env") && f.env.count(std::string(kUseRayEnv)) != 0) {
      add(codes::kReservedEnv, std::string(kFrameworkPath) + ".env." + std::string(kUseRayEnv),
          "TunePlane sets USE_RAY=1 for a llamafactory job: it trains on every GPU of the job "
          "through Ray");
    }
  }

  // Whether a retry resumes: the spec's switch, on unless it says otherwise. nullopt when
  // the switch could not be read (its own error says so).
  std::optional<bool> resume() const {
    if (!readable_.readable("spec.retry.resume")) return std::nullopt;
    return spec_.retry.resume;
  }

  void judgeConfigKey(const std::string& key, const nlohmann::json& value, bool task_valid) {
    const std::string field = configField(key);
    // LlamaFactory's arguments are Python identifiers; a key of any other form is a mistake
    // its parser would only report on the node.
    if (!isEnvName(key)) {
      add(codes::kInvalidName, field,
          "a LlamaFactory argument name is letters, digits and '_', not starting with a digit");
      return;
    }
    if (key == kOutputDirKey) {
      add(codes::kReservedConfigKey, field,
          "TunePlane sets output_dir to the job's checkpoint directory "
          "(TUNEPLANE_CHECKPOINT_DIR), so that a retried attempt finds the checkpoints of the "
          "one before; remove it");
    } else if (key == kRayNumWorkersKey) {
      add(codes::kReservedConfigKey, field,
          "TunePlane sets ray_num_workers to the job's GPUs across all pools; size the job with "
          "spec.resources.pools instead");
    } else if (key == kResourcesPerWorkerKey) {
      add(codes::kReservedConfigKey, field,
          "TunePlane gives each Ray worker one GPU (ray_num_workers is the job's GPU count); "
          "remove it");
    } else if (key == kStageKey) {
      if (!value.is_string()) {
        add(codes::kWrongType, field, "must be a string: the LlamaFactory stage");
      } else if (task_valid && value.get<std::string>() != spec_.framework.task) {
        add(codes::kStageMismatch, field,
            "stage '" + value.get<std::string>() + "' is not the job's task '" +
                spec_.framework.task +
                "'; the task says which stage runs (omit stage and TunePlane writes it)");
      }
    } else if (key == kOverwriteOutputDirKey) {
      const std::optional<bool> resumes = resume();
      if (!value.is_boolean()) {
        add(codes::kWrongType, field, "must be true or false");
      } else if (value.get<bool>() && resumes.value_or(false)) {
        add(codes::kResumeConflict, field,
            "overwrite_output_dir: true makes a retried attempt start over from step 0, while "
            "spec.retry.resume (on unless set) says it continues from the last checkpoint; set "
            "spec.retry.resume: false to start over, or remove this");
      } else if (!value.get<bool>() && resumes && !*resumes) {
        add(codes::kResumeConflict, field,
            "overwrite_output_dir: false makes LlamaFactory resume from the last checkpoint, "
            "while spec.retry.resume: false says every attempt starts over; remove this "
            "(TunePlane writes overwrite_output_dir from spec.retry.resume)");
      }
    } else if (key == kResumeFromCheckpointKey && resume().value_or(false)) {
      add(codes::kResumeConflict, field,
          "with spec.retry.resume on (the default), every attempt resumes from the job's latest "
          "checkpoint, so a fixed checkpoint would make each retry start from it again; set "
          "spec.retry.resume: false to start from a checkpoint of your own");
    }
  }

  const JobSpec& spec_;
  ReadableFields readable_;
  FrameworkKeys given_;
  Errors errors_;
};

}  // namespace

bool launchedFromConfig(std::string_view framework_name) {
  return framework_name == kLlamaFactory;
}

Errors judgeFramework(const PartialSpec& partial, const FrameworkKeys& given) {
  return FrameworkJudge(partial, given).judge();
}

}  // namespace tuneplane::spec
