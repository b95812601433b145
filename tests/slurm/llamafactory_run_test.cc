// A llamafactory job as TunePlane launches it, run for real: the spec assembled
// (launch/assembler.h), the script rendered, and every step run as a local process through the
// stub srun and apptainer in their executing mode, with the stand-in Ray
// (tests/slurm/stubs/python/ray) and the stand-in LlamaFactory
// (tests/slurm/stubs/python/llamafactory) on PATH. The job has the test cluster's shape: an
// H100 node and an A100 node (one het job), 2 GPUs and 4 CPUs each. What LlamaFactory needs
// of TunePlane is checked from what the stand-in saw: it attached to the job's Ray cluster,
// its placement group of 10 CPUs per GPU fit, and a retried attempt resumed from the
// checkpoint the failed one left in the job's checkpoint directory, which the script recorded
// in logs/resume.json. Without the CPUs TunePlane advertises, the same job never trains.
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launch/assembler.h"
#include "slurm/resume_record.h"
#include "slurm/script_checks.h"
#include "slurm/script_renderer.h"
#include "spec/spec_parser.h"
#include "stubs/runtimes.h"
#include "stubs/test_shell.h"
#include "support/serve_harness.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::slurm::llamafactory_run_test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;
namespace sh = shell_test;

const fs::path kStubs = test::sourceDir() / "tests/slurm/stubs";
constexpr const char* kJobId = "lora-sft-0a1b2c3d";

std::string spec(const std::string& retry = "") {
  return R"(apiVersion: tuneplane.io/v1
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
      do_train: true
      max_steps: 5
      save_steps: 1
  resources:
    pools:
      - {name: h100s, gpu_series: h100, gpus_per_node: 2, cpus: 4, memory_gb: 1}
      - {name: a100s, gpu_series: a100, gpus_per_node: 2, cpus: 4, memory_gb: 1}
)" + retry;
}

// One job's staging root on this "cluster" of two nodes (n0: the H100 node, n1: the A100).
class LlamaFactoryRun {
 public:
  LlamaFactoryRun(catalog::ContainerRuntime runtime, int net) : runtime_(runtime), net_(net) {
    fs::create_directories(bin());
    for (const char* stub :
         {"srun", "apptainer", "scontrol", "getent", "ray", "llamafactory-cli"}) {
      fs::copy_file(kStubs / stub, bin() / stub);
      fs::permissions(bin() / stub, fs::perms::owner_all);
    }
    sh::writeFile(root() / "image", sh::kImageContent);
  }

  fs::path root() const { return dir_.path(); }
  fs::path bin() const { return root() / "bin"; }
  fs::path jobDir() const { return root() / "staging/jobs" / kJobId; }
  fs::path checkpoints() const { return jobDir() / "checkpoints"; }
  fs::path attemptDir(int n) const { return jobDir() / "attempts" / std::to_string(n); }

  // The request of attempt `n`, as the pipeline would assemble it.
  launch::LaunchRequest request(int n, const std::string& spec_text) const {
    catalog::SiteConfig site;
    site.container_runtime = runtime_;
    site.staging_root = (root() / "staging").string();
    site.gpu_series = {{"h100", "h100", 2, "h100"}, {"a100", "a100", 2, "a100"}};
    site.ray.join_timeout_seconds = 60;
    const bool pyxis = runtime_ == catalog::ContainerRuntime::kPyxis;
    const catalog::RuntimeRegistry registry{
        {{"lf",
          pyxis ? catalog::ArtifactFormat::kSqsh : catalog::ArtifactFormat::kSif,
          (root() / "image").string(),
          sh::kImageSha256,
          {"llamafactory"}}}};
    const auto parsed = spec::parseJobSpec(spec_text);
    EXPECT_TRUE(parsed.has_value()) << (parsed ? "" : parsed.error().front().describe());
    if (!parsed) return {};
    auto assembled =
        launch::assembleLaunch(*parsed, site, registry, {kJobId, n, "tp-" + std::to_string(n)},
                               attemptDir(n).string(), checkpoints().string());
    EXPECT_TRUE(assembled.has_value()) << (assembled ? "" : assembled.error().front().describe());
    return assembled ? *assembled : launch::LaunchRequest{};
  }

  // Stages attempt `n` as the stager does (the job fence's mark, the files, logs/, output/, the
  // checkpoint directory when it is missing) and runs its script to the end; its exit code.
  std::optional<int> run(const launch::LaunchRequest& request,
                         const std::vector<std::string>& extra_env = {}) {
    auto process = start(request, extra_env);
    if (!process) return std::nullopt;
    return process->waitExit();
  }

