// The framework section's rules (spec/framework_rules.h) and how spec.framework.config is
// read (spec/framework_config.h): one row per rule, each changing one thing in a llamafactory
// spec that passes, so each must give exactly its one error, with its code and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "spec/framework_config.h"
#include "spec/spec_parser.h"

namespace tuneplane::spec::framework_rules_test {
namespace {

using nlohmann::json;

constexpr const char* kLlamaFactory = R"(apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata:
  name: lora-sft
spec:
  framework:
    name: llamafactory
    task: sft
    runtime_id: lf
    config:
      model_name_or_path: /models/Qwen2.5-0.5B
      dataset: alpaca_en_demo
      finetuning_type: lora
      learning_rate: 1.0e-4
      num_train_epochs: 3
      do_train: true
  resources:
    pools:
      - {name: main, gpu_series: h100, gpus_per_node: 2, cpus: 8, memory_gb: 64}
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "test bug: '" << from << "' not in the base spec";
    return text;
  }
  return text.replace(at, from.size(), to);
}

// The base spec with `lines` (indented six spaces) added to its config.
std::string withConfig(const std::string& lines) {
  return replaced(kLlamaFactory, "      do_train: true\n", "      do_train: true\n" + lines);
}

std::string describe(const Errors& errors) {
  std::string out;
  for (const Error& e : errors) out += e.describe() + "\n";
  return out;
}

TEST(FrameworkRules, TheBaseSpecPasses) {
  const auto spec = parseJobSpec(kLlamaFactory);
  ASSERT_TRUE(spec.has_value()) << describe(spec.error());
  ASSERT_TRUE(spec->framework.config.has_value());
  EXPECT_EQ(*spec->framework.config, json::parse(R"({
    "model_name_or_path": "/models/Qwen2.5-0.5B", "dataset": "alpaca_en_demo",
    "finetuning_type": "lora", "learning_rate": 1.0e-4, "num_train_epochs": 3,
    "do_train": true})"));
  EXPECT_TRUE(spec->framework.command.empty());
  EXPECT_TRUE(spec->retry.resume);
}

struct RuleRow {
  const char* rule;
  std::string spec;
  const char* code;
  std::string field;
};

