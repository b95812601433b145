#include "spec/spec_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace tuneplane::spec {
namespace {

using ::testing::Contains;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr const char* kFullYaml = R"(
apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata:
  name: train-1
  labels: {team: nlp, tier: "2"}
spec:
  framework:
    name: custom
    task: custom
    runtime_id: torch-2
    command: [python, train.py]
    args: [cfg.yaml, --lr, 0.001, --epochs, 3]
    env: {HF_HOME: /models/hf, WORKERS: 4}
  resources:
    time_limit: 1h30m
    pools:
      - {name: a, gpu_series: h100, nodes: 2, gpus_per_node: 8, cpus: 96, memory_gb: 1024, scratch_gb: 100, partition: p1}
      - {name: b, gpu_series: a100, gpus_per_node: 4, cpus: 8, memory_gb: 64}
  data:
    volumes: []
  retry: {max_attempts: 3, backoff_seconds: 30, on: any, resume: false, max_preemptions: 4}
)";

constexpr const char* kFullJson = R"({
  "apiVersion": "tuneplane.io/v1", "kind": "TrainingJob",
  "metadata": {"name": "train-1", "labels": {"team": "nlp", "tier": "2"}},
  "spec": {
    "framework": {"name": "custom", "task": "custom", "runtime_id": "torch-2",
      "command": ["python", "train.py"],
      "args": ["cfg.yaml", "--lr", 0.001, "--epochs", 3],
      "env": {"HF_HOME": "/models/hf", "WORKERS": 4}},
    "resources": {"time_limit": "1h30m", "pools": [
      {"name": "a", "gpu_series": "h100", "nodes": 2, "gpus_per_node": 8, "cpus": 96,
       "memory_gb": 1024, "scratch_gb": 100, "partition": "p1"},
      {"name": "b", "gpu_series": "a100", "gpus_per_node": 4, "cpus": 8, "memory_gb": 64}]},
    "data": {"volumes": []},
    "retry": {"max_attempts": 3, "backoff_seconds": 30, "on": "any", "resume": false,
      "max_preemptions": 4}
  }
})";

// The minimal valid spec; rows below change one thing in it.
constexpr const char* kMinimal = R"(apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata:
  name: job
spec:
  framework:
    name: custom
    task: custom
    command: [run]
  resources:
    time_limit: 90m
    pools:
      - name: main
        cpus: 1
        memory_gb: 1
)";

std::set<std::pair<std::string, std::string>> codesAndFields(const Errors& errors) {
  std::set<std::pair<std::string, std::string>> out;
  for (const Error& e : errors) out.emplace(e.code, e.field);
  return out;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "test bug: '" << from << "' not in the base spec";
    return text;
  }
  return text.replace(at, from.size(), to);
}

