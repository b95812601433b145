// Every problem in one pass (launch::judgeSpec): a spec with problems in several layers gets
// all of them — the structural ones first, then each backend rule whose inputs parsed — each
// once, with its own code and field, in a stable order. And a structural error is never
// judged again by a backend rule (one problem, one error).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "fixtures.h"
#include "launch/assembler.h"

namespace tuneplane::launch {
namespace {

using namespace tuneplane::launch::testing;
using CodeAndField = std::pair<std::string, std::string>;

std::vector<CodeAndField> codesAndFields(const Errors& errors) {
  std::vector<CodeAndField> out;
  for (const Error& e : errors) out.emplace_back(e.code, e.field);
  return out;
}

std::string describe(const Errors& errors) {
  std::string all;
  for (const Error& e : errors) all += e.describe() + "\n";
  return all;
}

std::string replacedAll(std::string text,
                        const std::vector<std::pair<std::string, std::string>>& edits) {
  for (const auto& [from, to] : edits) text = replaced(text, from, to);
  return text;
}

struct PassRow {
  const char* name;
  std::string spec;
  std::vector<CodeAndField> expected;  // in this order, nothing else
};

std::vector<PassRow> multiLayerRows() {
  const std::string g = kGpuSpec;
  const std::string c = kCpuSpec;
  const std::string pool0 = "spec.resources.pools[0].";
  return {
      {"Playground + missing command",
       replacedAll(g, {{"kind: TrainingJob", "kind: Playground"},
                       {"    command: [python, train.py]\n", ""}}),
       {{"spec.missing_field", "spec.framework.command"}, {"launch.kind_not_supported", "kind"}}},
      {"volumes + unknown GPU series + bad nodes",
       replacedAll(g, {{"  resources:", "  data:\n    volumes: [{name: ds}]\n  resources:"},
                       {"gpu_series: h100", "gpu_series: v100"},
                       {"nodes: 2", "nodes: 0"}}),
       {{"spec.non_positive", pool0 + "nodes"},
        {"launch.volumes_not_supported", "spec.data.volumes[0]"},
        {"launch.unknown_gpu_series", pool0 + "gpu_series"}}},
      {"CPU-only multi-node + unknown runtime + wrong type",
       replacedAll(c, {{"runtime_id: custom-py", "runtime_id: custom-nope"},
                       {"gpus_per_node: 0", "gpus_per_node: 0\n        nodes: 2"},
                       {"cpus: 4", "cpus: \"4\""}}),
       {{"spec.wrong_type", pool0 + "cpus"},
        {"launch.unknown_runtime", "spec.framework.runtime_id"},
        {"launch.cpu_only_multi_node", pool0 + "nodes"}}},
      {"unknown kind + OCI image",
       replacedAll(g, {{"kind: TrainingJob", "kind: Notebook"},
                       {"runtime_id: custom-torch", "runtime_id: custom-torch\n    image: x:1"}}),
       {{"spec.unknown_kind", "kind"}, {"launch.image_not_supported", "spec.framework.image"}}},
      {"bad framework name + series without constraint",
       replacedAll(g, {{"name: custom", "name: My_FW"},
                       {"gpu_series: h100", "gpu_series: l40s"},
                       {"gpus_per_node: 8", "gpus_per_node: 4"}}),
       {{"spec.invalid_name", "spec.framework.name"},
        {"launch.gpu_series_without_constraint", pool0 + "gpu_series"}}},
      {"CPU-only not custom + runtime not a string + scratch",
       replacedAll(c, {{"task: custom", "task: sft"},
                       {"runtime_id: custom-py", "runtime_id: 12"},
                       {"gpus_per_node: 0", "gpus_per_node: 0\n        scratch_gb: 10"}}),
       {{"spec.wrong_type", "spec.framework.runtime_id"},
        {"launch.cpu_only_requires_custom_framework", "spec.framework"},
        {"launch.cpu_only_scratch", pool0 + "scratch_gb"}}},
      {"framework not a map + Playground + volumes",
       replacedAll(g, {{"kind: TrainingJob", "kind: Playground"},
                       {"  framework:\n    name: custom\n    task: custom\n"
                        "    runtime_id: custom-torch\n    command: [python, train.py]\n"
                        "    args: [--epochs, 3]\n    env: {ZED: z, ALPHA: a}\n",
                        "  framework: custom\n"},
                       {"  resources:", "  data: {volumes: [a, b]}\n  resources:"}}),
       {{"spec.wrong_type", "spec.framework"},
        {"launch.kind_not_supported", "kind"},
        {"launch.volumes_not_supported", "spec.data.volumes[0]"},
        {"launch.volumes_not_supported", "spec.data.volumes[1]"}}},
      {"ModelDeployment + pools missing",
       replacedAll(
           g, {{"kind: TrainingJob", "kind: ModelDeployment"}, {"    pools:\n", "    other:\n"}}),
       {{"spec.unknown_field", "spec.resources.other"},
        {"spec.missing_field", "spec.resources.pools"},
        {"launch.kind_not_supported", "kind"}}},
      {"unreadable GPU count in one pool + unknown series in another",
       replacedAll(g + "      - {name: b, gpu_series: v100, gpus_per_node: 2, cpus: 1, "
                       "memory_gb: 1}\n",
                   {{"gpus_per_node: 8", "gpus_per_node: eight"}}),
       {{"spec.wrong_type", pool0 + "gpus_per_node"},
        {"launch.unknown_gpu_series", "spec.resources.pools[1].gpu_series"}}},
      {"GPU and CPU pools mixed + a third pool unreadable",
       g + "      - {name: b, cpus: 1, memory_gb: 1}\n"
           "      - {name: c, gpus_per_node: -1, cpus: 1, memory_gb: 1}\n",
       {{"spec.negative", "spec.resources.pools[2].gpus_per_node"},
        {"launch.mixed_gpu_and_cpu_pools", "spec.resources.pools"}}},
      {"bad time limit + missing runtime id + too many GPUs",
       replacedAll(g, {{"time_limit: 2h", "time_limit: 2 hours"},
                       {"    runtime_id: custom-torch\n", ""},
                       {"gpus_per_node: 8", "gpus_per_node: 9"}}),
       {{"spec.invalid_duration", "spec.resources.time_limit"},
        {"launch.runtime_id_required", "spec.framework.runtime_id"},
        {"launch.too_many_gpus_per_node", pool0 + "gpus_per_node"}}},
  };
}

TEST(OnePass, ProblemsFromEveryLayerAreAllReportedOnceInOrder) {
  for (const PassRow& row : multiLayerRows()) {
    SCOPED_TRACE(row.name);
    const auto partial = spec::parsePartialJobSpec(row.spec);
    const Errors errors = judgeSpec(partial, testSite(), testRegistry());
    EXPECT_EQ(codesAndFields(errors), row.expected) << describe(errors);
    for (const Error& e : errors) EXPECT_FALSE(e.message.empty()) << e.code;
  }
}

TEST(OnePass, TheOrderIsStable) {
  for (const PassRow& row : multiLayerRows()) {
    SCOPED_TRACE(row.name);
    const auto partial = spec::parsePartialJobSpec(row.spec);
    EXPECT_EQ(judgeSpec(partial, testSite(), testRegistry()),
              judgeSpec(partial, testSite(), testRegistry()));
  }
}

// Each row breaks one input of a backend rule structurally: the structural error is the only
// one. (Judging the default that stands in for the unread value would add a second.)
std::vector<std::pair<const char*, std::string>> structuralOnlyRows() {
  const std::string g = kGpuSpec;
  const std::string c = kCpuSpec;
  return {
      {"not YAML", "kind: [Playground"},
      {"root a list", "- kind: Playground\n"},
      {"no spec section", "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata: {name: a}\n"},
      {"spec not a map", replaced(g, "spec:\n", "spec: x\nother:\n")},
      {"framework not a map", replaced(g, "  framework:\n", "  framework: x\n  frameworkx:\n")},
      {"kind unknown", replaced(g, "kind: TrainingJob", "kind: Notebook")},
      {"kind missing", replaced(g, "kind: TrainingJob\n", "")},
      {"runtime id empty", replaced(g, "runtime_id: custom-torch", "runtime_id: ''")},
      {"runtime id a list", replaced(g, "runtime_id: custom-torch", "runtime_id: [a]")},
      {"image empty", replaced(g, "runtime_id: custom-torch",
                               "runtime_id: custom-torch\n"
                               "    image: ''")},
      {"framework name missing", replaced(c, "    name: custom\n", "")},
      {"task not a label", replaced(c, "task: custom", "task: Custom")},
      {"time limit bad", replaced(g, "time_limit: 2h", "time_limit: 30s")},
      {"resources not a map", replaced(g, "  resources:\n", "  resources: x\n  res:\n")},
      {"pools not a list", replaced(c, "    pools:\n", "    pools: x\n    poolz:\n")},
      {"pools empty", replaced(c, "    pools:\n      - name: main\n",
                               "    pools: []\n    p:\n"
                               "      - name: main\n")},
      {"pool not a map", replaced(c, "      - name: main\n", "      - main\n      - name: x\n")},
      {"GPU count negative", replaced(c, "gpus_per_node: 0", "gpus_per_node: -1")},
      {"GPU count a string", replaced(g, "gpus_per_node: 8", "gpus_per_node: \"8\"")},
      {"GPU series empty", replaced(g, "gpu_series: h100", "gpu_series: ''")},
      {"GPU series a number", replaced(g, "gpu_series: h100", "gpu_series: 100")},
      {"CPU pool series a number", replaced(c, "gpus_per_node: 0",
                                            "gpus_per_node: 0\n"
                                            "        gpu_series: 100")},
      {"nodes zero", replaced(c, "gpus_per_node: 0", "gpus_per_node: 0\n        nodes: 0")},
      {"nodes duplicated", replaced(c, "gpus_per_node: 0",
                                    "gpus_per_node: 0\n        nodes: 3\n"
                                    "        nodes: 1")},
      {"cpus missing", replaced(c, "        cpus: 4\n", "")},
      {"memory zero", replaced(g, "memory_gb: 64", "memory_gb: 0")},
      {"memory huge", replaced(g, "memory_gb: 64", "memory_gb: 99999999999")},
      {"scratch negative", replaced(c, "gpus_per_node: 0",
                                    "gpus_per_node: 0\n"
                                    "        scratch_gb: -1")},
      {"volumes not a list", replaced(g, "  resources:", "  data: {volumes: x}\n  resources:")},
      {"data not a map", replaced(g, "  resources:", "  data: x\n  resources:")},
  };
}

TEST(OnePass, AStructuralErrorIsNotJudgedAgain) {
  for (const auto& [name, text] : structuralOnlyRows()) {
    SCOPED_TRACE(name);
    const auto partial = spec::parsePartialJobSpec(text);
    ASSERT_FALSE(partial.complete());
    const Errors errors = judgeSpec(partial, testSite(), testRegistry());
    EXPECT_EQ(errors, partial.errors) << describe(errors);
    for (const Error& e : errors) EXPECT_TRUE(e.code.starts_with("spec.")) << e.describe();
  }
}

TEST(OnePass, ACompleteValidSpecHasNoProblems) {
  for (const char* text : {kGpuSpec, kCpuSpec}) {
    const auto partial = spec::parsePartialJobSpec(text);
    ASSERT_TRUE(partial.complete());
    EXPECT_TRUE(judgeSpec(partial, testSite(), testRegistry()).empty());
  }
}

}  // namespace
}  // namespace tuneplane::launch