std::vector<RuleRow> rows() {
  const std::string lf = kLlamaFactory;
  const auto r = [&](const std::string& from, const std::string& to) {
    return replaced(lf, from, to);
  };
  const std::string resume_off = "  retry: {resume: false}\n";
  const std::size_t config_at = lf.find("    config:\n");
  const std::string config_block = lf.substr(config_at, lf.find("  resources:") - config_at);
  // The top map is depth 0, ray_init_kwargs' list depth 1: the 16th level is refused.
  std::string deep_index;
  for (int i = 1; i < kMaxConfigDepth; ++i) deep_index += "[0]";
  const std::string custom = replaced(
      replaced(replaced(lf, "name: llamafactory", "name: custom"), "task: sft", "task: custom"),
      "    config:\n", "    command: [python, train.py]\n    config:\n");
  return {
      // What each framework takes.
      {"llamafactory with a command",
       r("    config:\n", "    command: [llamafactory-cli]\n    config:\n"),
       "spec.command_not_allowed", "spec.framework.command"},
      {"llamafactory with args", r("    config:\n", "    args: [x.yaml]\n    config:\n"),
       "spec.command_not_allowed", "spec.framework.args"},
      {"llamafactory without a config", replaced(lf, config_block, ""), "spec.missing_field",
       "spec.framework.config"},
      {"custom with a config", custom, "spec.config_not_allowed", "spec.framework.config"},
      // The task.
      {"task not a LlamaFactory stage", r("task: sft", "task: finetune"), "spec.invalid_value",
       "spec.framework.task"},
      // The config's own shape.
      {"config a list", replaced(lf, config_block, "    config: [a]\n"), "spec.wrong_type",
       "spec.framework.config"},
      {"a key that is no argument name", withConfig("      \"lora-rank\": 8\n"),
       "spec.invalid_name", "spec.framework.config.lora-rank"},
      {"a duplicate key", withConfig("      dataset: other\n"), "spec.duplicate_key",
       "spec.framework.config.dataset"},
      {"an unquoted yes", withConfig("      bf16: yes\n"), "spec.ambiguous_value",
       "spec.framework.config.bf16"},
      {"an unquoted Off", withConfig("      plot_loss: Off\n"), "spec.ambiguous_value",
       "spec.framework.config.plot_loss"},
      {"an integer beyond 64 bits", withConfig("      seed: 123456789012345678901234\n"),
       "spec.out_of_range", "spec.framework.config.seed"},
      {"a float beyond a double", withConfig("      max_grad_norm: 1.0e999\n"), "spec.out_of_range",
       "spec.framework.config.max_grad_norm"},
      {"infinity", withConfig("      max_grad_norm: .inf\n"), "spec.invalid_value",
       "spec.framework.config.max_grad_norm"},
      {"a custom YAML tag", withConfig("      seed: !!binary aGVsbG8=\n"), "spec.wrong_type",
       "spec.framework.config.seed"},
      {"a NUL byte", withConfig("      template: \"qwen\\0\"\n"), "spec.nul_byte",
       "spec.framework.config.template"},
      {"a key too long", withConfig("      ray_init_kwargs: {" + std::string(201, 'k') + ": 1}\n"),
       "spec.too_long", "spec.framework.config.ray_init_kwargs"},
      {"nesting too deep",
       withConfig("      ray_init_kwargs: " + std::string(20, '[') + std::string(20, ']') + "\n"),
       "spec.too_deep", "spec.framework.config.ray_init_kwargs" + deep_index},
      // The keys TunePlane owns.
      {"output_dir", withConfig("      output_dir: saves/qwen\n"), "spec.reserved_config_key",
       "spec.framework.config.output_dir"},
      {"ray_num_workers", withConfig("      ray_num_workers: 4\n"), "spec.reserved_config_key",
       "spec.framework.config.ray_num_workers"},
      {"resources_per_worker", withConfig("      resources_per_worker: {GPU: 2}\n"),
       "spec.reserved_config_key", "spec.framework.config.resources_per_worker"},
      {"stage not the task", withConfig("      stage: dpo\n"), "spec.stage_mismatch",
       "spec.framework.config.stage"},
      {"stage not a string", withConfig("      stage: 1\n"), "spec.wrong_type",
       "spec.framework.config.stage"},
      {"overwrite_output_dir a string", withConfig("      overwrite_output_dir: \"true\"\n"),
       "spec.wrong_type", "spec.framework.config.overwrite_output_dir"},
      {"overwrite_output_dir: true while resume is on",
       withConfig("      overwrite_output_dir: true\n"), "spec.resume_conflict",
       "spec.framework.config.overwrite_output_dir"},
      {"overwrite_output_dir: false while resume is off",
       withConfig("      overwrite_output_dir: false\n") + resume_off, "spec.resume_conflict",
       "spec.framework.config.overwrite_output_dir"},
      {"resume_from_checkpoint while resume is on",
       withConfig("      resume_from_checkpoint: /ckpt/checkpoint-10\n"), "spec.resume_conflict",
       "spec.framework.config.resume_from_checkpoint"},
      {"USE_RAY in the environment", r("    config:\n", "    env: {USE_RAY: \"0\"}\n    config:\n"),
       "spec.reserved_env", "spec.framework.env.USE_RAY"},
  };
}

TEST(FrameworkRules, EachRuleHasItsCodeAndField) {
  for (const RuleRow& row : rows()) {
    SCOPED_TRACE(row.rule);
    const PartialSpec partial = parsePartialJobSpec(row.spec);
    const Errors& errors = partial.errors;
    ASSERT_EQ(errors.size(), 1u) << describe(errors);
    EXPECT_EQ(errors[0].code, row.code) << errors[0].describe();
    EXPECT_EQ(errors[0].field, row.field) << errors[0].describe();
    EXPECT_FALSE(errors[0].message.empty());
  }
}