TEST(SpecParser, ReadsEveryFieldOfAFullSpec) {
  const auto spec = parseJobSpec(kFullYaml);
  ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
  EXPECT_EQ(spec->api_version, "tuneplane.io/v1");
  EXPECT_EQ(spec->kind, JobKind::kTrainingJob);
  EXPECT_EQ(spec->metadata.name, "train-1");
  EXPECT_THAT(spec->metadata.labels, UnorderedElementsAre(Pair("team", "nlp"), Pair("tier", "2")));
  const Framework& f = spec->framework;
  EXPECT_EQ(f.name, "custom");
  EXPECT_EQ(f.task, "custom");
  EXPECT_EQ(f.runtime_id, "torch-2");
  EXPECT_EQ(f.image, std::nullopt);
  EXPECT_EQ(f.command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(f.config, std::nullopt);
  // Scalars in argv are kept exactly as written.
  EXPECT_EQ(f.args, (std::vector<std::string>{"cfg.yaml", "--lr", "0.001", "--epochs", "3"}));
  EXPECT_THAT(f.env, UnorderedElementsAre(Pair("HF_HOME", "/models/hf"), Pair("WORKERS", "4")));
  EXPECT_EQ(spec->resources.time_limit, std::chrono::minutes(90));
  ASSERT_EQ(spec->resources.pools.size(), 2u);
  const Pool& a = spec->resources.pools[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.gpu_series, "h100");
  EXPECT_EQ(a.nodes, 2);
  EXPECT_EQ(a.gpus_per_node, 8);
  EXPECT_EQ(a.cpus, 96);
  EXPECT_EQ(a.memory_gb, 1024);
  EXPECT_EQ(a.scratch_gb, 100);
  EXPECT_EQ(a.partition, "p1");
  const Pool& b = spec->resources.pools[1];
  EXPECT_EQ(b.nodes, 1);  // default
  EXPECT_EQ(b.scratch_gb, std::nullopt);
  EXPECT_EQ(b.partition, std::nullopt);
  EXPECT_TRUE(spec->data.volumes.empty());
  EXPECT_EQ(spec->retry.max_attempts, 3);
  EXPECT_EQ(spec->retry.backoff_seconds, 30);
  EXPECT_EQ(spec->retry.on, RetryOn::kAny);
  EXPECT_FALSE(spec->retry.resume);
  EXPECT_EQ(spec->retry.max_preemptions, 4);
}

TEST(SpecParser, YamlAndJsonFormsGiveTheSameSpec) {
  const auto yaml = parseJobSpec(kFullYaml);
  const auto json = parseJobSpec(kFullJson);
  ASSERT_TRUE(yaml.has_value());
  ASSERT_TRUE(json.has_value()) << json.error().front().describe();
  EXPECT_EQ(*yaml, *json);
}

TEST(SpecParser, MinimalSpecGetsDefaults) {
  const auto spec = parseJobSpec(kMinimal);
  ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
  EXPECT_EQ(spec->resources.pools[0].nodes, 1);
  EXPECT_EQ(spec->resources.pools[0].gpus_per_node, 0);
  EXPECT_EQ(spec->retry.max_attempts, 1);
  EXPECT_EQ(spec->retry.backoff_seconds, 0);
  EXPECT_EQ(spec->retry.on, RetryOn::kInfrastructure);
  EXPECT_TRUE(spec->retry.resume);
  EXPECT_EQ(spec->retry.max_preemptions, 10);  // the documented default
  EXPECT_EQ(spec->framework.runtime_id, std::nullopt);
}

TEST(SpecParser, TimeLimitIsOptional) {
  // The backend's documented CPU-only job has none: the site's or the partition's default
  // applies (launch/ decides which).
  for (const std::string& text : {replaced(kMinimal, "    time_limit: 90m\n", ""),
                                  replaced(kMinimal, "time_limit: 90m", "time_limit: ~")}) {
    const auto spec = parseJobSpec(text);
    ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
    EXPECT_EQ(spec->resources.time_limit, std::nullopt);
  }
}

TEST(SpecParser, SchedulingNamesTheSlurmAccountAndQos) {
  const auto spec = parseJobSpec(std::string(kMinimal) +
                                 "  scheduling:\n    account: team-a\n    qos: high.prio\n");
  ASSERT_TRUE(spec) << spec.error().front().describe();
  EXPECT_EQ(spec->scheduling.account, "team-a");
  EXPECT_EQ(spec->scheduling.qos, "high.prio");
  EXPECT_EQ(parseJobSpec(kMinimal)->scheduling, Scheduling{});
  const auto bad = parsePartialJobSpec(std::string(kMinimal) +
                                       "  scheduling:\n    account: \"team a\"\n    qos: 7\n"
                                       "    partition: x\n");
  std::set<std::string> codes;
  for (const auto& e : bad.errors) codes.insert(e.code + "@" + e.field);
  EXPECT_TRUE(codes.count("spec.invalid_name@spec.scheduling.account"));
  EXPECT_TRUE(codes.count("spec.wrong_type@spec.scheduling.qos"));
  EXPECT_TRUE(codes.count("spec.unknown_field@spec.scheduling.partition"));
}

TEST(SpecParser, PartialSpecKeepsWhatItReadBesideTheErrors) {
  const auto partial =
      parsePartialJobSpec(replaced(replaced(kMinimal, "kind: TrainingJob", "kind: Playground"),
                                   "    command: [run]\n", "    image: nvcr.io/x:1\n"));
  EXPECT_FALSE(partial.complete());
  ASSERT_EQ(partial.errors.size(), 1u);
  EXPECT_EQ(partial.errors[0].code, "spec.missing_field");
  EXPECT_EQ(partial.errors[0].field, "spec.framework.command");
  // What was read is there for launch/'s rules to judge.
  EXPECT_EQ(partial.spec.kind, JobKind::kPlayground);
  EXPECT_TRUE(partial.readable("kind"));
  EXPECT_EQ(partial.spec.framework.image, "nvcr.io/x:1");
  EXPECT_TRUE(partial.readable("spec.framework.image"));
  EXPECT_FALSE(partial.readable("spec.framework.command"));
  EXPECT_EQ(partial.spec.resources.time_limit, std::chrono::minutes(90));
  // The complete form gives the same structural errors and nothing else.
  const auto checked =
      parseJobSpec(replaced(replaced(kMinimal, "kind: TrainingJob", "kind: Playground"),
                            "    command: [run]\n", "    image: nvcr.io/x:1\n"));
  ASSERT_FALSE(checked.has_value());
  EXPECT_EQ(checked.error(), partial.errors);
}

TEST(SpecParser, ValuesWithErrorsAreNotReadable) {
  const auto partial = parsePartialJobSpec(
      replaced(replaced(kMinimal, "cpus: 1", "cpus: 0\n        gpus_per_node: many"),
               "time_limit: 90m", "time_limit: soon"));
  EXPECT_EQ(partial.errors.size(), 3u);
  EXPECT_FALSE(partial.readable("spec.resources.pools[0].cpus"));
  EXPECT_FALSE(partial.readable("spec.resources.pools[0].gpus_per_node"));
  EXPECT_FALSE(partial.readable("spec.resources.time_limit"));
  EXPECT_TRUE(partial.readable("spec.resources.pools[0].memory_gb"));
  EXPECT_TRUE(partial.readable("spec.resources.pools"));
  EXPECT_EQ(partial.spec.resources.pools.at(0).memory_gb, 1);
}

TEST(SpecParser, AnUnreadableFileLeavesNothingReadable) {
  const auto partial = loadPartialJobSpecFile("/nonexistent/dir/spec.yaml");
  ASSERT_EQ(partial.errors.size(), 1u);
  EXPECT_EQ(partial.errors[0].code, "spec.unreadable_file");
  EXPECT_FALSE(partial.readable("kind"));
  EXPECT_FALSE(partial.readable("spec.framework.runtime_id"));
}

TEST(SpecParser, AnErrorMakesItsFieldAndEverythingInsideItUnreadableAndNothingBeside) {
  PartialSpec partial;
  partial.errors = {Error{"spec.invalid_type", "spec.framework.env.A", "not a string"},
                    Error{"spec.missing_field", "spec.resources.pools[1]", "missing"},
                    Error{"spec.unknown_field", "spec.framework", "an unknown key"}};
  const ReadableFields fields(partial);
  for (const char* unreadable :
       {"spec.framework.env.A", "spec.framework.env.A.B", "spec.framework.env.A[0]",
        "spec.resources.pools[1]", "spec.resources.pools[1].nodes"}) {
    EXPECT_FALSE(fields.readable(unreadable)) << unreadable;
    EXPECT_FALSE(partial.readable(unreadable)) << unreadable;
  }
  // A field whose name merely begins like an unreadable one, the fields around it, and what
  // an unknown key sits in stay readable.
  for (const char* readable : {"spec.framework.env.AB", "spec.framework.env", "spec.framework",
                               "spec.resources.pools[10]", "spec.resources.pools", "", "kind"}) {
    EXPECT_TRUE(fields.readable(readable)) << readable;
    EXPECT_TRUE(partial.readable(readable)) << readable;
  }
  partial.errors.push_back(Error{"spec.invalid_type", "", "the document is not a map"});
  EXPECT_FALSE(ReadableFields(partial).readable("kind"));
}

TEST(SpecParser, PlaygroundAndModelDeploymentParse) {
  auto p = parseJobSpec(replaced(kMinimal, "kind: TrainingJob", "kind: Playground"));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->kind, JobKind::kPlayground);
  auto d = parseJobSpec(replaced(kMinimal, "kind: TrainingJob", "kind: ModelDeployment"));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->kind, JobKind::kModelDeployment);
}