  // Stages attempt `n` as run() does and starts its script beside the test.
  std::unique_ptr<test::ChildProcess> start(const launch::LaunchRequest& request,
                                            const std::vector<std::string>& extra_env = {}) {
    const int n = request.identity.attempt;
    if (!checkRenderable(request)) {
      ADD_FAILURE() << "not renderable";
      return nullptr;
    }
    fs::create_directories(request.fence_dir);
    sh::writeFile(fs::path(request.fence_dir) / std::to_string(n), "");
    fs::create_directories(attemptDir(n) / "logs");
    fs::create_directories(attemptDir(n) / "output");
    fs::create_directories(checkpoints());
    for (const auto& input : request.inputs)
      sh::writeFile(attemptDir(n) / input.name, input.content);
    sh::writeFile(attemptDir(n) / "job.sh", renderBatchScript(request));
    fs::create_directories(records(n));
    fs::create_directories(root() / "tmp");
    const std::string ips =
        "n0=10." + std::to_string(net_) + ".0.1,n1=10." + std::to_string(net_) + ".0.2";
    std::vector<std::string> env = {"PATH=" + bin().string() + ":/usr/bin:/bin",
                                    "HOME=" + root().string(),
                                    "TMPDIR=" + (root() / "tmp").string(),
                                    "PYTHONPATH=" + (kStubs / "python").string(),
                                    "TP_STUB_DIR=" + records(n).string(),
                                    "TP_STUB_EXEC=1",
                                    "TP_STUB_HOST_IPS=" + ips,
                                    "SLURM_JOB_ID=" + std::to_string(4000 + n),
                                    "SLURM_JOB_NODELIST=n0,n1",
                                    "SLURM_JOB_NODELIST_HET_GROUP_0=n0",
                                    "SLURM_JOB_NODELIST_HET_GROUP_1=n1",
                                    "LLAMAFACTORY_STANDIN_STEP_SECONDS=0.05",
                                    "LLAMAFACTORY_STANDIN_PG_WAIT=0.5"};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    return test::ChildProcess::start({"bash", "job.sh"},
                                     {.scratch = attemptDir(n), .env = env, .cwd = attemptDir(n)},
                                     "job", test::ChildProcess::Output::kTruncate);
  }

  std::string out(int n) const { return sh::readFile(attemptDir(n) / "job.out"); }
  std::string err(int n) const { return sh::readFile(attemptDir(n) / "job.err"); }

  // What the stand-in saw in attempt `n`: its "run {JSON}" line.
  nlohmann::json seen(int n) const {
    const std::string text = out(n);
    const std::string marker = "llamafactory stand-in: run ";
    const auto at = text.find(marker);
    if (at == std::string::npos) return nullptr;
    const auto end = text.find('\n', at);
    return nlohmann::json::parse(text.substr(at + marker.size(), end - at - marker.size()), nullptr,
                                 false);
  }

  // logs/resume.json's step, or nullopt when the script wrote none.
  std::optional<int64_t> resumeStep(int n) const {
    const fs::path file = attemptDir(n) / "logs" / std::string(kResumeRecordFile);
    if (!fs::exists(file)) return std::nullopt;
    const auto j = nlohmann::json::parse(sh::readFile(file), nullptr, false);
    EXPECT_EQ(j.value("version", 0), 1);
    return j.value("step", int64_t{-1});
  }

 private:
  fs::path records(int n) const { return attemptDir(n) / "records"; }

  sh::TempDir dir_;
  catalog::ContainerRuntime runtime_;
  int net_;
};

class LlamaFactoryRunTest : public ::testing::TestWithParam<catalog::ContainerRuntime> {
 protected:
  int net() const { return GetParam() == catalog::ContainerRuntime::kPyxis ? 75 : 76; }
};

