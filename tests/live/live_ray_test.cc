// Live, a GPU job's Ray bring-up on real Slurm: `tuneplane serve` with the live site, one
// node of the gpu partition (gres h100:2), and the project's Ray stand-in (Ray is not
// installable here; tests/slurm/stubs/python/ray/_standin.py: it binds the ports a Ray node
// binds and answers `ray.nodes()`). Through real srun steps the batch script starts the head
// via the node launcher, reads the address it reports, waits for the node, and runs the
// driver with RAY_ADDRESS and the cluster's token; the job ends Succeeded with the driver's
// output in its log. Proves the script and the lifecycle on real Slurm, not Ray. (One node:
// the test cluster's nodes have no address of their own for a second stand-in node.)
// Skipped unless TUNEPLANE_LIVE_* is set; waits are bounded.
#include <dirent.h>

#include <chrono>
#include <filesystem>

#include "live_serve_fixture.h"
#include "support/test_paths.h"

namespace tuneplane::live {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The processes on this host (the test cluster's nodes are this host) whose environment
// says they belong to Slurm job `job_id`. Run as root, every process's environ is readable.
int processesOfSlurmJob(int64_t job_id) {
  const std::string wanted = "SLURM_JOB_ID=" + std::to_string(job_id);
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string environ;
    try {
      environ = readFile(entry.path() / "environ");
    } catch (...) {
      continue;  // gone meanwhile, or not ours to read
    }
    for (std::size_t at = 0; at < environ.size();) {
      const std::size_t end = environ.find('\0', at);
      if (environ.compare(at, (end == std::string::npos ? environ.size() : end) - at, wanted) ==
          0) {
        ++count;
        break;
      }
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  return count;
}

std::string gpuJobSpec(const std::string& name, const std::string& driver) {
  return "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: " + name +
         "\nspec:\n  framework:\n    name: custom\n    task: custom\n"
         "    runtime_id: custom-demo\n    command: [\"python3\", \"-c\", \"" +
         driver +
         "\"]\n  resources:\n    time_limit: 5m\n    pools:\n"
         "      - name: trainers\n        gpu_series: h100\n"
         "        nodes: 1\n        gpus_per_node: 2\n        cpus: 2\n"
         "        memory_gb: 1\n";
}

class LiveRay : public LiveServeRun {
 protected:
  void SetUp() override {
    configure();
    if (IsSkipped() || HasFatalFailure()) return;
    auto dir = makeLiveSite(site(), "tp-live-ray-", live_.url, identityLines(),
                            stagingAndServerSections());
    ASSERT_TRUE(dir) << "cannot make a directory in " << live_.shared_dir;
    dir_ = *dir;
    userStep();
    if (HasFatalFailure()) return;
    // The stand-in: `ray` beside the stand-in apptainer on the jobs' PATH, its package where
    // the site's PYTHONPATH points.
    const fs::path stubs = test::sourceDir() / "tests/slurm/stubs";
    const auto open = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec;
    fs::copy_file(stubs / "ray", dir_ + "/bin/ray");
    fs::permissions(dir_ + "/bin/ray", open);
    fs::create_directories(dir_ + "/py");
    fs::copy(stubs / "python", dir_ + "/py", fs::copy_options::recursive);
    for (const auto& entry : fs::recursive_directory_iterator(dir_ + "/py")) {
      fs::permissions(entry.path(), open);
    }
    fs::permissions(dir_ + "/py", open);
    std::string site = readFile(dir_ + "/site.yaml");
    const std::string path_line = "  job_environment:\n";
    const auto at = site.find(path_line);
    ASSERT_NE(at, std::string::npos) << site;
    site.insert(at + path_line.size(), "    PYTHONPATH: " + dir_ + "/py\n");
    writeFile(dir_ + "/site.yaml", site,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                  fs::perms::others_read);
    serve_ = test::ServeProcess::start(dir_ + "/site.yaml", dir_ + "/tuneplane.db", dir_);
    ASSERT_NE(serve_, nullptr);
    cli_ = std::make_unique<test::CliRunner>(serve_->url(), kToken, dir_);
  }
};

// The driver: what a Ray program asks first — the cluster at RAY_ADDRESS, with the token.
constexpr const char* kDriver =
    "import os, ray; ray.init(address=os.environ['RAY_ADDRESS']); "
    "nodes = ray.nodes(); "
    "print('driver on', os.environ['SLURMD_NODENAME'], 'sees', len(nodes), 'node(s),', "
    "sum(1 for n in nodes if n['Alive']), 'alive, GPUs', nodes[0]['Resources'].get('GPU'))";

TEST_F(LiveRay, AOneNodeGpuJobBringsUpRayAndItsDriverSeesTheNode) {
  const std::string spec = gpuJobSpec("live-ray", kDriver);
  writeFile(dir_ + "/job.yaml", spec, fs::perms::owner_read | fs::perms::owner_write);
  const auto submitted = cli_->run(
      {"submit", "-f", dir_ + "/job.yaml", "--wait", "--timeout", "4m", "--poll-interval", "1s"});
  id_ = submitted.out.substr(0, submitted.out.find(':'));
  const auto logs = cli_->run({"logs", id_});
  const auto errors = cli_->run({"logs", "--stderr", id_});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err << logs.out << errors.out;
  EXPECT_EQ(submitted.out, id_ + ": Succeeded (attempt 1: the job completed)\n");

  const json job = cli_->job(id_);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  const json& component = job["attempts"][0]["components"][0];
  EXPECT_EQ(component["state"], json::array({"COMPLETED"}));
  EXPECT_EQ(component.value("nodes", ""), "gpu1");  // the h100 node
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("tuneplane: the Ray head is up at "), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("driver on gpu1 sees 1 node(s), 1 alive, GPUs 2.0"), std::string::npos)
      << logs.out;
}

// Cancelled while its driver runs: Slurm signals the batch script, which stops its Ray
// steps; the attempt ends Cancelled with a start sentinel and no exit sentinel (it did not
// end by itself), and no process of the Slurm job is left on the node.
TEST_F(LiveRay, ACancelledGpuJobLeavesNoExitSentinelAndNoProcess) {
  const std::string spec =
      gpuJobSpec("live-ray-cancel",
                 "import os, ray, time; ray.init(address=os.environ['RAY_ADDRESS']); "
                 "print('driver running', flush=True); time.sleep(240)");
  writeFile(dir_ + "/job.yaml", spec, fs::perms::owner_read | fs::perms::owner_write);
  const auto submitted = cli_->run({"submit", "-f", dir_ + "/job.yaml", "-o", "json"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err << serve_->process().err();
  id_ = json::parse(submitted.out).value("id", "");
  // Running, and the driver has started (its line is in the log).
  std::string log;
  ASSERT_TRUE(test::waitUntil(
      [&] {
        log = cli_->run({"logs", id_}).out;
        return log.find("driver running") != std::string::npos;
      },
      kLiveLimit))
      << log << cli_->run({"logs", "--stderr", id_}).out;
  const json running = cli_->job(id_);
  const json& attempt = running["attempts"][0];
  const int64_t slurm_id = attempt.value("job_id", int64_t{0});
  ASSERT_GT(slurm_id, 0) << running.dump(2);
  EXPECT_GT(processesOfSlurmJob(slurm_id), 0) << "the check must see the running job";

  const auto cancelled = cli_->run({"cancel", id_});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.out << cancelled.err;
  const json done = cli_->waitJob(
      id_, [](const json& job) { return job.value("phase", "") == "Cancelled"; }, "cancelled",
      kLiveLimit);
  ASSERT_EQ(done.value("phase", ""), "Cancelled") << done.dump(2);
  EXPECT_EQ(done["attempts"].size(), 1u);
  const std::string logs_dir = attempt.value("staging_dir", "") + "/logs";
  EXPECT_TRUE(fs::exists(logs_dir + "/start-trainers.json"));
  EXPECT_FALSE(fs::exists(logs_dir + "/exit-trainers.json"))
      << readFile(logs_dir + "/exit-trainers.json");
  EXPECT_TRUE(test::waitUntil([&] { return processesOfSlurmJob(slurm_id) == 0; }, 30s))
      << processesOfSlurmJob(slurm_id) << " process(es) of Slurm job " << slurm_id << " left";
}

}  // namespace
}  // namespace tuneplane::live