TEST(FrameworkRules, WhatResumeOffAllows) {
  for (const std::string& lines :
       {std::string("      overwrite_output_dir: true\n"),
        std::string("      resume_from_checkpoint: /ckpt/checkpoint-10\n")}) {
    const auto spec = parseJobSpec(withConfig(lines) + "  retry: {resume: false}\n");
    ASSERT_TRUE(spec.has_value()) << describe(spec.error());
    EXPECT_FALSE(spec->retry.resume);
  }
  // The stage may be written, as the task.
  EXPECT_TRUE(parseJobSpec(withConfig("      stage: sft\n")).has_value());
}

// A user fixes a spec in one pass: every problem at once, structural and the framework's.
TEST(FrameworkRules, EveryProblemIsReportedAtOnce) {
  std::string text = replaced(kLlamaFactory, "task: sft", "task: finetune");
  text = replaced(text, "    config:\n", "    command: [llamafactory-cli]\n    config:\n");
  text = replaced(text, "      do_train: true\n",
                  "      do_train: true\n      output_dir: x\n      ray_num_workers: 2\n"
                  "      overwrite_output_dir: true\n      bf16: on\n      \"bad key\": 1\n");
  const PartialSpec partial = parsePartialJobSpec(text);
  std::vector<std::pair<std::string, std::string>> got;
  for (const Error& e : partial.errors) got.emplace_back(e.code, e.field);
  EXPECT_THAT(got, ::testing::UnorderedElementsAre(
                       std::pair{"spec.ambiguous_value", "spec.framework.config.bf16"},
                       std::pair{"spec.command_not_allowed", "spec.framework.command"},
                       std::pair{"spec.invalid_value", "spec.framework.task"}))
      << describe(partial.errors)
      << "(a config with a structural error is not judged key by key: one problem, one error)";

  // Without the structural problem, every key rule speaks.
  text = replaced(text, "      bf16: on\n", "");
  const PartialSpec judged = parsePartialJobSpec(text);
  got.clear();
  for (const Error& e : judged.errors) got.emplace_back(e.code, e.field);
  EXPECT_THAT(got,
              ::testing::ElementsAre(
                  std::pair{"spec.command_not_allowed", "spec.framework.command"},
                  std::pair{"spec.invalid_value", "spec.framework.task"},
                  std::pair{"spec.invalid_name", "spec.framework.config.bad key"},
                  std::pair{"spec.reserved_config_key", "spec.framework.config.output_dir"},
                  std::pair{"spec.resume_conflict", "spec.framework.config.overwrite_output_dir"},
                  std::pair{"spec.reserved_config_key", "spec.framework.config.ray_num_workers"}))
      << describe(judged.errors);
}

TEST(FrameworkRules, CustomWithoutCommandAndWithConfigGetsBoth) {
  const std::string text = R"(apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata: {name: j}
spec:
  framework: {name: custom, task: custom, config: {a: 1}}
  resources: {pools: [{name: main, cpus: 1, memory_gb: 1}]}
)";
  std::vector<std::pair<std::string, std::string>> got;
  for (const Error& e : parsePartialJobSpec(text).errors) got.emplace_back(e.code, e.field);
  EXPECT_THAT(
      got, ::testing::ElementsAre(std::pair{"spec.missing_field", "spec.framework.command"},
                                  std::pair{"spec.config_not_allowed", "spec.framework.config"}));
}

