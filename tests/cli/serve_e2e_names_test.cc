// Issue 48's first day as a user with only a token (no site file, no Slurm account of their
// own), against the real `serve` on the simulator (e2e_fixture.h): `validate` asks the server
// and prints its verdict as the offline check would; `capabilities` shows what the site
// offers; an unknown runtime, GPU series or partition is refused with the names the site has
// and the closest one; and `ls` names a job's outputs and checkpoints so that `cp` fetches one
// checkpoint folder, not all of them.
//
// The site lists its partitions (partitions.allowed: gpu, cpu, debug), so a pool naming
// another is refused at validation — not staged and failed by Slurm. Bounds here are bounds
// on a hang, never timing assertions.
#include <filesystem>
#include <set>

#include "e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

namespace fs = std::filesystem;
using pipeline::testing::readFile;
using pipeline::testing::writeFile;

class ServeE2eNamesTest : public ServeE2eTest {
 protected:
  void SetUp() override {
    ServeE2eTest::SetUp();
    ASSERT_NE(serve_, nullptr);
    // The site lists the partitions a pool may name; serve reads it at its start.
    const std::string site = readFile(site_->site());
    const std::string defaults = "  cpu: cpu\n";
    const auto at = site.find(defaults);
    ASSERT_NE(at, std::string::npos);
    writeFile(site_->site(), site.substr(0, at) + defaults + "  allowed: [gpu, cpu, debug]\n" +
                                 site.substr(at + defaults.size()));
    ASSERT_EQ(serve_->stop(), 0);
    startServe();
    ASSERT_NE(serve_, nullptr);
  }

  std::string specPath(const std::string& spec) {
    return site_->specFile("spec-" + std::to_string(++specs_) + ".yaml", spec);
  }

  // The codes of a -o json failure document (exit 2).
  static std::set<std::string> errorCodes(const test::ProcessResult& r) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    const json doc = json::parse(r.out, nullptr, false);
    std::set<std::string> codes;
    if (!doc.is_object() || !doc["errors"].is_array()) {
      ADD_FAILURE() << "no errors document: " << r.out;
      return codes;
    }
    for (const auto& e : doc["errors"]) codes.insert(e.value("code", ""));
    return codes;
  }
};

