// A LlamaFactory fine-tune end to end (e2e_fixture.h): `tuneplane submit` of a llamafactory/sft
// spec to `tuneplane serve`, on the simulator's H100 node and A100 node (one het job, 2 GPUs
// and 4 CPUs each, as on the test cluster), with the stand-in Ray and LlamaFactory of
// tests/slurm/stubs first on the jobs' PATH. The trainer crashes at step 3 on its first run
// (LLAMAFACTORY_STANDIN_FAIL_AT_STEP); TunePlane retries it in a new attempt, which finds the
// checkpoints of the first in the job's checkpoint directory, resumes from step 2 and
// Succeeds; `describe` and the API say where each attempt started.
#include <filesystem>
#include <string>

#include "e2e_fixture.h"
#include "support/test_paths.h"

namespace tuneplane::cli::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kStubs = test::sourceDir() / "tests/slurm/stubs";

std::string llamaFactorySpec() {
  return R"(apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata:
  name: lora-sft
spec:
  framework:
    name: llamafactory
    task: sft
    runtime_id: llamafactory-demo
    config:
      model_name_or_path: /models/Qwen2.5-0.5B
      dataset: alpaca_en_demo
      finetuning_type: lora
      lora_target: all
      learning_rate: 1.0e-4
      do_train: true
      max_steps: 5
      save_steps: 1
  resources:
    time_limit: 30m
    pools:
      - {name: h100s, gpu_series: h100, gpus_per_node: 2, cpus: 4, memory_gb: 1}
      - {name: a100s, gpu_series: a100, gpus_per_node: 2, cpus: 4, memory_gb: 1}
  retry:
    max_attempts: 2
    backoff_seconds: 0
    on: any
)";
}

class ServeE2eLlamaFactoryTest : public ServeE2eTest {
 protected:
  // The stand-ins on the jobs' PATH (and Python's), the nodes' addresses for the stand-in
  // Ray, the trainer's failure at step 3, and a LlamaFactory runtime in the registry; serve
  // reads them when it starts again.
  void SetUp() override {
    ServeE2eTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_EQ(serve_->stop(), 0);
    serve_.reset();
    const fs::path bin = fs::path(scratch_) / "standins";
    fs::create_directories(bin);
    for (const char* stub : {"ray", "llamafactory-cli", "getent"}) {
      fs::copy_file(kStubs / stub, bin / stub);
      fs::permissions(bin / stub, fs::perms::owner_all);
    }
    std::string site = pipeline::testing::readFile(site_->site());
    const std::string path_line = "    PATH: /usr/local/bin:/usr/bin:/bin\n";
    ASSERT_NE(site.find(path_line), std::string::npos);
    site.replace(site.find(path_line), path_line.size(),
                 "    PATH: " + bin.string() + ":/usr/local/bin:/usr/bin:/bin\n" +
                     "    PYTHONPATH: " + (kStubs / "python").string() + "\n" +
                     "    TP_STUB_HOST_IPS: gpu1=10.77.0.1,gpu2=10.77.0.2\n"
                     "    LLAMAFACTORY_STANDIN_FAIL_AT_STEP: \"3\"\n"
                     "    LLAMAFACTORY_STANDIN_STEP_SECONDS: \"0.2\"\n"
                     "    LLAMAFACTORY_STANDIN_PG_WAIT: \"1\"\n");
    site += "ray:\n  join_timeout_seconds: 60\n";
    pipeline::testing::writeFile(site_->site(), site);
    const std::string runtimes = pipeline::testing::readFile(site_->dir() + "/runtimes.yaml");
    const std::string artifact = site_->dir() + "/artifacts/demo.sif";
    pipeline::testing::writeFile(
        site_->dir() + "/runtimes.yaml",
        runtimes + "  - id: llamafactory-demo\n    format: sif\n    path: " + artifact +
            "\n    sha256: " + staging::sha256Hex(pipeline::testing::readFile(artifact)) +
            "\n    frameworks: [llamafactory]\n");
    startServe();
    ASSERT_NE(serve_, nullptr);
  }
};