TEST_P(LlamaFactoryRunTest, AFailedAttemptsRetryResumesFromItsCheckpointAndFinishes) {
  LlamaFactoryRun job(GetParam(), net());
  const std::vector<std::string> fail_at_3 = {"LLAMAFACTORY_STANDIN_FAIL_AT_STEP=3"};

  // Attempt 1: trains on both nodes' GPUs through Ray, saves checkpoints 1 and 2, crashes.
  const launch::LaunchRequest first = job.request(1, spec());
  EXPECT_EQ(job.run(first, fail_at_3), 1) << job.out(1) << job.err(1);
  const nlohmann::json seen1 = job.seen(1);
  ASSERT_TRUE(seen1.is_object()) << job.out(1) << job.err(1);
  EXPECT_EQ(seen1["workers"], 4);  // ray_num_workers: 2 + 2 GPUs
  EXPECT_EQ(seen1["cluster"]["GPU"], 4.0);
  EXPECT_EQ(seen1["cluster"]["CPU"], 40.0);  // 10 per GPU advertised; Slurm gave 4 per node
  EXPECT_THAT(seen1["ray_address"].get<std::string>(),
              ::testing::StartsWith("10." + std::to_string(net()) + ".0.1:"));
  EXPECT_EQ(seen1["config"]["output_dir"], job.checkpoints().string());
  EXPECT_EQ(seen1["config"]["stage"], "sft");
  EXPECT_EQ(seen1["config"]["overwrite_output_dir"], false);
  EXPECT_EQ(seen1["config"]["learning_rate"], 1.0e-4);  // a float to PyYAML too
  EXPECT_EQ(seen1["start_step"], 0);
  EXPECT_EQ(job.resumeStep(1), 0);
  EXPECT_THAT(job.out(1), HasSubstr("tuneplane: this attempt starts from step 0"));
  EXPECT_THAT(job.out(1), HasSubstr("crashed at step 3"));
  EXPECT_TRUE(fs::is_directory(job.checkpoints() / "checkpoint-2"));
  EXPECT_FALSE(fs::exists(job.checkpoints() / "checkpoint-3"));

  // Attempt 2: a new attempt directory, the same checkpoint directory: it resumes at step 2.
  const launch::LaunchRequest second = job.request(2, spec());
  EXPECT_EQ(second.checkpoint_dir, first.checkpoint_dir);
  EXPECT_EQ(job.run(second, fail_at_3), 0) << job.out(2) << job.err(2);
  const nlohmann::json seen2 = job.seen(2);
  ASSERT_TRUE(seen2.is_object()) << job.out(2);
  EXPECT_EQ(seen2["start_step"], 2);
  EXPECT_EQ(job.resumeStep(2), 2);  // what describe shows: the step the framework resumed from
  EXPECT_THAT(job.out(2), HasSubstr("resumed from checkpoint-2"));
  EXPECT_THAT(job.out(2), HasSubstr("step 5/5"));
  EXPECT_THAT(job.out(2), ::testing::Not(HasSubstr("step 1/5")));
  EXPECT_EQ(sh::readFile(job.checkpoints() / "adapter_model.safetensors"), "stand-in weights\n");
  // Attempt 1's own files are its own: nothing of attempt 2 landed there.
  EXPECT_EQ(job.resumeStep(1), 0);
}

// With spec.retry.resume off, every attempt starts over, and says so.
TEST_P(LlamaFactoryRunTest, WithResumeOffARetryStartsOver) {
  LlamaFactoryRun job(GetParam(), net());
  const std::string off = "  retry: {resume: false}\n";
  EXPECT_EQ(job.run(job.request(1, spec(off)), {"LLAMAFACTORY_STANDIN_FAIL_AT_STEP=3"}), 1)
      << job.err(1);
  EXPECT_EQ(job.run(job.request(2, spec(off))), 0) << job.out(2) << job.err(2);
  EXPECT_EQ(job.seen(2)["start_step"], 0);
  EXPECT_EQ(job.seen(2)["config"]["overwrite_output_dir"], true);
  EXPECT_EQ(job.resumeStep(2), 0);
  EXPECT_THAT(job.out(2), HasSubstr("step 1/5"));
}

// The bug TunePlane's advertised CPUs fix, seen: Ray told only the CPUs Slurm gave (4 a node,
// 8 in all), LlamaFactory's 4 bundles of 10 CPUs never fit, and the job never trains.
TEST_P(LlamaFactoryRunTest, WithoutTheAdvertisedCpusThePlacementNeverFits) {
  LlamaFactoryRun job(GetParam(), net());
  launch::LaunchRequest request = job.request(1, spec());
  request.ray_min_cpus_per_gpu = 0;
  EXPECT_EQ(job.run(request), 1);
  EXPECT_THAT(job.err(1), HasSubstr("placement group never ready: 4 bundles of {'CPU': 10, "
                                    "'GPU': 1} need 40 CPUs, Ray has 8"));
  EXPECT_FALSE(fs::exists(job.checkpoints() / "checkpoint-1"));
}