TEST_F(ServeE2eNamesTest, ValidateAsksTheServerWithOnlyATokenAndPrintsItsVerdict) {
  // The CLI's environment names a server and a token, no site file (CliRunner).
  for (const std::string& entry : alice_->environment()) {
    ASSERT_FALSE(entry.starts_with("TUNEPLANE_SITE_FILE=")) << entry;
  }
  const std::string good = specPath(cpuSpec());
  const auto text = alice_->run({"validate", "-f", good});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("valid: hello (custom/custom)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("component 0: pool main, 1 node(s) x 0 GPU(s), 1 CPU(s), 1024 MiB, "
                          "partition cpu"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("time limit: 10 min (from spec.resources.time_limit)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.err.find("checked by " + serve_->url()), std::string::npos) << text.err;
  for (const char* flag : {"-o", "--output"}) {
    const auto doc = alice_->run({"validate", "-f", good, flag, "json"});
    ASSERT_EQ(doc.exit_code, 0) << doc.err;
    const json summary = json::parse(doc.out, nullptr, false);
    ASSERT_TRUE(summary.is_object()) << doc.out;
    EXPECT_EQ(summary["valid"], true);
    EXPECT_EQ(summary["components"][0]["partition"], "cpu");
  }

  // Errors as the offline check prints them: "field: message [code]", or the JSON document.
  const std::string typo = specPath(cpuSpec("echo hi", "", "hello", "", "custom-dmeo"));
  const auto refused = alice_->run({"validate", "-f", typo});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("spec.framework.runtime_id: 'custom-dmeo' is not in the runtime "
                             "registry; this site has: custom-demo, custom-tampered; did you "
                             "mean 'custom-demo'? [launch.unknown_runtime]"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(errorCodes(alice_->run({"validate", "-f", typo, "-o", "json"})),
            std::set<std::string>{"launch.unknown_runtime"});
  // Nothing was stored.
  const json jobs = json::parse(alice_->run({"get", "-o", "json"}).out, nullptr, false);
  EXPECT_TRUE(jobs.is_object() && jobs["items"].empty()) << jobs.dump();
  // A refused token is the server's word too.
  EXPECT_EQ(as("not-a-token").run({"validate", "-f", good}).exit_code, 4);
}

TEST_F(ServeE2eNamesTest, AnUnknownPartitionOrGpuSeriesIsRefusedWithTheClosestName) {
  const std::string partition =
      specPath(cpuSpec("echo hi", "", "hello", "        partition: debgu\n"));
  const auto validated = alice_->run({"validate", "-f", partition});
  EXPECT_EQ(validated.exit_code, 2);
  EXPECT_NE(validated.err.find("spec.resources.pools[0].partition: 'debgu' is not a partition "
                               "this site offers; this site has: gpu, cpu, debug; did you mean "
                               "'debug'? [launch.unknown_partition]"),
            std::string::npos)
      << validated.err;
  // Submit refuses it the same way, before anything is staged or reaches Slurm.
  const auto submitted = alice_->run({"submit", "-f", partition, "-o", "json"});
  EXPECT_EQ(errorCodes(submitted), std::set<std::string>{"launch.unknown_partition"});
  const json jobs = json::parse(alice_->run({"get", "-o", "json"}).out, nullptr, false);
  EXPECT_TRUE(jobs.is_object() && jobs["items"].empty()) << jobs.dump();
  // A listed partition passes.
  const auto listed = alice_->run(
      {"validate", "-f", specPath(cpuSpec("echo hi", "", "hello", "        partition: debug\n"))});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;

  const std::string gpu = specPath(
      "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata: {name: g}\nspec:\n"
      "  framework: {name: custom, task: custom, runtime_id: custom-demo, command: [x]}\n"
      "  resources:\n    pools:\n      - {name: main, nodes: 1, gpus_per_node: 1, cpus: 1, "
      "memory_gb: 1, gpu_series: h10}\n");
  const auto series = alice_->run({"validate", "-f", gpu});
  EXPECT_EQ(series.exit_code, 2);
  EXPECT_NE(series.err.find("'h10' is not a GPU series of this site; this site has: h100, a100; "
                            "did you mean 'h100'? [launch.unknown_gpu_series]"),
            std::string::npos)
      << series.err;
}

TEST_F(ServeE2eNamesTest, CapabilitiesShowsRuntimesGpuSeriesPartitionsAndLimits) {
  const auto text = alice_->run({"capabilities"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* line :
       {"Runtimes (spec.framework.runtime_id):", "custom-demo\tsif\tcustom",
        "GPU series (spec.resources.pools[].gpu_series):", "h100\t2\th100\th100\tyes",
        "gpu (default for GPU pools), cpu (default for CPU-only pools)",
        "a pool may name: gpu, cpu, debug",
        "logs: the last 64.0 KiB and at most "
        "2000 lines of each file",
        "code (--workdir): at most 64.0 MiB in 2000 files and folders",
        "not on Slurm: ModelDeployment, Playground, data_volumes, oci_images"}) {
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
  }
  const auto doc = alice_->run({"capabilities", "-o", "json"});
  ASSERT_EQ(doc.exit_code, 0) << doc.err;
  const json caps = json::parse(doc.out, nullptr, false);
  ASSERT_TRUE(caps.is_object()) << doc.out;
  EXPECT_EQ(caps["partitions"]["allowed"], json({"gpu", "cpu", "debug"}));
  EXPECT_EQ(caps["runtimes"][0]["frameworks"], json({"custom"}));
  EXPECT_EQ(caps["gpu_series"][0]["gpus_per_node"], 2);
  EXPECT_EQ(caps["limits"]["workdir_max_bytes"], 64 * 1024 * 1024);
  EXPECT_EQ(caps["limits"]["workdir_max_files"], 2000);
}

// Writes a result, a model folder and (as LlamaFactory's adapter runs leave them) two
// checkpoint folders in the job's checkpoints/.
constexpr const char* kWriteOutputsAndCheckpoints =
    "set -e; out=\"$TUNEPLANE_OUTPUT_DIR\"; mkdir -p \"$out/model\"; echo 42 > "
    "\"$out/result.txt\"; "
    "printf weights > \"$out/model/weights.bin\"; echo done";

TEST_F(ServeE2eNamesTest, LsNamesOutputsAndCheckpointsAndCpFetchesOneCheckpoint) {
  const std::string id = submit(cpuSpec(kWriteOutputsAndCheckpoints));
  ASSERT_FALSE(id.empty());
  const json job = waitPhase(id, "Succeeded");
  const fs::path attempt = job["attempts"][0].value("staging_dir", "");
  // The job's checkpoint folder: <staging_root>/jobs/<id>/checkpoints, beside attempts/.
  const fs::path checkpoints = attempt.parent_path().parent_path() / "checkpoints";
  for (const char* step : {"checkpoint-100", "checkpoint-200"}) {
    fs::create_directories(checkpoints / step);
    writeFile((checkpoints / step / "adapter_model.safetensors").string(),
              std::string("adapter of ") + step);
    writeFile((checkpoints / step / "adapter_config.json").string(), "{\"r\": 8}");
  }

  const auto outputs = alice_->run({"ls", id});
  ASSERT_EQ(outputs.exit_code, 0) << outputs.err;
  EXPECT_NE(outputs.out.find("directory\t-\t"), std::string::npos) << outputs.out;
  EXPECT_NE(outputs.out.find("\tmodel/\n"), std::string::npos) << outputs.out;
  EXPECT_NE(outputs.out.find("file\t3 B\t"), std::string::npos) << outputs.out;
  EXPECT_NE(outputs.out.find("\tresult.txt\n"), std::string::npos) << outputs.out;
  EXPECT_NE(outputs.err.find("output/ of attempt 1 of " + id), std::string::npos) << outputs.err;
  // An attempt and a folder, as JSON (the server's FileList, every page).
  const json model =
      json::parse(alice_->run({"ls", id + ":1/model", "-o", "json"}).out, nullptr, false);
  ASSERT_TRUE(model.is_object());
  ASSERT_EQ(model["items"].size(), 1u) << model.dump();
  EXPECT_EQ(model["items"][0]["path"], "model/weights.bin");
  // A file lists itself.
  const auto one = alice_->run({"ls", id + "/model/weights.bin"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("\tweights.bin\n"), std::string::npos) << one.out;

  const auto listed = alice_->run({"ls", id + ":checkpoints"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_LT(listed.out.find("checkpoint-100/"), listed.out.find("checkpoint-200/")) << listed.out;
  const auto inside = alice_->run({"ls", id + ":checkpoints/checkpoint-200"});
  ASSERT_EQ(inside.exit_code, 0) << inside.err;
  EXPECT_NE(inside.out.find("adapter_model.safetensors"), std::string::npos) << inside.out;
  EXPECT_EQ(alice_->run({"ls", id + ":checkpoints/checkpoint-300"}).exit_code, 3);
  EXPECT_EQ(as(kBobToken).run({"ls", id}).exit_code, 3);  // not bob's job

  // One checkpoint folder, not every one; and one file of it.
  const std::string local = scratch_ + "/local";
  fs::create_directories(local);
  const auto folder = alice_->run({"cp", "-r", id + ":checkpoints/checkpoint-200", local});
  ASSERT_EQ(folder.exit_code, 0) << folder.err;
  EXPECT_EQ(readFile(local + "/checkpoint-200/adapter_model.safetensors"),
            "adapter of checkpoint-200");
  EXPECT_EQ(readFile(local + "/checkpoint-200/adapter_config.json"), "{\"r\": 8}");
  EXPECT_FALSE(fs::exists(local + "/checkpoint-100"));
  const auto file = alice_->run(
      {"cp", id + ":checkpoints/checkpoint-100/adapter_config.json", local + "/config.json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(readFile(local + "/config.json"), "{\"r\": 8}");
}

}  // namespace
}  // namespace tuneplane::cli::testing
