// Runs rendered scripts for real, with stub srun/apptainer/scontrol/getent first on PATH
// (tests/slurm/stubs/), a real sha256sum and a real artifact file. Proves that hostile
// strings in every user-controlled field arrive byte-for-byte as one argument each (or in
// the environment), that nothing injected runs, and the script's documented exit codes.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slurm/script_checks.h"
#include "slurm/script_renderer.h"
#include "stubs/runtimes.h"
#include "stubs/test_shell.h"
#include "support/test_paths.h"

namespace tuneplane::slurm {
namespace {

using launch::Component;
using launch::LaunchRequest;
using ::testing::Contains;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;
namespace sh = shell_test;

// One step the stubs recorded.
struct Record {
  std::vector<std::string> srun;       // srun's options
  std::vector<std::string> apptainer;  // apptainer's argv (Apptainer only)
  std::vector<std::string> start;      // what starts the command: sh -c '…' NAME (the warning)
  std::vector<std::string> argv;       // the command inside the container
  std::map<std::string, std::string> env;
};

class ScriptRun {
 public:
  ScriptRun() {
    fs::create_directories(bin());
    fs::create_directories(records());
    const fs::path stubs = test::sourceDir() / "tests/slurm/stubs";
    for (const char* name : {"srun", "apptainer", "tp-stub-in-container", "scontrol", "getent"}) {
      fs::copy_file(stubs / name, bin() / name);
      fs::permissions(bin() / name, fs::perms::owner_all);
    }
  }
  fs::path root() const { return dir_.path(); }
  fs::path bin() const { return root() / "bin"; }
  fs::path records() const { return root() / "records"; }
  // A marker an injected command would create: a relative name (so it survives in path
  // components), and scripts run with the temporary directory as their working directory.
  std::string canary(int i) const { return "pwned" + std::to_string(i); }

  sh::RunResult run(const std::string& script, const std::string& extra_env = "") {
    const fs::path file = root() / "job.sh";
    sh::writeFile(file, script);
    const std::string command = "env -i PATH=" + shellQuote(bin().string() + ":/usr/bin:/bin") +
                                " TP_STUB_DIR=" + shellQuote(records().string()) +
                                " HOME=" + shellQuote(root().string()) +
                                " SLURM_JOB_NODELIST=h0,h1 SLURM_JOB_NODELIST_HET_GROUP_0=h0,h1"
                                " SLURM_JOB_NODELIST_HET_GROUP_1=g0,g1,g2 " +
                                extra_env + " bash " + shellQuote(file.string());
    return sh::runShell("cd " + shellQuote(root().string()) + " && " + command, root());
  }

