// Golden files for the batch script and the submit body of seven representative requests,
// and shell checks (bash -n, shellcheck) of every rendered script.
// Regenerate the golden files with TUNEPLANE_UPDATE_GOLDEN=1 and review the diff.
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slurm/script_renderer.h"
#include "slurm/submit_body.h"
#include "stubs/test_shell.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/test_paths.h"

namespace tuneplane::slurm {
namespace {

using launch::Component;
using launch::LaunchRequest;
namespace fs = std::filesystem;

const fs::path kGoldenDir = test::sourceDir() / "tests/slurm/golden";
constexpr const char* kSha =
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";  // sha256("test")

LaunchRequest baseRequest(const std::string& job_id) {
  LaunchRequest r;
  r.identity = {job_id, 1, "tp-" + job_id + "-a1-7f3c9e"};
  r.attempt_dir = "/shared/tuneplane/jobs/" + job_id + "/attempts/1";
  r.logs_dir = r.attempt_dir + "/logs";
  r.output_dir = "/shared/tuneplane/jobs/" + job_id + "/output";
  r.fence_dir = "/shared/tuneplane/jobs/" + job_id + "/fence";
  r.container_attempt_dir = "/tuneplane/attempt";
  r.container_output_dir = "/tuneplane/output";
  r.mounts = {{"/datasets", "/datasets", true},
              {r.attempt_dir, r.container_attempt_dir, true},
              {r.output_dir, r.container_output_dir, false}};
  r.environment = {{"TUNEPLANE_JOB_ID", job_id},
                   {"TUNEPLANE_ATTEMPT", "1"},
                   {"TUNEPLANE_OUTPUT_DIR", r.container_output_dir},
                   {"TUNEPLANE_PREEMPT_SIGNAL", "USR2"}};
  r.scheduler_environment = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  r.preemption_warning = catalog::PreemptionWarning{};  // a site that turned it on: USR2, 120 s
  return r;
}

LaunchRequest cpuRequest(catalog::ContainerRuntime runtime, std::string job_id = "") {
  const bool pyxis = runtime == catalog::ContainerRuntime::kPyxis;
  if (job_id.empty()) job_id = pyxis ? "job-cpu-pyxis" : "job-cpu-apptainer";
  LaunchRequest r = baseRequest(job_id);
  r.job_name = "tabular-baseline";
  r.framework = "custom/custom";
  r.container_runtime = runtime;
  r.artifact = {pyxis ? "/shared/runtimes/custom-sklearn-1.4.sqsh"
                      : "/shared/runtimes/custom-sklearn-1.4.sif",
                pyxis ? catalog::ArtifactFormat::kSqsh : catalog::ArtifactFormat::kSif, kSha};
  Component c;
  c.pool_name = "cpu";
  c.partition = "cpu";
  c.nodes = 1;
  c.cpus_per_node = 8;
  c.memory_mb = 16384;
  c.time_limit = std::chrono::minutes(90);
  r.components = {c};
  r.uses_gpus = false;
  r.command = {"python3", "/tuneplane/attempt/train.py", "--folds", "5"};
  r.environment.insert(r.environment.begin(), {"SEED", "42"});
  r.account = "ml-research";
  return r;
}

// The backend's documented CPU-only job without a time limit (none in the spec or the
// site): no time_limit in the body, no --time in the mirror; the partition's default applies.
LaunchRequest cpuRequestWithoutTimeLimit() {
  LaunchRequest r = cpuRequest(catalog::ContainerRuntime::kPyxis, "job-cpu-no-limit");
  r.components[0].time_limit = std::chrono::minutes(0);
  r.time_limit_source = launch::TimeLimitSource::kPartitionDefault;
  return r;
}

LaunchRequest gpuSinglePoolRequest() {
  LaunchRequest r = baseRequest("job-llm-2node");
  r.job_name = "llama-sft";
  r.framework = "llm/finetune";
  r.container_runtime = catalog::ContainerRuntime::kPyxis;
  r.artifact = {"/shared/runtimes/llm-finetune-2.3.sqsh", catalog::ArtifactFormat::kSqsh, kSha};
  Component c;
  c.pool_name = "trainers";
  c.partition = "gpu";
  c.constraint = "h100";
  c.nodes = 2;
  c.gpus_per_node = 8;
  c.gres_type = "h100";
  c.cpus_per_node = 96;
  c.memory_mb = 1024000;
  c.time_limit = std::chrono::minutes(720);
  r.components = {c};
  r.uses_gpus = true;
  r.command = {"python3", "-m", "tuneplane_llm.finetune", "--config",
               "/tuneplane/attempt/job.json"};
  r.environment.insert(r.environment.begin(), {"HF_HOME", "/datasets/hf"});
  return r;
}

LaunchRequest gpuHetRequest() {
  LaunchRequest r = baseRequest("job-het");
  r.job_name = "mixed-series-sft";
  r.framework = "llm/finetune";
  r.container_runtime = catalog::ContainerRuntime::kApptainer;
  r.artifact = {"/shared/runtimes/llm-finetune-2.3.sif", catalog::ArtifactFormat::kSif, kSha};
  Component h100;
  h100.pool_name = "h100-pool";
  h100.partition = "gpu";
  h100.constraint = "h100";
  h100.nodes = 2;
  h100.gpus_per_node = 8;
  h100.gres_type = "h100";
  h100.cpus_per_node = 96;
  h100.memory_mb = 1024000;
  h100.time_limit = std::chrono::minutes(600);
  Component a100 = h100;
  a100.pool_name = "a100-pool";
  a100.partition = "gpu-a100";
  a100.constraint = "a100";
  a100.nodes = 3;
  a100.gpus_per_node = 4;
  a100.gres_type = "";
  a100.cpus_per_node = 64;
  a100.memory_mb = 512000;
  r.components = {h100, a100};
  r.uses_gpus = true;
  r.command = {"python3", "-m", "tuneplane_llm.finetune"};
  r.qos = "high";
  r.ray.join_timeout_seconds = 600;
  return r;
}

// A site that pins every Ray port (for its firewall) and turns the dashboard on: the jobs ask
// for whole nodes, and no port is picked at run time.
LaunchRequest gpuPinnedPortsRequest() {
  LaunchRequest r = gpuSinglePoolRequest();
  r.identity = {"job-pinned", 1, "tp-job-pinned-a1-7f3c9e"};
  r.container_runtime = catalog::ContainerRuntime::kApptainer;
  r.artifact = {"/shared/runtimes/llm-finetune-2.3.sif", catalog::ArtifactFormat::kSif, kSha};
  r.ray.port = 6379;
  r.ray.node_manager_port = 6800;
  r.ray.object_manager_port = 6801;
  r.ray.min_worker_port = 10002;
  r.ray.max_worker_port = 10999;
  r.ray.ray_client_server_port = 10001;
  r.ray.dashboard_agent_listen_port = 52365;
  r.ray.dashboard = true;
  r.ray.dashboard_port = 8265;
  return r;
}

// A llamafactory/sft job on the test cluster's shape (an H100 node and an A100 node, 2 GPUs
// and 4 CPUs each), as launch/ assembles it: llamafactory-cli train with the staged config,
// USE_RAY=1, 10 logical CPUs per GPU advertised to Ray, the job's checkpoint directory mounted,
// and the resume record written before the driver.
LaunchRequest gpuLlamaFactoryRequest() {
  LaunchRequest r = baseRequest("job-lf-het");
  r.job_name = "lora-sft";
  r.framework = "llamafactory/sft";
  r.container_runtime = catalog::ContainerRuntime::kPyxis;
  r.artifact = {"/shared/runtimes/llamafactory-0.9.5.sqsh", catalog::ArtifactFormat::kSqsh, kSha};
  Component h100;
  h100.pool_name = "h100s";
  h100.partition = "gpu";
  h100.constraint = "h100";
  h100.nodes = 1;
  h100.gpus_per_node = 2;
  h100.gres_type = "h100";
  h100.cpus_per_node = 4;
  h100.memory_mb = 4096;
  h100.time_limit = std::chrono::minutes(60);
  Component a100 = h100;
  a100.pool_name = "a100s";
  a100.constraint = "a100";
  a100.gres_type = "a100";
  r.components = {h100, a100};
  r.uses_gpus = true;
  r.checkpoint_dir = "/shared/tuneplane/jobs/job-lf-het/checkpoints";
  r.container_checkpoint_dir = r.checkpoint_dir;
  r.mounts.push_back({r.checkpoint_dir, r.container_checkpoint_dir, false});
  r.environment.emplace_back("TUNEPLANE_CHECKPOINT_DIR", r.container_checkpoint_dir);
  r.environment.emplace_back("TUNEPLANE_RESUME", "1");
  r.environment.emplace_back("USE_RAY", "1");
  r.inputs = {{"llamafactory.yaml", "stage: sft\n"}};
  r.command = {"llamafactory-cli", "train", r.container_attempt_dir + "/llamafactory.yaml"};
  r.resume_record = launch::ResumeRecord::kLastCheckpoint;
  r.ray_min_cpus_per_gpu = 10;
  return r;
}

struct GoldenCase {
  std::string name;
  LaunchRequest request;
};

void PrintTo(const GoldenCase& golden, std::ostream* os) {
  *os << golden.name;
}

std::vector<GoldenCase> goldenCases() {
  return {{"cpu_apptainer", cpuRequest(catalog::ContainerRuntime::kApptainer)},
          {"cpu_pyxis", cpuRequest(catalog::ContainerRuntime::kPyxis)},
          {"cpu_pyxis_no_time_limit", cpuRequestWithoutTimeLimit()},
          {"gpu_single_pool_2node", gpuSinglePoolRequest()},
          {"gpu_het_h100_a100", gpuHetRequest()},
          {"gpu_pinned_ports_apptainer", gpuPinnedPortsRequest()},
          {"gpu_llamafactory_het_pyxis", gpuLlamaFactoryRequest()}};
}

void expectGolden(const fs::path& file, const std::string& actual) {
  test::expectGolden(file, actual, "rendered output");
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, ScriptMatchesGoldenFile) {
  expectGolden(kGoldenDir / (GetParam().name + ".sh"), renderBatchScript(GetParam().request));
}

TEST_P(GoldenTest, SubmitBodyMatchesGoldenFile) {
  const std::string script = renderBatchScript(GetParam().request);
  expectGolden(kGoldenDir / (GetParam().name + ".json"),
               buildSubmitBody(GetParam().request, script).dump(2) + "\n");
}

TEST_P(GoldenTest, RenderingIsDeterministic) {
  EXPECT_EQ(renderBatchScript(GetParam().request), renderBatchScript(GetParam().request));
}

TEST_P(GoldenTest, ScriptPassesBashSyntaxCheckAndShellcheck) {
  shell_test::TempDir dir;
  const fs::path script = dir.path() / "job.sh";
  shell_test::writeFile(script, renderBatchScript(GetParam().request));
  const auto syntax = shell_test::runShell("bash -n " + shellQuote(script.string()), dir.path());
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  // Not skipped when shellcheck is missing: CI installs it, and a skip would hide a gap.
  const auto which = shell_test::runShell("command -v shellcheck", dir.path());
  ASSERT_EQ(which.exit_code, 0) << "shellcheck is not installed (apt-get install shellcheck)";
  const auto lint =
      shell_test::runShell("shellcheck -s bash " + shellQuote(script.string()), dir.path());
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

// The preemption warning reaches the steps' tasks from Slurm itself (kill_warning_flags [],
// docs/decisions.md): the batch shell ignores no signal (`trap ''`, inherited through exec by
// srun and the helpers), every step's command starts with the warning ignored, inside the
// container (tp_step_start; the only ignoring `trap`), and the job's steps are told its name.
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_P(GoldenTest, EveryStepStartsWithTheWarningIgnoredAndTheBatchShellIgnoresNothing) {
  const std::string script = renderBatchScript(GetParam().request);
  const std::string start = "tp_step_start=(sh -c 'trap \"\" USR2; exec \"$@\"' tuneplane-step)\n";
  EXPECT_EQ(count(script, start), 1u);
  EXPECT_EQ(count(script, "trap ''"), 0u);
  EXPECT_EQ(count(script, "trap \"\""), 1u);  // tp_step_start's, run by each step's sh
  EXPECT_EQ(count(script, "trap -"), 0u);
  const std::size_t steps = count(script, "exec \"$tp_srun\"");
  EXPECT_GE(steps, 1u);
  EXPECT_EQ(count(script, " \"${tp_step_start[@]}\" "), steps);
  const bool pyxis = GetParam().request.container_runtime == catalog::ContainerRuntime::kPyxis;
  EXPECT_NE(script.find(pyxis ? "  export TUNEPLANE_PREEMPT_SIGNAL='USR2'\n"
                              : "  export APPTAINERENV_TUNEPLANE_PREEMPT_SIGNAL='USR2'\n"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenTest, ::testing::ValuesIn(goldenCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tuneplane::slurm
