// Live, a LlamaFactory fine-tune on real Slurm: `tuneplane serve` with the live site, a
// llamafactory/sft job on the test cluster's H100 node and A100 node (one het job, 2 GPUs and
// 4 CPUs each), with the project's stand-ins for Ray and LlamaFactory (tests/slurm/stubs:
// Ray and LlamaFactory are not installable here) on the jobs' PATH and PYTHONPATH. The
// stand-in crashes once at step 3 (LLAMAFACTORY_STANDIN_FAIL_AT_STEP); TunePlane retries the
// job in a new attempt, which resumes from checkpoint-2 in the job's checkpoint directory and
// Succeeds; `describe` says where each attempt started. Proves on real Slurm: the het Ray
// bring-up across two nodes, the placement of 10 CPUs per GPU on 4-CPU nodes, the staged
// config, the checkpoint directory shared by attempts and writable by the job user, and the
// resume record.
//
// What the cluster needs (testcluster/up.sh as it is): nodes gpu1 (feature h100) and gpu2
// (a100) with gres gpu:2 each, partition gpu; this host's python3 with PyYAML
// (python3-yaml) for the stand-in LlamaFactory. The stand-ins are copied into the test's own
// site directory, nothing is installed on the cluster. The nodes are all this host: the
// stand-in `getent` (TP_STUB_HOST_IPS) gives gpu1 and gpu2 addresses of their own
// (10.88.0.1, .2 → loopback 127.88.0.x) so two stand-in Ray nodes do not collide.
// Skipped unless TUNEPLANE_LIVE_* is set; waits are bounded. Run:
//   ctest --test-dir build -L live -R LiveLlamaFactory
#include <chrono>
#include <filesystem>
#include <string>

#include "live_serve_fixture.h"
#include "support/test_paths.h"

namespace tuneplane::live {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpec = R"(apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata:
  name: live-lora-sft
spec:
  framework:
    name: llamafactory
    task: sft
    runtime_id: llamafactory-demo
    config:
      model_name_or_path: /models/Qwen2.5-0.5B
      dataset: alpaca_en_demo
      finetuning_type: lora
      learning_rate: 1.0e-4
      do_train: true
      max_steps: 5
      save_steps: 1
  resources:
    time_limit: 10m
    pools:
      - {name: h100s, gpu_series: h100, gpus_per_node: 2, cpus: 4, memory_gb: 1}
      - {name: a100s, gpu_series: a100, gpus_per_node: 2, cpus: 4, memory_gb: 1}
  retry:
    max_attempts: 2
    backoff_seconds: 0
    on: any
)";

class LiveLlamaFactory : public LiveServeRun {
 protected:
  void SetUp() override {
    configure();
    if (IsSkipped() || HasFatalFailure()) return;
    auto dir =
        makeLiveSite(site(), "tp-live-lf-", live_.url, identityLines(), stagingAndServerSections());
    ASSERT_TRUE(dir) << "cannot make a directory in " << live_.shared_dir;
    dir_ = *dir;
    userStep();
    if (HasFatalFailure()) return;
    const auto open = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec;
    const auto readable = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                          fs::perms::others_read;
    // The stand-ins: beside the stand-in apptainer on the jobs' PATH, their Python packages
    // where the site's PYTHONPATH points.
    const fs::path stubs = test::sourceDir() / "tests/slurm/stubs";
    for (const char* stub : {"ray", "llamafactory-cli", "getent"}) {
      fs::copy_file(stubs / stub, dir_ + "/bin/" + stub);
      fs::permissions(dir_ + "/bin/" + stub, open);
    }
    fs::create_directories(dir_ + "/py");
    fs::copy(stubs / "python", dir_ + "/py", fs::copy_options::recursive);
    for (const auto& entry : fs::recursive_directory_iterator(dir_ + "/py")) {
      fs::permissions(entry.path(), open);
    }
    fs::permissions(dir_ + "/py", open);
    std::string site = readFile(dir_ + "/site.yaml");
    const std::string env_line = "  job_environment:\n";
    ASSERT_NE(site.find(env_line), std::string::npos) << site;
    site.insert(site.find(env_line) + env_line.size(),
                "    PYTHONPATH: " + dir_ + "/py\n" +
                    "    TP_STUB_HOST_IPS: gpu1=10.88.0.1,gpu2=10.88.0.2\n"
                    "    LLAMAFACTORY_STANDIN_FAIL_AT_STEP: \"3\"\n"
                    "    LLAMAFACTORY_STANDIN_STEP_SECONDS: \"0.5\"\n"
                    "    LLAMAFACTORY_STANDIN_PG_WAIT: \"5\"\n");
    const std::string series = "gpu_series:\n";
    ASSERT_NE(site.find(series), std::string::npos) << site;
    site.insert(site.find(series) + series.size(),
                "  - name: a100\n    slurm_constraint: a100\n    gpus_per_node: 2\n"
                "    gres_type: a100\n");
    writeFile(dir_ + "/site.yaml", site, readable);
    const std::string artifact = dir_ + "/artifacts/demo.sif";
    writeFile(dir_ + "/runtimes.yaml",
              readFile(dir_ + "/runtimes.yaml") + "  - id: llamafactory-demo\n    format: sif\n" +
                  "    path: " + artifact + "\n    sha256: " +
                  staging::sha256Hex(readFile(artifact)) + "\n    frameworks: [llamafactory]\n",
              readable);
    serve_ = test::ServeProcess::start(dir_ + "/site.yaml", dir_ + "/tuneplane.db", dir_);
    ASSERT_NE(serve_, nullptr);
    cli_ = std::make_unique<test::CliRunner>(serve_->url(), kToken, dir_);
  }
};