TEST(SpecParser, NullMeansUnset) {
  auto spec =
      parseJobSpec(replaced(kMinimal, "    name: custom\n", "    name: custom\n    image: ~\n"));
  ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
  EXPECT_EQ(spec->framework.image, std::nullopt);
}

TEST(SpecParser, VolumesAreKeptToBeRefusedLater) {
  auto spec = parseJobSpec(replaced(kMinimal, "  resources:",
                                    "  data:\n    volumes:\n      - name: ds\n        pvc: x\n"
                                    "      - raw\n  resources:"));
  ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
  ASSERT_EQ(spec->data.volumes.size(), 2u);
  EXPECT_EQ(spec->data.volumes[0].name, "ds");
  EXPECT_EQ(spec->data.volumes[1].name, "raw");
}

struct ParserRow {
  const char* rule;
  std::string text;
  const char* code;
  const char* field;
};

std::string repeated(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

std::string envEntries(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += "V" + std::to_string(i) + ": x, ";
  return out;
}

std::string labelEntries(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += "l" + std::to_string(i) + ": x, ";
  return out;
}

// One row per structural rule: the minimal spec with one thing broken → exactly one error.
std::vector<ParserRow> structuralRows() {
  const std::string m = kMinimal;
  auto r = [&](const std::string& from, const std::string& to) { return replaced(m, from, to); };
  return {
      {"not yaml", "a: [1,", "spec.parse_error", ""},
      {"empty document", "", "spec.parse_error", ""},
      {"root not a map", "- a\n- b\n", "spec.wrong_type", ""},
      {"unknown top-level key", m + "status: {}\n", "spec.unknown_field", "status"},
      {"unknown nested key", r("    cpus: 1", "    cpus: 1\n        gpu: 1"), "spec.unknown_field",
       "spec.resources.pools[0].gpu"},
      {"duplicate key", r("    cpus: 1", "    cpus: 1\n        cpus: 2"), "spec.duplicate_key",
       "spec.resources.pools[0].cpus"},
      {"missing apiVersion", r("apiVersion: tuneplane.io/v1\n", ""), "spec.missing_field",
       "apiVersion"},
      {"other apiVersion", r("tuneplane.io/v1", "tuneplane.io/v2"), "spec.unsupported_api_version",
       "apiVersion"},
      {"unknown kind", r("kind: TrainingJob", "kind: Notebook"), "spec.unknown_kind", "kind"},
      {"missing metadata.name", r("  name: job\n", "  labels: {}\n"), "spec.missing_field",
       "metadata.name"},
      {"name not a DNS label", r("name: job", "name: Job_1"), "spec.invalid_name", "metadata.name"},
      {"name too long", r("name: job", "name: " + std::string(64, 'a')), "spec.invalid_name",
       "metadata.name"},
      {"name not a string", r("name: job", "name: 12"), "spec.wrong_type", "metadata.name"},
      {"bad label key", r("  name: job", "  name: job\n  labels: {'a b': x}"), "spec.invalid_name",
       "metadata.labels.a b"},
      {"labels not a map", r("  name: job", "  name: job\n  labels: [a]"), "spec.wrong_type",
       "metadata.labels"},
      {"missing spec", "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata: {name: a}\n",
       "spec.missing_field", "spec"},
      {"missing framework.task", r("    task: custom\n", ""), "spec.missing_field",
       "spec.framework.task"},
      {"framework name not a label", r("name: custom", "name: My Framework"), "spec.invalid_name",
       "spec.framework.name"},
      {"missing command", r("    command: [run]\n", ""), "spec.missing_field",
       "spec.framework.command"},
      {"empty command", r("command: [run]", "command: []"), "spec.empty_list",
       "spec.framework.command"},
      {"empty program", r("command: [run]", "command: ['']"), "spec.empty_string",
       "spec.framework.command[0]"},
      {"command not a list", r("command: [run]", "command: run"), "spec.wrong_type",
       "spec.framework.command"},
      {"command entry a map", r("command: [run]", "command: [run, {a: b}]"), "spec.wrong_type",
       "spec.framework.command[1]"},
      {"NUL byte in args", r("command: [run]", "command: [run]\n    args: [\"a\\0b\"]"),
       "spec.nul_byte", "spec.framework.args[0]"},
      {"NUL byte in env value", r("command: [run]", "command: [run]\n    env: {A: \"x\\x00\"}"),
       "spec.nul_byte", "spec.framework.env.A"},
      {"invalid UTF-8 in args",
       r("command: [run]",
         "command: [run]\n    args: [\"a\xbc"
         "b\"]"),
       "spec.invalid_utf8", "spec.framework.args[0]"},
      {"invalid UTF-8 in a block scalar",
       r("command: [run]", "command: [run]\n    args:\n      - |\n        out \xbc os\n"),
       "spec.invalid_utf8", "spec.framework.args[0]"},
      {"bad env name", r("command: [run]", "command: [run]\n    env: {1A: x}"), "spec.invalid_name",
       "spec.framework.env.1A"},
      {"TUNEPLANE_ env", r("command: [run]", "command: [run]\n    env: {TUNEPLANE_X: x}"),
       "spec.reserved_env", "spec.framework.env.TUNEPLANE_X"},
      {"SLURM_ env", r("command: [run]", "command: [run]\n    env: {SLURM_JOB_ID: x}"),
       "spec.reserved_env", "spec.framework.env.SLURM_JOB_ID"},
      // Found by fuzz_script_render: the renderer refused it after validation had passed.
      {"tp_ env", r("command: [run]", "command: [run]\n    env: {tp_srun: x}"), "spec.reserved_env",
       "spec.framework.env.tp_srun"},
      {"env value a list", r("command: [run]", "command: [run]\n    env: {A: [x]}"),
       "spec.wrong_type", "spec.framework.env.A"},
      {"empty runtime_id", r("command: [run]", "command: [run]\n    runtime_id: ''"),
       "spec.empty_string", "spec.framework.runtime_id"},
      {"time_limit without unit", r("time_limit: 90m", "time_limit: 90"), "spec.invalid_duration",
       "spec.resources.time_limit"},
      {"time_limit zero", r("time_limit: 90m", "time_limit: 0m"), "spec.invalid_duration",
       "spec.resources.time_limit"},
      {"time_limit in seconds", r("time_limit: 90m", "time_limit: 90s"), "spec.invalid_duration",
       "spec.resources.time_limit"},
      {"missing pools",
       r("    pools:\n      - name: main\n        cpus: 1\n        memory_gb: 1\n", ""),
       "spec.missing_field", "spec.resources.pools"},
      {"empty pools",
       r("    pools:\n      - name: main\n        cpus: 1\n        memory_gb: 1\n",
         "    pools: []\n"),
       "spec.empty_list", "spec.resources.pools"},
      {"pool not a map",
       r("      - name: main\n        cpus: 1\n        memory_gb: 1\n", "      - main\n"),
       "spec.wrong_type", "spec.resources.pools[0]"},
      {"bad pool name", r("- name: main", "- name: Main"), "spec.invalid_name",
       "spec.resources.pools[0].name"},
      {"duplicate pool name", m + "      - {name: main, cpus: 1, memory_gb: 1}\n",
       "spec.duplicate_name", "spec.resources.pools[1].name"},
      {"missing cpus", r("        cpus: 1\n", ""), "spec.missing_field",
       "spec.resources.pools[0].cpus"},
      {"zero nodes", r("    cpus: 1", "    cpus: 1\n        nodes: 0"), "spec.non_positive",
       "spec.resources.pools[0].nodes"},
      {"zero memory", r("memory_gb: 1", "memory_gb: 0"), "spec.non_positive",
       "spec.resources.pools[0].memory_gb"},
      {"negative gpus", r("    cpus: 1", "    cpus: 1\n        gpus_per_node: -1"), "spec.negative",
       "spec.resources.pools[0].gpus_per_node"},
      {"negative scratch", r("    cpus: 1", "    cpus: 1\n        scratch_gb: -5"), "spec.negative",
       "spec.resources.pools[0].scratch_gb"},
      {"cpus as string", r("cpus: 1", "cpus: \"1\""), "spec.wrong_type",
       "spec.resources.pools[0].cpus"},
      {"cpus fractional", r("cpus: 1", "cpus: 1.5"), "spec.wrong_type",
       "spec.resources.pools[0].cpus"},
      {"cpus huge", r("cpus: 1", "cpus: 99999999999"), "spec.out_of_range",
       "spec.resources.pools[0].cpus"},
      {"volumes not a list", r("  resources:", "  data: {volumes: x}\n  resources:"),
       "spec.wrong_type", "spec.data.volumes"},
      {"zero max_attempts", m + "  retry: {max_attempts: 0}\n", "spec.non_positive",
       "spec.retry.max_attempts"},
      {"negative backoff", m + "  retry: {backoff_seconds: -1}\n", "spec.negative",
       "spec.retry.backoff_seconds"},
      {"bad retry.on", m + "  retry: {on: sometimes}\n", "spec.invalid_value", "spec.retry.on"},
      {"negative max_preemptions", m + "  retry: {max_preemptions: -1}\n", "spec.negative",
       "spec.retry.max_preemptions"},
      {"max_preemptions as text", m + "  retry: {max_preemptions: many}\n", "spec.wrong_type",
       "spec.retry.max_preemptions"},
      {"retry.resume not a boolean", m + "  retry: {resume: \"no\"}\n", "spec.wrong_type",
       "spec.retry.resume"},
      // Size limits (spec_limits.h, document_measure.h).
      {"too many command entries",
       r("command: [run]", "command: [run" + repeated(", a", 4096) + "]"), "spec.too_many_entries",
       "spec.framework.command"},
      {"too many args",
       r("command: [run]", "command: [run]\n    args: [" + repeated("a, ", 4097) + "]"),
       "spec.too_many_entries", "spec.framework.args"},
      {"arg too long",
       r("command: [run]", "command: [run]\n    args: [a, " + std::string(131072, 'x') + "]"),
       "spec.too_long", "spec.framework.args[1]"},
      {"too many env entries",
       r("command: [run]", "command: [run]\n    env: {" + envEntries(1025) + "}"),
       "spec.too_many_entries", "spec.framework.env"},
      {"env entry too long",  // A=… is 131,072 bytes: one more than the kernel takes
       r("command: [run]", "command: [run]\n    env: {A: " + std::string(131070, 'x') + "}"),
       "spec.too_long", "spec.framework.env.A"},
      {"too many labels", r("  name: job", "  name: job\n  labels: {" + labelEntries(65) + "}"),
       "spec.too_many_entries", "metadata.labels"},
      {"label value too long",
       r("  name: job", "  name: job\n  labels: {team: " + std::string(257, 'x') + "}"),
       "spec.too_long", "metadata.labels.team"},
      {"text over 1 MiB once an alias is expanded",
       "x: &a " + std::string(600000, 'x') + "\ny: *a\n" + m, "spec.document_too_large", "y"},
      {"more than 16,384 values", "x: [" + repeated("a, ", 16400) + "]\n" + m,
       "spec.too_many_values", "x[16381]"},  // the root, x and the list come first
  };
}

TEST(SpecParser, EachStructuralRuleHasItsCodeAndField) {
  for (const ParserRow& row : structuralRows()) {
    SCOPED_TRACE(row.rule);
    const auto spec = parseJobSpec(row.text);
    ASSERT_FALSE(spec.has_value());
    ASSERT_EQ(spec.error().size(), 1u) << spec.error().front().describe() << " …";
    EXPECT_EQ(spec.error()[0].code, row.code) << spec.error()[0].describe();
    EXPECT_EQ(spec.error()[0].field, row.field) << spec.error()[0].describe();
    EXPECT_FALSE(spec.error()[0].message.empty());
  }
}

TEST(SpecParser, ReportsEveryErrorInOnePass) {
  const auto spec = parseJobSpec(R"(
apiVersion: tuneplane.io/v2
kind: TrainingJob
metadata: {name: Bad_Name}
spec:
  framework: {name: custom, task: custom, command: [], env: {SLURM_X: "1"}, colour: red}
  resources:
    time_limit: soon
    pools:
      - {name: a, nodes: 0, cpus: 1, memory_gb: 1}
      - {name: a, cpus: -2, memory_gb: 1}
  retry: {on: maybe}
)");
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(codesAndFields(spec.error()),
            (std::set<std::pair<std::string, std::string>>{
                {"spec.unsupported_api_version", "apiVersion"},
                {"spec.invalid_name", "metadata.name"},
                {"spec.unknown_field", "spec.framework.colour"},
                {"spec.empty_list", "spec.framework.command"},
                {"spec.reserved_env", "spec.framework.env.SLURM_X"},
                {"spec.invalid_duration", "spec.resources.time_limit"},
                {"spec.non_positive", "spec.resources.pools[0].nodes"},
                {"spec.non_positive", "spec.resources.pools[1].cpus"},
                {"spec.duplicate_name", "spec.resources.pools[1].name"},
                {"spec.invalid_value", "spec.retry.on"},
            }));
}

TEST(SpecParser, UnquotedNumbersAndBooleansAreNotNames) {
  for (const char* bad :
       {"12", "-3", "1.5", ".5", "1e3", "0x1F", "0o17", "true", "No", ".inf", "-.inf", ".nan"}) {
    SCOPED_TRACE(bad);
    const auto spec = parseJobSpec(replaced(kMinimal, "task: custom", std::string("task: ") + bad));
    ASSERT_FALSE(spec.has_value());
    EXPECT_EQ(spec.error()[0].code, "spec.wrong_type");
  }
  // Text that merely contains digits is a string; quoted numbers are strings.
  for (const char* good : {"v1", "1a", "e5", "0x", "sft-2", "\"12\""}) {
    SCOPED_TRACE(good);
    const auto spec =
        parseJobSpec(replaced(kMinimal, "task: custom", std::string("task: ") + good));
    EXPECT_TRUE(spec.has_value()) << spec.error()[0].describe();
  }
}

TEST(SpecParser, DeeplyNestedInputIsAParseErrorNotACrash) {
  const auto spec = parseJobSpec("a: " + std::string(100000, '['));
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error()[0].code, "spec.parse_error");
}

TEST(SpecParser, ParseErrorSaysWhere) {
  const auto spec = parseJobSpec("a: 1\nb: [1,\n");
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error()[0].code, "spec.parse_error");
  EXPECT_THAT(spec.error()[0].message, ::testing::HasSubstr("line"));
}

TEST(SpecParser, MissingFileIsAnError) {
  const auto spec = loadJobSpecFile("/nonexistent/dir/spec.yaml");
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error()[0].code, "spec.unreadable_file");
}

}  // namespace
}  // namespace tuneplane::spec