// Hostile keys and values in the config reach LlamaFactory exactly as the spec wrote them:
// through the YAML TunePlane stages, read by the stand-in with PyYAML as LlamaFactory reads
// it, while the batch script runs nothing they hold.
TEST_P(LlamaFactoryRunTest, HostileConfigValuesReachLlamaFactoryExactly) {
  LlamaFactoryRun job(GetParam(), net());
  const std::string canary = (job.root() / "pwned").string();
  nlohmann::json config = {
      {"model_name_or_path", "/models/it's \"q\" $(touch " + canary + ")"},
      {"dataset", "a,b # not a comment"},
      {"template", "`touch " + canary + "`"},
      {"default_system", "line\nbreak\ttab \u2028 \xc2\x85 \xef\xbb\xbf ${oc.env:HOME} yes: no"},
      {"quoted_yes", "yes"},
      {"number_text", "1e-5"},
      {"learning_rate", 1e-5},
      {"seed", -9223372036854775807LL},
      {"do_train", true},
      {"max_steps", 2},
      {"ray_init_kwargs", {{"runtime_env", {{"env_vars", {{"K'\"$(x)", "`y`"}, {"", nullptr}}}}}}},
      {"lora_target", {"q_proj", "", "[x]", {{"k", {1, 2.5}}}}},
  };
  nlohmann::json spec_json = nlohmann::json::parse(R"({
    "apiVersion": "tuneplane.io/v1", "kind": "TrainingJob", "metadata": {"name": "lora-sft"},
    "spec": {"framework": {"name": "llamafactory", "task": "sft", "runtime_id": "lf"},
      "resources": {"pools": [
        {"name": "h100s", "gpu_series": "h100", "gpus_per_node": 2, "cpus": 4, "memory_gb": 1},
        {"name": "a100s", "gpu_series": "a100", "gpus_per_node": 2, "cpus": 4, "memory_gb": 1}]}}})");
  spec_json["spec"]["framework"]["config"] = config;
  EXPECT_EQ(job.run(job.request(1, spec_json.dump())), 0) << job.out(1) << job.err(1);
  const nlohmann::json seen = job.seen(1);
  ASSERT_TRUE(seen.is_object()) << job.out(1) << job.err(1);
  nlohmann::json expected = config;
  expected["stage"] = "sft";
  expected["output_dir"] = job.checkpoints().string();
  expected["overwrite_output_dir"] = false;
  expected["ray_num_workers"] = 4;
  EXPECT_EQ(seen["config"], expected) << seen["config"].dump(2);
  EXPECT_FALSE(fs::exists(canary)) << "a config value ran";
}

// Issue 45, item 4, on the Ray path: attempt 1 still trains (its node lost slurmctld, not the
// shared filesystem) when attempt 2 is staged and starts. Attempt 1's script stops its driver
// and its Ray steps on every node and exits 73; attempt 2 waits for that before its command,
// so it resumes from the last checkpoint attempt 1 wrote: no step of attempt 1 comes after the
// step attempt 2 resumed from (the checkpoint directory had one writer at a time).
TEST(LlamaFactorySupersededRun, TheRunningAttemptStopsOnEveryNodeAndTheNextResumesAfterIt) {
  LlamaFactoryRun job(catalog::ContainerRuntime::kPyxis, 77);
  const std::vector<std::string> slow = {"LLAMAFACTORY_STANDIN_STEP_SECONDS=1",
                                         std::string(kFencePollEnv) + "=1",
                                         std::string(kFenceGraceEnv) + "=1"};
  auto first = job.start(job.request(1, spec()), slow);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(test::waitUntil([&] { return fs::exists(job.checkpoints() / "checkpoint-1"); },
                              std::chrono::seconds(60)))
      << "attempt 1 never saved a checkpoint\n"
      << job.out(1) << job.err(1);

  auto second = job.start(job.request(2, spec()), slow);  // its fence mark first, as staged
  ASSERT_NE(second, nullptr);
  const std::optional<int> first_code = first->exitWithin(std::chrono::seconds(60));
  const std::optional<int> second_code = second->exitWithin(std::chrono::seconds(90));
  ASSERT_TRUE(first_code && second_code) << job.err(1) << job.err(2);
  EXPECT_EQ(*first_code, kExitSuperseded) << job.err(1);
  EXPECT_EQ(*second_code, 0) << job.out(2) << job.err(2);
  EXPECT_THAT(job.err(1), HasSubstr("attempt 2 of this job was staged after this one (1)"));
  EXPECT_THAT(job.out(1), ::testing::Not(HasSubstr("training done")));
  EXPECT_THAT(job.err(2), HasSubstr("attempt 1 of this job started and did not end by itself"));

  // The last step attempt 1 saved, and the step attempt 2 resumed from.
  int last_of_first = 0;
  for (int step = 1; step <= 5; ++step) {
    if (job.out(1).find("step " + std::to_string(step) + "/5") != std::string::npos)
      last_of_first = step;
  }
  const nlohmann::json seen2 = job.seen(2);
  ASSERT_TRUE(seen2.is_object()) << job.out(2);
  EXPECT_GE(last_of_first, 1);
  // At least the last step attempt 1 said it saved (one more if it was stopped between saving
  // and saying so): had it gone on after attempt 2 read the checkpoints, it would say more.
  const int resumed = seen2.value("start_step", -1);
  EXPECT_GE(resumed, last_of_first) << "attempt 1 saved a checkpoint after attempt 2 resumed";
  EXPECT_LE(resumed, last_of_first + 1);
  EXPECT_EQ(job.resumeStep(2), resumed);
  EXPECT_THAT(job.out(2), HasSubstr("training done"));
}

INSTANTIATE_TEST_SUITE_P(Runtimes, LlamaFactoryRunTest, bothRuntimes(), runtimeName);

}  // namespace
}  // namespace tuneplane::slurm::llamafactory_run_test