// Scalars are typed as YAML 1.2's core schema (and JSON) types them; quoted ones are strings.
TEST(FrameworkConfig, ScalarsAreTypedAsYaml12) {
  const auto spec = parseJobSpec(withConfig(R"(      a_null: ~
      a_null2: null
      a_null3:
      t: True
      f: FALSE
      i: -42
      big: 18446744073709551615
      octal: 0o17
      hex: 0x1F
      float: 5e-5
      float2: .5
      float3: 1.
      text: 1e-5x
      date: 2024-01-01
      quoted_number: "42"
      quoted_yes: 'yes'
      block: |
        two
        lines
      list: [1, two, {three: 3.0}]
      empty_map: {}
      unicode: "\u00e9t\u00e9 \U0001F600"
)"));
  ASSERT_TRUE(spec.has_value()) << describe(spec.error());
  const json& c = *spec->framework.config;
  EXPECT_TRUE(c["a_null"].is_null());
  EXPECT_TRUE(c["a_null2"].is_null());
  EXPECT_TRUE(c["a_null3"].is_null());
  EXPECT_EQ(c["t"], true);
  EXPECT_EQ(c["f"], false);
  EXPECT_EQ(c["i"], -42);
  EXPECT_EQ(c["big"].get<uint64_t>(), 18446744073709551615ull);
  EXPECT_EQ(c["octal"], 15);
  EXPECT_EQ(c["hex"], 31);
  EXPECT_EQ(c["float"], 5e-5);
  EXPECT_EQ(c["float2"], 0.5);
  EXPECT_EQ(c["float3"], 1.0);
  EXPECT_TRUE(c["float3"].is_number_float());
  EXPECT_EQ(c["text"], "1e-5x");
  EXPECT_EQ(c["date"], "2024-01-01");
  EXPECT_EQ(c["quoted_number"], "42");
  EXPECT_EQ(c["quoted_yes"], "yes");
  EXPECT_EQ(c["block"], "two\nlines\n");
  EXPECT_EQ(c["list"], json::parse(R"([1, "two", {"three": 3.0}])"));
  EXPECT_EQ(c["empty_map"], json::object());
  EXPECT_EQ(c["unicode"], "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80");
}

TEST(FrameworkConfig, JsonAndYamlFormsGiveTheSameConfig) {
  const std::string json_spec = R"({"apiVersion": "tuneplane.io/v1", "kind": "TrainingJob",
    "metadata": {"name": "lora-sft"},
    "spec": {"framework": {"name": "llamafactory", "task": "sft", "runtime_id": "lf",
      "config": {"model_name_or_path": "/models/Qwen2.5-0.5B", "dataset": "alpaca_en_demo",
        "finetuning_type": "lora", "learning_rate": 0.0001, "num_train_epochs": 3,
        "do_train": true}},
     "resources": {"pools": [{"name": "main", "gpu_series": "h100", "gpus_per_node": 2,
        "cpus": 8, "memory_gb": 64}]}}})";
  const auto from_json = parseJobSpec(json_spec);
  const auto from_yaml = parseJobSpec(kLlamaFactory);
  ASSERT_TRUE(from_json.has_value()) << describe(from_json.error());
  ASSERT_TRUE(from_yaml.has_value());
  EXPECT_EQ(*from_json, *from_yaml);
}

// Hostile keys and values are data: they parse to exactly what was written.
TEST(FrameworkConfig, HostileStringsAreKeptExactly) {
  const std::vector<std::string> hostile = {"$(touch /tmp/x)",
                                            "`id`",
                                            "a'b\"c",
                                            "line\nbreak",
                                            "tab\there",
                                            "# not a comment",
                                            "key: value",
                                            "- item",
                                            "{a: 1}",
                                            "[1, 2]",
                                            "&anchor",
                                            "*alias",
                                            "!tag",
                                            "${oc.env:HOME}",
                                            "\\",
                                            "\xe2\x80\xa8",
                                            "\xc2\x85",
                                            "\xef\xbb\xbf",
                                            "null",
                                            "~",
                                            "yes",
                                            "0x10",
                                            "1e3",
                                            ""};
  std::string yaml_lines;
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    yaml_lines += "      v" + std::to_string(i) + ": " + json(hostile[i]).dump() + "\n";
  }
  yaml_lines +=
      "      nested: {" + json(hostile[0]).dump() + ": " + json(hostile[1]).dump() + "}\n";
  const auto spec = parseJobSpec(withConfig(yaml_lines));
  ASSERT_TRUE(spec.has_value()) << describe(spec.error());
  const json& c = *spec->framework.config;
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    EXPECT_EQ(c["v" + std::to_string(i)], hostile[i]) << i;
  }
  EXPECT_EQ(c["nested"][hostile[0]], hostile[1]);
}

}  // namespace
}  // namespace tuneplane::spec::framework_rules_test