TEST_F(LiveLlamaFactory, AFineTuneOnH100AndA100FailsOnceResumesFromItsCheckpointAndSucceeds) {
  writeFile(dir_ + "/job.yaml", kSpec, fs::perms::owner_read | fs::perms::owner_write);
  const auto submitted = cli_->run(
      {"submit", "-f", dir_ + "/job.yaml", "--wait", "--timeout", "8m", "--poll-interval", "1s"});
  id_ = submitted.out.substr(0, submitted.out.find(':'));
  const auto first_log = cli_->run({"logs", id_, "--attempt", "1"});
  const auto first_err = cli_->run({"logs", id_, "--attempt", "1", "--stderr"});
  const auto second_log = cli_->run({"logs", id_});
  const auto second_err = cli_->run({"logs", id_, "--stderr"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err << first_log.out
                                    << first_err.out << second_log.out << second_err.out;

  const json job = cli_->job(id_);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  const json& failed = job["attempts"][0];
  const json& resumed = job["attempts"][1];
  EXPECT_EQ(failed["phase"], "Failed");
  EXPECT_EQ(failed["cause"], "user");
  EXPECT_EQ(resumed["phase"], "Succeeded");
  EXPECT_EQ(failed["resume_from_step"], 0);
  EXPECT_EQ(resumed["resume_from_step"], 2);
  for (const json* attempt : {&failed, &resumed}) {
    ASSERT_EQ((*attempt)["components"].size(), 2u) << attempt->dump(2);
    EXPECT_EQ((*attempt)["components"][0].value("nodes", ""), "gpu1");  // the H100 node
    EXPECT_EQ((*attempt)["components"][1].value("nodes", ""), "gpu2");  // the A100 node
  }

  EXPECT_NE(first_log.out.find("llamafactory stand-in: crashed at step 3"), std::string::npos)
      << first_log.out << first_err.out;
  for (const std::string line :
       {"tuneplane: this attempt starts from step 2",
        "llamafactory stand-in: resumed from checkpoint-2", "llamafactory stand-in: step 5/5",
        "llamafactory stand-in: training done"}) {
    EXPECT_NE(second_log.out.find(line), std::string::npos) << line << "\n" << second_log.out;
  }
  // Both nodes' GPUs through the job's Ray cluster, 10 CPUs advertised per GPU.
  const std::string marker = "llamafactory stand-in: run ";
  const auto at = second_log.out.find(marker);
  ASSERT_NE(at, std::string::npos) << second_log.out;
  const json seen = json::parse(
      second_log.out.substr(at + marker.size(), second_log.out.find('\n', at) - at - marker.size()),
      nullptr, false);
  EXPECT_EQ(seen["workers"], 4) << seen.dump();
  EXPECT_EQ(seen["cluster"]["GPU"], 4.0) << seen.dump();
  EXPECT_EQ(seen["cluster"]["CPU"], 40.0) << seen.dump();

  // The checkpoints: the job's, written by the job's user, found by the retry.
  const fs::path checkpoints =
      fs::path(failed.value("staging_dir", "")).parent_path().parent_path() / "checkpoints";
  EXPECT_EQ(seen["config"]["output_dir"], checkpoints.string());
  EXPECT_TRUE(fs::is_directory(checkpoints / "checkpoint-5"));
  EXPECT_EQ(readFile(checkpoints / "adapter_model.safetensors"), "stand-in weights\n");

  // The weights fetched as a user does, through serve: `tuneplane cp`, byte for byte.
  const std::string fetched = dir_ + "/fetched-adapter.safetensors";
  const auto copied = cli_->run({"cp", id_ + ":checkpoints/adapter_model.safetensors", fetched});
  EXPECT_EQ(copied.exit_code, 0) << copied.err;
  EXPECT_EQ(readFile(fetched), readFile(checkpoints / "adapter_model.safetensors"));

  const auto described = cli_->run({"describe", id_});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  EXPECT_NE(described.out.find("Started from:  step 2 (the job's last checkpoint)"),
            std::string::npos)
      << described.out;
}

}  // namespace
}  // namespace tuneplane::live