  std::vector<Record> steps() const {
    std::vector<Record> out;
    std::vector<fs::path> markers;
    for (const auto& entry : fs::directory_iterator(records())) {
      // "step.XXXXXX" (mktemp) is the marker; "step.XXXXXX.srun" etc. are its parts.
      const std::string name = entry.path().filename().string();
      if (name.find('.') == name.rfind('.')) markers.push_back(entry.path());
    }
    std::sort(markers.begin(), markers.end());
    for (const auto& marker : markers) {
      Record r;
      const std::string base = marker.string();
      r.srun = sh::splitNul(sh::readFile(base + ".srun"));
      r.argv = sh::splitNul(sh::readFile(base + ".argv"));
      if (r.argv.size() >= 4 && r.argv[0] == "sh" && r.argv[1] == "-c") {
        r.start.assign(r.argv.begin(), r.argv.begin() + 4);
        r.argv.erase(r.argv.begin(), r.argv.begin() + 4);
      }
      if (fs::exists(base + ".apptainer")) {
        r.apptainer = sh::splitNul(sh::readFile(base + ".apptainer"));
      }
      for (const auto& entry : sh::splitNul(sh::readFile(base + ".env"))) {
        const auto eq = entry.find('=');
        if (eq != std::string::npos) r.env[entry.substr(0, eq)] = entry.substr(eq + 1);
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  void expectNoCanaries() const {
    for (int i = 0; i < 8; ++i) {
      EXPECT_FALSE(fs::exists(root() / canary(i))) << "injected: " << canary(i);
    }
  }

 private:
  sh::TempDir dir_;
};

// Hostile texts; `C` is replaced by a canary path, so an injection leaves a file behind.
std::vector<std::string> hostileValues(const ScriptRun& run) {
  return {"it's \"quoted\" 'twice'",
          "$(touch " + run.canary(0) + ")",
          "`touch " + run.canary(1) + "`",
          "line one\nline two\ntouch " + run.canary(2),
          "x; touch " + run.canary(3) + "; #",
          "*",
          "back\\slash \\n \\",
          "ünïcødé ✓ 日本語",
          "-leading-dash",
          "  spaced   out  ",
          "${HOME} $HOME !! %j %x",
          "tab\there | touch " + run.canary(4) + " && exit 9 &",
          ""};
}

std::string joinAll(const std::vector<std::string>& values) {
  std::string all;
  for (const auto& v : values) all += v + "|";
  return all;
}

std::string without(std::string text, const std::string& drop) {
  text.erase(std::remove_if(text.begin(), text.end(),
                            [&drop](char c) { return drop.find(c) != std::string::npos; }),
             text.end());
  return text;
}

// A request with a hostile value in every user-controlled field that can hold one.
LaunchRequest hostileRequest(const ScriptRun& run, catalog::ContainerRuntime runtime, bool gpu) {
  const auto values = hostileValues(run);
  const std::string all = joinAll(values);
  const std::string path_part = without(all, "/,:");  // one path component, bind-safe
  LaunchRequest r;
  r.job_name = "-" + all;
  r.identity = {"job " + all, 3, "token " + all};
  r.framework = gpu ? "llm/finetune" : "custom/custom";
  r.container_runtime = runtime;
  // A file name holds at most 255 bytes: a shorter mix for the artifact.
  const std::string compact = "-it's \"q\" $(touch " + run.canary(5) + ") `touch " + run.canary(6) +
                              "` ;*\\ ü\n x  ${HOME}";
  const fs::path artifact = run.root() / compact;
  sh::writeFile(artifact, sh::kImageContent);
  r.artifact = {artifact.string(), catalog::ArtifactFormat::kSqsh, sh::kImageSha256};
  r.attempt_dir = "/attempt/" + path_part;
  // Real directories (the claim and the job's fence are made and read there, failing closed
  // when they cannot be), each one hostile path component. Slurm reads '\' in the logs path
  // as an escape, so that one goes without.
  r.logs_dir = (run.root() / ("logs " + without(path_part, "\\"))).string();
  fs::create_directories(r.logs_dir);
  r.fence_dir = (run.root() / ("fence " + path_part)).string();
  fs::create_directories(r.fence_dir);
  sh::writeFile(fs::path(r.fence_dir) / "3", "");
  r.output_dir = "/out/" + path_part;
  r.container_attempt_dir = "/in/attempt " + path_part;
  r.container_output_dir = "/in/output " + path_part;
  r.checkpoint_dir = "/ckpt/" + path_part;
  r.container_checkpoint_dir = "/in/ckpt " + path_part;
  // The job's code (spec.workdir): its copy in the attempt, read-only at its own path.
  r.workdir = launch::Workdir{std::string(64, 'c'), "", r.attempt_dir + "/workdir",
                              "/in/workdir " + path_part};
  r.mounts = {{"/site " + path_part, "/data " + path_part, true},
              {r.attempt_dir, r.container_attempt_dir, true},
              {r.workdir->dir, r.workdir->container_dir, true},
              {r.output_dir, r.container_output_dir, false},
              {r.checkpoint_dir, r.container_checkpoint_dir, false}};
  for (std::size_t i = 0; i < values.size(); ++i) {
    r.environment.emplace_back("TP_HOSTILE_" + std::to_string(i), values[i]);
  }
  r.environment.emplace_back("TP_HOSTILE_ALL", all);
  r.environment.emplace_back("TUNEPLANE_JOB_ID", r.identity.job_id);
  r.environment.emplace_back("TUNEPLANE_CHECKPOINT_DIR", r.container_checkpoint_dir);
  r.environment.emplace_back("TUNEPLANE_WORKDIR", r.workdir->container_dir);
  r.environment.emplace_back("TUNEPLANE_PREEMPT_SIGNAL", "USR2");
  r.preemption_warning = catalog::PreemptionWarning{};
  r.command = {"-cmd " + all};
  for (const auto& v : values) r.command.push_back(v);
  Component c;
  c.pool_name = "-pool " + without(all, "/\\");
  c.partition = "part " + all;
  c.constraint = "feat " + all;
  c.cpus_per_node = 4;
  c.memory_mb = 1024;
  if (gpu) {
    c.nodes = 2;
    c.gpus_per_node = 2;
    c.gres_type = "type " + all;
    Component other = c;
    other.pool_name = "-other " + without(all, "/\\");
    other.nodes = 3;
    other.cpus_per_node = 8;
    r.components = {c, other};
    r.uses_gpus = true;
    r.ray.executable = "-ray " + all;
    // A framework TunePlane launches: its staged config, 10 CPUs a GPU, the resume record
    // (whose write into the unwritable logs_dir must not fail the job).
    r.inputs = {{"llamafactory.yaml", all}};
    r.ray_min_cpus_per_gpu = 10;
    r.resume_record = launch::ResumeRecord::kLastCheckpoint;
  } else {
    r.components = {c};
  }
  r.account = "acct " + all;
  r.qos = "qos " + all;
  return r;
}

std::vector<std::string> expectedBinds(const LaunchRequest& r) {
  std::vector<std::string> binds;
  for (const auto& m : r.mounts)
    binds.push_back(m.source + ":" + m.target + (m.read_only ? ":ro" : ""));
  return binds;
}

void expectJobEnv(const Record& step, const LaunchRequest& r) {
  for (const auto& [name, value] : r.environment) {
    ASSERT_TRUE(step.env.count(name)) << name << " did not reach the container";
    EXPECT_EQ(step.env.at(name), value) << name << " changed on the way";
  }
}

void expectContainer(const Record& step, const LaunchRequest& r) {
  if (r.container_runtime == catalog::ContainerRuntime::kPyxis) {
    std::string mounts;
    for (const auto& b : expectedBinds(r)) mounts += (mounts.empty() ? "" : ",") + b;
    EXPECT_THAT(step.srun, Contains("--container-image=" + r.artifact.path));
    EXPECT_THAT(step.srun, Contains("--container-mounts=" + mounts));
    EXPECT_THAT(step.srun, Contains("--container-workdir=" + r.container_output_dir));
    EXPECT_THAT(step.srun, Contains("--no-container-mount-home"));
  } else {
    std::vector<std::string> expected = {"exec", "--no-home"};
    for (const auto& b : expectedBinds(r)) {
      expected.push_back("--bind");
      expected.push_back(b);
    }
    if (r.uses_gpus) expected.push_back("--nv");
    expected.push_back("--pwd");
    expected.push_back(r.container_output_dir);
    expected.push_back(r.artifact.path);
    ASSERT_GE(step.apptainer.size(), expected.size());
    EXPECT_THAT(
        std::vector<std::string>(step.apptainer.begin(), step.apptainer.begin() + expected.size()),
        ElementsAreArray(expected));
  }
}

// slurm.preemption_warning on (hostileRequest's USR2): the step's command starts inside the
// container with the warning ignored, which its exec passes on.
void expectWarningIgnored(const Record& step) {
  EXPECT_THAT(step.start,
              ElementsAreArray({"sh", "-c", "trap \"\" USR2; exec \"$@\"", "tuneplane-step"}));
}

// bash -n and shellcheck hold for hostile scripts too (shellcheck missing is a failure).
void expectCleanShell(const ScriptRun& run, const std::string& script) {
  const fs::path file = run.root() / "lint.sh";
  sh::writeFile(file, script);
  const auto syntax = sh::runShell("bash -n " + shellQuote(file.string()), run.root());
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  const auto lint = sh::runShell("shellcheck -s bash " + shellQuote(file.string()), run.root());
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

class HostileCpuTest : public ::testing::TestWithParam<catalog::ContainerRuntime> {};

TEST_P(HostileCpuTest, EveryValueArrivesIntactAndNothingInjectedRuns) {
  ScriptRun run;
  const LaunchRequest r = hostileRequest(run, GetParam(), /*gpu=*/false);
  ASSERT_TRUE(checkRenderable(r));
  const std::string script = renderBatchScript(r);
  // The header (everything before strict mode) is comments only, whatever the values held.
  const auto header_end = script.find("\nset -euo pipefail\n");
  ASSERT_NE(header_end, std::string::npos);
  std::size_t line_start = 0;
  while (line_start < header_end) {
    EXPECT_EQ(script[line_start], '#') << script.substr(line_start, 60);
    line_start = script.find('\n', line_start) + 1;
  }
  EXPECT_NE(script.find("#SBATCH --partition=part it's"), std::string::npos);
  expectCleanShell(run, script);
  const auto result = run.run(script);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto steps = run.steps();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_THAT(steps[0].argv, ElementsAreArray(r.command));
  expectWarningIgnored(steps[0]);
  expectJobEnv(steps[0], r);
  expectContainer(steps[0], r);
  EXPECT_THAT(steps[0].srun, Contains("--cpus-per-task=4"));
  EXPECT_THAT(steps[0].srun, Not(Contains(HasSubstr("gpu"))));
  run.expectNoCanaries();
}

INSTANTIATE_TEST_SUITE_P(Runtimes, HostileCpuTest, bothRuntimes(), runtimeName);

class HostileRayTest : public ::testing::TestWithParam<catalog::ContainerRuntime> {};

// The words after the launcher's "--": the `ray start` command of a head or worker step.
std::vector<std::string> rayStart(const Record& step) {
  const auto split = std::find(step.argv.begin(), step.argv.end(), "--");
  return split == step.argv.end() ? std::vector<std::string>{}
                                  : std::vector<std::string>(split + 1, step.argv.end());
}

TEST_P(HostileRayTest, HeadWorkersWaitAndDriverGetExactArguments) {
  ScriptRun run;
  const LaunchRequest r = hostileRequest(run, GetParam(), /*gpu=*/true);
  ASSERT_TRUE(checkRenderable(r));
  const std::string script = renderBatchScript(r);
  expectCleanShell(run, script);
  const auto result = run.run(script);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string ray = r.ray.executable;
  const std::string address = "10.9.8.7:41234";  // what the stub head reports
  const auto resources = [](const Component& c) {
    nlohmann::json j = nlohmann::json::object();
    j[c.pool_name] = c.gpus_per_node;
    return "--resources=" + j.dump();
  };
  const Record* head = nullptr;
  const Record* driver = nullptr;
  std::vector<const Record*> workers;
  std::vector<const Record*> waits;
  const auto steps = run.steps();
  for (const auto& step : steps) {
    ASSERT_FALSE(step.argv.empty());
    expectWarningIgnored(step);
    expectContainer(step, r);
    expectJobEnv(step, r);
    const bool python = step.argv[0] == "python3" && step.argv.size() > 3;
    if (python && step.argv[3] == "head") {
      head = &step;
    } else if (python && step.argv[3] == "worker") {
      workers.push_back(&step);
    } else if (python) {
      waits.push_back(&step);
    } else {
      driver = &step;
    }
  }
  ASSERT_NE(head, nullptr);
  const auto head_start = rayStart(*head);
  ASSERT_GE(head_start.size(), 3u);
  EXPECT_EQ(head_start[0], ray);
  EXPECT_THAT(head_start, Contains("--head"));
  EXPECT_THAT(head_start, Contains("--node-ip-address=10.9.8.7"));
  EXPECT_THAT(head_start, Contains("--port=0"));  // no fixed port: the head picks one
  EXPECT_THAT(head_start, Contains("--include-dashboard=false"));
  EXPECT_THAT(head_start, Contains(resources(r.components[0])));
  EXPECT_THAT(head->argv, Contains("--ray-client-server-port"));  // picked free on the node
  EXPECT_THAT(head->srun, Contains("--nodelist=h0"));
  EXPECT_THAT(head->srun, Contains("--het-group=0"));
  // One token for the whole cluster, made on the node: 32 hex digits, only in environments.
  const std::string token = head->env.count("RAY_AUTH_TOKEN") ? head->env.at("RAY_AUTH_TOKEN") : "";
  EXPECT_THAT(token, ::testing::MatchesRegex("[0-9a-f]{32}"));
  EXPECT_EQ(head->env.at("RAY_AUTH_MODE"), "token");
  EXPECT_EQ(script.find(token), std::string::npos);
  EXPECT_EQ(result.out.find(token), std::string::npos);
  EXPECT_EQ(result.err.find(token), std::string::npos);
  for (const auto& step : steps) {
    EXPECT_THAT(step.argv, Not(Contains(HasSubstr(token))));
    EXPECT_THAT(step.srun, Not(Contains(HasSubstr(token))));
    EXPECT_EQ(step.env.count("RAY_AUTH_TOKEN") ? step.env.at("RAY_AUTH_TOKEN") : "", token);
  }

  ASSERT_EQ(workers.size(), 2u);
  for (const Record* w : workers) {
    const auto start = rayStart(*w);
    EXPECT_THAT(start, Contains("--address=" + address));
    EXPECT_THAT(start, Not(Contains(HasSubstr("--port"))));
    EXPECT_THAT(start, Contains("--min-worker-port=0"));
    const bool first = std::find(w->srun.begin(), w->srun.end(), "--het-group=0") != w->srun.end();
    const Component& c = r.components[first ? 0 : 1];
    EXPECT_THAT(start, Contains(resources(c)));
    EXPECT_THAT(start, Contains("--num-gpus=" + std::to_string(c.gpus_per_node)));
    // Slurm gave 4 and 8 CPUs to nodes of 2 GPUs: each advertises 10 per GPU.
    EXPECT_THAT(start, Contains("--num-cpus=20"));
    const int count = first ? c.nodes - 1 : c.nodes;
    EXPECT_THAT(w->srun, Contains("--nodes=" + std::to_string(count)));
    if (first) {
      EXPECT_THAT(w->srun, Contains("--exclude=h0"));
    }
  }

  ASSERT_EQ(waits.size(), 1u);  // for all nodes; the head's own address says it is up
  ASSERT_EQ(waits[0]->argv.size(), 6u);
  EXPECT_EQ(waits[0]->argv[3], address);
  EXPECT_EQ(waits[0]->argv[4], "5");
  EXPECT_EQ(waits[0]->argv[5], std::to_string(r.ray.join_timeout_seconds));
  EXPECT_THAT(waits[0]->srun, Contains("--overlap"));

  ASSERT_NE(driver, nullptr);
  EXPECT_THAT(driver->argv, ElementsAreArray(r.command));
  EXPECT_EQ(driver->env.at("RAY_ADDRESS"), address);
  EXPECT_THAT(driver->srun, Contains("--overlap"));
  EXPECT_THAT(driver->srun, Contains("--nodelist=h0"));
  EXPECT_THAT(result.out, HasSubstr("the Ray head is up at " + address));
  EXPECT_THAT(result.out, HasSubstr("tuneplane: this attempt starts from step 0"));
  run.expectNoCanaries();
}

// Nodes that join late (the stubbed `ray start` steps sleep before their records are
// whole): the script's waits, not luck, must keep the driver and the script's end (which
// stops the background Ray steps) until every node joined. A stub wait that returned at
// once let the script kill half-recorded steps under load: argv empty, a flaky test.
TEST_P(HostileRayTest, NodesThatJoinLateAreWaitedForBeforeTheDriver) {
  ScriptRun run;
  const LaunchRequest r = hostileRequest(run, GetParam(), /*gpu=*/true);
  const auto result = run.run(renderBatchScript(r), "TP_STUB_SLOW_JOIN=1");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto steps = run.steps();
  EXPECT_EQ(steps.size(), 5u);  // the head, two worker steps, the wait, the driver
  int ray_steps = 0;            // the node launcher in the head or worker role
  for (const auto& step : steps) {
    ASSERT_FALSE(step.argv.empty()) << "a step was stopped before it was recorded";
    if (step.argv.size() > 3 && step.argv[0] == "python3" &&
        (step.argv[3] == "head" || step.argv[3] == "worker")) {
      ++ray_steps;
    }
  }
  EXPECT_EQ(ray_steps, 3);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, HostileRayTest, bothRuntimes(), runtimeName);

// The resume record (slurm/resume_record.h), run: the script reads the job's checkpoint
// directory as transformers' get_last_checkpoint does — the highest N of the directories
// named checkpoint-N, symlinks to directories included — whatever its path holds, and writes
// logs/resume.json whole.
class ResumeRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    request_ = hostileRequest(run_, catalog::ContainerRuntime::kPyxis, /*gpu=*/true);
    const std::string hostile = "ckpt it's \"q\" $(touch " + run_.canary(7) + ") `x` *\n ${HOME}";
    request_.checkpoint_dir = (run_.root() / hostile).string();
    request_.logs_dir = (run_.root() / ("logs " + hostile)).string();
    request_.mounts.back().source = request_.checkpoint_dir;
    fs::create_directories(request_.checkpoint_dir);
    fs::create_directories(request_.logs_dir);
  }

  // The step logs/resume.json holds after a run, or -1 when there is none.
  int64_t recordedStep() {
    // Each run is a new Slurm job of the same attempt: the last one's claim and record go.
    for (const char* name : {"claim", "resume.json"})
      fs::remove(fs::path(request_.logs_dir) / name);
    const auto result = run_.run(renderBatchScript(request_));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const fs::path file = fs::path(request_.logs_dir) / "resume.json";
    if (!fs::exists(file)) return -1;
    const std::string text = sh::readFile(file);
    const auto j = nlohmann::json::parse(text, nullptr, false);
    EXPECT_EQ(j, (nlohmann::json{{"version", 1}, {"step", j.value("step", -1)}})) << text;
    for (const auto& entry : fs::directory_iterator(request_.logs_dir)) {
      EXPECT_FALSE(entry.path().filename().string().starts_with(".resume"))
          << "a temporary file stayed: " << entry.path();
    }
    return j.value("step", int64_t{-1});
  }

  void makeDir(const std::string& name) {
    fs::create_directories(fs::path(request_.checkpoint_dir) / name);
  }

  ScriptRun run_;
  LaunchRequest request_;
};

TEST_F(ResumeRecordTest, TheHighestCheckpointDirectoryIsWhereTheAttemptStarts) {
  for (const char* name : {"checkpoint-2", "checkpoint-10", "checkpoint-9", "checkpoint-007",
                           "checkpoint-abc", "checkpoint-", "checkpoint-12345678901234567890",
                           "checkpoint-70x", "x-checkpoint-80", "deeper"}) {
    makeDir(name);
  }
  makeDir("deeper/checkpoint-90");
  sh::writeFile(fs::path(request_.checkpoint_dir) / "checkpoint-99", "a file, not a checkpoint");
  fs::create_directory_symlink(fs::path(request_.checkpoint_dir) / "checkpoint-2",
                               fs::path(request_.checkpoint_dir) / "checkpoint-50");
  EXPECT_EQ(recordedStep(), 50);
  run_.expectNoCanaries();
}

TEST_F(ResumeRecordTest, NoCheckpointIsStepZero) {
  EXPECT_EQ(recordedStep(), 0);
  fs::remove_all(request_.checkpoint_dir);  // not even the directory: still step 0
  EXPECT_EQ(recordedStep(), 0);
}

TEST_F(ResumeRecordTest, StartingOverIsStepZeroWhateverTheCheckpoints) {
  makeDir("checkpoint-40");
  request_.resume_record = launch::ResumeRecord::kFromScratch;
  EXPECT_EQ(recordedStep(), 0);
}

TEST_F(ResumeRecordTest, AFrameworkThatDoesNotSayGetsNoRecord) {
  makeDir("checkpoint-40");
  request_.resume_record = launch::ResumeRecord::kNone;
  const std::string script = renderBatchScript(request_);
  EXPECT_EQ(script.find("resume.json"), std::string::npos);
  EXPECT_EQ(recordedStep(), -1);
}

TEST(ScriptExitCodes, ArtifactMismatchStopsBeforeAnyContainer) {
  ScriptRun run;
  LaunchRequest r = hostileRequest(run, catalog::ContainerRuntime::kPyxis, false);
  sh::writeFile(r.artifact.path, "tampered");
  const auto result = run.run(renderBatchScript(r));
  EXPECT_EQ(result.exit_code, kExitArtifactMismatch);
  EXPECT_THAT(result.err, HasSubstr("sha256 mismatch"));
  EXPECT_THAT(result.err, HasSubstr(r.artifact.path));
  EXPECT_THAT(result.err, HasSubstr(sh::kImageSha256));
  // sha256("tampered"), computed by sha256sum on the "node".
  EXPECT_THAT(result.err,
              HasSubstr("actual d121be3103007b41edf96f8262925f8c7d61894afe9a041843b631f69445bc57"));
  EXPECT_TRUE(run.steps().empty());
}

TEST(ScriptExitCodes, MissingArtifactStopsBeforeAnyContainer) {
  ScriptRun run;
  LaunchRequest r = hostileRequest(run, catalog::ContainerRuntime::kApptainer, false);
  fs::remove(r.artifact.path);
  const auto result = run.run(renderBatchScript(r));
  EXPECT_EQ(result.exit_code, kExitArtifactMissing);
  EXPECT_THAT(result.err, HasSubstr("missing or unreadable"));
  EXPECT_THAT(result.err, HasSubstr(r.artifact.path));
  EXPECT_TRUE(run.steps().empty());
}

TEST(ScriptExitCodes, CpuJobExitsWithItsCommandsCode) {
  ScriptRun run;
  LaunchRequest r = hostileRequest(run, catalog::ContainerRuntime::kPyxis, false);
  r.command = {"exit-with", "7"};
  EXPECT_EQ(run.run(renderBatchScript(r)).exit_code, 7);
}

TEST(ScriptExitCodes, RayJobExitsWithTheDriversCode) {
  ScriptRun run;
  LaunchRequest r = hostileRequest(run, catalog::ContainerRuntime::kApptainer, true);
  r.command = {"exit-with", "9"};
  EXPECT_EQ(run.run(renderBatchScript(r)).exit_code, 9);
}

TEST(ScriptExitCodes, RayJoinTimeoutHasItsOwnCodeAndNoDriverRuns) {
  ScriptRun run;
  LaunchRequest r = hostileRequest(run, catalog::ContainerRuntime::kPyxis, true);
  const auto result = run.run(renderBatchScript(r), "TP_STUB_WAIT_EXIT=1");
  EXPECT_EQ(result.exit_code, kExitRayJoinTimeout);
  EXPECT_THAT(result.err,
              HasSubstr("the Ray cluster at 10.9.8.7:41234 did not reach 5 nodes within 300 s"));
  for (const auto& step : run.steps()) {
    EXPECT_NE(step.argv, r.command) << "the driver ran although the cluster never formed";
  }
}

TEST(ScriptExitCodes, RayHeadThatStopsWithoutAnAddressHasItsOwnCode) {
  ScriptRun run;
  LaunchRequest r = hostileRequest(run, catalog::ContainerRuntime::kApptainer, true);
  const auto result = run.run(renderBatchScript(r), "TP_STUB_HEAD_EXIT=1");
  EXPECT_EQ(result.exit_code, kExitRayHeadFailed);
  EXPECT_THAT(result.err, HasSubstr("the Ray head stopped before it reported its address"));
  const auto steps = run.steps();
  ASSERT_EQ(steps.size(), 1u) << "no worker, wait or driver may start without the head";
  EXPECT_EQ(steps[0].argv.at(3), "head");
}

TEST(ScriptExitCodes, UnrenderableRequestRunsNothing) {
  ScriptRun run;
  LaunchRequest r = hostileRequest(run, catalog::ContainerRuntime::kPyxis, false);
  r.mounts.push_back({"/a,b", "/c:d", true});
  const auto checked = checkRenderable(r);
  ASSERT_FALSE(checked);
  const auto result = run.run(renderBatchScript(r));
  EXPECT_EQ(result.exit_code, kExitUnrenderable);
  EXPECT_THAT(result.err, HasSubstr("render.bind_separator"));
  EXPECT_TRUE(run.steps().empty());
  run.expectNoCanaries();
}

}  // namespace
}  // namespace tuneplane::slurm