TEST_F(ServeE2eLlamaFactoryTest, AFineTuneThatFailsOnceResumesFromItsCheckpointAndSucceeds) {
  const std::string id = submit(llamaFactorySpec());
  ASSERT_FALSE(id.empty());
  const json job = waitPhase(id, "Succeeded");
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  const json& failed = job["attempts"][0];
  const json& resumed = job["attempts"][1];
  EXPECT_EQ(failed["phase"], "Failed");
  EXPECT_EQ(failed["cause"], "user");
  EXPECT_EQ(failed["components"][0]["exit_code"], 1);
  EXPECT_EQ(resumed["phase"], "Succeeded");
  // Where each attempt started, as its script recorded it: from scratch, then from step 2.
  EXPECT_EQ(failed["resume_from_step"], 0);
  EXPECT_EQ(resumed["resume_from_step"], 2);

  // The trainer's own word, in the attempts' logs through serve.
  const auto first_log = alice_->run({"logs", id, "--attempt", "1"});
  EXPECT_EQ(first_log.exit_code, 0) << first_log.err;
  EXPECT_NE(first_log.out.find("llamafactory stand-in: crashed at step 3"), std::string::npos)
      << first_log.out;
  const auto second_log = alice_->run({"logs", id});
  EXPECT_EQ(second_log.exit_code, 0) << second_log.err;
  for (const std::string line :
       {"tuneplane: this attempt starts from step 2",
        "llamafactory stand-in: resumed from checkpoint-2", "llamafactory stand-in: step 5/5",
        "llamafactory stand-in: training done"}) {
    EXPECT_NE(second_log.out.find(line), std::string::npos) << line << "\n" << second_log.out;
  }
  EXPECT_EQ(second_log.out.find("step 1/5"), std::string::npos) << second_log.out;

  // It trained on all 4 GPUs of both nodes through the job's own Ray cluster.
  const std::string run_marker = "llamafactory stand-in: run ";
  const auto at = second_log.out.find(run_marker);
  ASSERT_NE(at, std::string::npos) << second_log.out;
  const json seen =
      json::parse(second_log.out.substr(at + run_marker.size(),
                                        second_log.out.find('\n', at) - at - run_marker.size()),
                  nullptr, false);
  EXPECT_EQ(seen["workers"], 4) << seen.dump();
  EXPECT_EQ(seen["cluster"]["GPU"], 4.0) << seen.dump();
  EXPECT_EQ(seen["cluster"]["CPU"], 40.0) << seen.dump();

  // The checkpoints are the job's, beside its attempts; each attempt's config names them.
  const fs::path job_dir =
      fs::path(failed["staging_dir"].get<std::string>()).parent_path().parent_path();
  const fs::path checkpoints = job_dir / "checkpoints";
  EXPECT_EQ(seen["config"]["output_dir"], checkpoints.string());
  for (int step = 1; step <= 5; ++step) {
    EXPECT_TRUE(fs::is_directory(checkpoints / ("checkpoint-" + std::to_string(step)))) << step;
  }
  EXPECT_EQ(pipeline::testing::readFile((checkpoints / "adapter_model.safetensors").string()),
            "stand-in weights\n");
  for (const json* attempt : {&failed, &resumed}) {
    const std::string config =
        pipeline::testing::readFile(attempt->value("staging_dir", "") + "/llamafactory.yaml");
    EXPECT_NE(config.find("output_dir: " + checkpoints.string() + "\n"), std::string::npos)
        << config;
    EXPECT_NE(config.find("ray_num_workers: 4\n"), std::string::npos) << config;
  }

  const auto described = alice_->run({"describe", id});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  for (const std::string part : {"Started from:  step 0 (from the start)",
                                 "Started from:  step 2 (the job's last checkpoint)"}) {
    EXPECT_NE(described.out.find(part), std::string::npos) << part << "\n" << described.out;
  }
}

}  // namespace
}  // namespace tuneplane::cli::testing
