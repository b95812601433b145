#include "launch/assembler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "catalog/artifact_verifier.h"
#include "catalog/site_loader.h"
#include "fixtures.h"
#include "support/fixtures.h"
#include "support/test_paths.h"

namespace tuneplane::launch {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using namespace tuneplane::launch::testing;

TEST(Assembler, GpuJobIsFullyExplicit) {
  const auto req = assembleLaunch(parsed(kGpuSpec), testSite(), testRegistry(), kIdentity,
                                  kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  EXPECT_EQ(req->job_name, "job");
  EXPECT_EQ(req->identity.job_id, "job-0001");
  EXPECT_EQ(req->identity.attempt, 2);
  EXPECT_EQ(req->identity.submit_token, "tok-abc");
  EXPECT_EQ(req->framework, "custom/custom");
  EXPECT_EQ(req->container_runtime, catalog::ContainerRuntime::kPyxis);
  EXPECT_EQ(req->artifact.path, "/shared/rt/custom-torch.sqsh");
  EXPECT_EQ(req->artifact.format, catalog::ArtifactFormat::kSqsh);
  EXPECT_EQ(req->artifact.sha256, std::string(64, 'a'));
  EXPECT_EQ(req->attempt_dir, kAttemptDir);
  EXPECT_EQ(req->logs_dir, std::string(kAttemptDir) + "/logs");
  EXPECT_EQ(req->output_dir, std::string(kAttemptDir) + "/output");
  EXPECT_EQ(req->container_attempt_dir, kAttemptDir);
  EXPECT_EQ(req->container_output_dir, std::string(kAttemptDir) + "/output");
  EXPECT_THAT(req->mounts, ElementsAre(Mount{"/shared/data", "/data", true},
                                       Mount{"/shared/scratch", "/scratch", false},
                                       Mount{kAttemptDir, kAttemptDir, true},
                                       Mount{std::string(kAttemptDir) + "/output",
                                             std::string(kAttemptDir) + "/output", false},
                                       Mount{kCheckpointDir, kCheckpointDir, false}));
  EXPECT_EQ(req->checkpoint_dir, kCheckpointDir);
  EXPECT_EQ(req->container_checkpoint_dir, kCheckpointDir);
  ASSERT_EQ(req->components.size(), 1u);
  const Component& c = req->components[0];
  EXPECT_EQ(c.pool_name, "main");
  EXPECT_EQ(c.partition, "gpu-part");
  EXPECT_EQ(c.constraint, "h100&ib");
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.gres_type, "h100");
  EXPECT_EQ(c.cpus_per_node, 16);
  EXPECT_EQ(c.memory_mb, 64 * 1024);
  EXPECT_EQ(c.scratch_mb, 0);
  EXPECT_EQ(c.time_limit, std::chrono::minutes(120));
  EXPECT_TRUE(req->uses_gpus);
  EXPECT_THAT(req->command, ElementsAre("python", "train.py", "--epochs", "3"));
  EXPECT_THAT(
      req->environment,
      ElementsAre(Pair("ALPHA", "a"), Pair("ZED", "z"), Pair("TUNEPLANE_JOB_ID", "job-0001"),
                  Pair("TUNEPLANE_ATTEMPT", "2"),
                  Pair("TUNEPLANE_OUTPUT_DIR", std::string(kAttemptDir) + "/output"),
                  Pair("TUNEPLANE_CHECKPOINT_DIR", kCheckpointDir), Pair("TUNEPLANE_RESUME", "1"),
                  Pair("TUNEPLANE_PREEMPT_SIGNAL", "USR2")));  // on by default
  EXPECT_THAT(req->scheduler_environment,
              ElementsAre(Pair("LANG", "C.UTF-8"), Pair("PATH", "/opt/slurm/bin:/usr/bin")));
  EXPECT_EQ(req->account, "acct");
  EXPECT_EQ(req->qos, "high");
  EXPECT_EQ(req->ray.port, 7000);
  // A custom job runs its own command: no staged input, no resume record, Ray advertises the
  // CPUs Slurm gave.
  EXPECT_TRUE(req->inputs.empty());
  EXPECT_EQ(req->resume_record, ResumeRecord::kNone);
  EXPECT_EQ(req->ray_min_cpus_per_gpu, 0);
}

TEST(Assembler, ResumeOffTellsACustomJob) {
  const auto req =
      assembleLaunch(parsed(std::string(kGpuSpec) + "  retry: {resume: false}\n"), testSite(),
                     testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  EXPECT_THAT(req->environment, ::testing::Contains(Pair("TUNEPLANE_RESUME", "0")));
}

// slurm.preemption_warning: the job's steps are told which signal warns them (every step:
// the one environment of the request), and Slurm is asked for it; neither when it is off.
TEST(Assembler, ThePreemptionWarningIsNamedToTheJobAndAskedOfSlurm) {
  catalog::SiteConfig site = testSite();
  EXPECT_TRUE(site.slurm.preemption_warning.enabled);  // on unless a site turns it off
  site.slurm.preemption_warning.enabled = true;
  site.slurm.preemption_warning.signal = "HUP";
  const auto req = assembleLaunch(parsed(kGpuSpec), site, testRegistry(), kIdentity, kAttemptDir,
                                  kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  EXPECT_THAT(req->environment, ::testing::Contains(Pair("TUNEPLANE_PREEMPT_SIGNAL", "HUP")));
  ASSERT_TRUE(req->preemption_warning.has_value());
  EXPECT_EQ(req->preemption_warning->before_end, std::chrono::seconds(120));
  site.slurm.preemption_warning.enabled = false;
  const auto off = assembleLaunch(parsed(kGpuSpec), site, testRegistry(), kIdentity, kAttemptDir,
                                  kCheckpointDir);
  ASSERT_TRUE(off.has_value()) << off.error().front().describe();
  for (const auto& [name, value] : off->environment) EXPECT_NE(name, "TUNEPLANE_PREEMPT_SIGNAL");
  EXPECT_FALSE(off->preemption_warning.has_value());
}

TEST(Assembler, NoCheckpointDirMeansNoMountAndNoVariable) {
  const auto req =
      assembleLaunch(parsed(kGpuSpec), testSite(), testRegistry(), kIdentity, kAttemptDir, "");
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  EXPECT_EQ(req->mounts.size(), 4u);
  for (const auto& [name, value] : req->environment) EXPECT_NE(name, "TUNEPLANE_CHECKPOINT_DIR");
}

// spec.workdir: the attempt's copy of the job's code, bound read-only at /workdir right after
// the attempt dir, and named by TUNEPLANE_WORKDIR.
TEST(Assembler, AJobThatShipsItsCodeGetsItReadOnlyAtWorkdir) {
  const std::string hex(64, 'c');
  const auto req =
      assembleLaunch(parsed(std::string(kGpuSpec) + "  workdir: sha256:" + hex + "\n"), testSite(),
                     testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  ASSERT_TRUE(req->workdir.has_value());
  EXPECT_EQ(req->workdir->sha256, hex);
  EXPECT_EQ(req->workdir->dir, std::string(kAttemptDir) + "/workdir");
  EXPECT_EQ(req->workdir->container_dir, "/workdir");
  EXPECT_EQ(req->workdir->source, "");  // the pipeline's, from the job's owner
  EXPECT_THAT(req->mounts,
              ::testing::Contains(Mount{std::string(kAttemptDir) + "/workdir", "/workdir", true}));
  EXPECT_THAT(req->environment, ::testing::Contains(Pair("TUNEPLANE_WORKDIR", "/workdir")));
  // None without it.
  const auto plain = assembleLaunch(parsed(kGpuSpec), testSite(), testRegistry(), kIdentity,
                                    kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->workdir.has_value());
  for (const auto& [name, value] : plain->environment) EXPECT_NE(name, "TUNEPLANE_WORKDIR");
}

// A llamafactory job: TunePlane writes the config and the command, and owns the keys that make
// it train on every GPU and resume.
TEST(Assembler, LlamaFactoryJobIsLaunchedFromItsConfig) {
  const std::string two_pools = asLlamaFactory(kGpuSpec) +
                                "      - {name: second, gpu_series: a100, nodes: 1, "
                                "gpus_per_node: 4, cpus: 8, memory_gb: 32}\n";
  const auto req = assembleLaunch(parsed(two_pools), testSite(), testRegistry(), kIdentity,
                                  kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  EXPECT_EQ(req->framework, "llamafactory/sft");
  const std::string config_path = std::string(kAttemptDir) + "/llamafactory.yaml";
  EXPECT_THAT(req->command, ElementsAre("llamafactory-cli", "train", config_path));
  EXPECT_THAT(req->environment, ::testing::Contains(Pair("USE_RAY", "1")));
  EXPECT_EQ(req->ray_min_cpus_per_gpu, 10);
  EXPECT_EQ(req->resume_record, ResumeRecord::kLastCheckpoint);
  ASSERT_EQ(req->inputs.size(), 1u);
  EXPECT_EQ(req->inputs[0].name, "llamafactory.yaml");
  const std::string& yaml = req->inputs[0].content;
  // The user's keys, typed as written, and TunePlane's: 2 nodes x 8 + 1 node x 4 GPUs.
  for (const char* line :
       {"model_name_or_path: /models/Qwen2.5-0.5B\n", "finetuning_type: lora\n",
        "dataset: alpaca_en_demo\n", "learning_rate: 1.0e-04\n", "do_train: true\n", "stage: sft\n",
        "overwrite_output_dir: false\n", "ray_num_workers: 20\n"}) {
    EXPECT_NE(yaml.find(line), std::string::npos) << line << "\n" << yaml;
  }
  EXPECT_NE(yaml.find(std::string("output_dir: ") + kCheckpointDir + "\n"), std::string::npos)
      << yaml;
  EXPECT_TRUE(
      yaml.starts_with("# LlamaFactory's training configuration for TunePlane job "
                       "job-0001, attempt 2"))
      << yaml;
}

TEST(Assembler, LlamaFactoryWithResumeOffStartsOver) {
  const auto req =
      assembleLaunch(parsed(asLlamaFactory(kGpuSpec) + "  retry: {resume: false}\n"), testSite(),
                     testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  EXPECT_EQ(req->resume_record, ResumeRecord::kFromScratch);
  ASSERT_EQ(req->inputs.size(), 1u);
  EXPECT_NE(req->inputs[0].content.find("overwrite_output_dir: true\n"), std::string::npos);
  // With a checkpoint of the user's own, where it starts is the user's: nothing recorded.
  const std::string own =
      replaced(asLlamaFactory(kGpuSpec), "      do_train: true\n",
               "      do_train: true\n      resume_from_checkpoint: /models/ckpt/checkpoint-7\n") +
      "  retry: {resume: false}\n";
  const auto from_own = assembleLaunch(parsed(own), testSite(), testRegistry(), kIdentity,
                                       kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(from_own.has_value()) << from_own.error().front().describe();
  EXPECT_EQ(from_own->resume_record, ResumeRecord::kNone);
}

TEST(Assembler, CpuOnlyJobUsesTheCpuPartitionAndNoGpus) {
  catalog::SiteConfig site = testSite();
  site.slurm.job_environment.clear();
  site.slurm.account.reset();
  const auto req = assembleLaunch(parsed(kCpuSpec), site, testRegistry(), kIdentity, kAttemptDir,
                                  kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  ASSERT_EQ(req->components.size(), 1u);
  EXPECT_EQ(req->components[0].partition, "cpu-part");
  EXPECT_EQ(req->components[0].constraint, std::nullopt);
  EXPECT_EQ(req->components[0].gpus_per_node, 0);
  EXPECT_EQ(req->components[0].cpus_per_node, 4);
  EXPECT_EQ(req->components[0].memory_mb, 8192);
  EXPECT_EQ(req->components[0].time_limit, std::chrono::minutes(30));
  EXPECT_FALSE(req->uses_gpus);
  EXPECT_EQ(req->account, std::nullopt);
  // slurmrestd refuses an empty environment: a safe PATH stands in.
  EXPECT_THAT(req->scheduler_environment,
              ElementsAre(Pair("PATH", "/usr/local/bin:/usr/bin:/bin")));
}

TEST(Assembler, TheSpecsSchedulingChoiceIsChargedOverTheSitesDefault) {
  spec::JobSpec job = parsed(kCpuSpec);
  job.scheduling.account = "team-a";  // serve checked it against the user's token
  const auto req = assembleLaunch(job, testSite(), testRegistry(), kIdentity, kAttemptDir, "");
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  EXPECT_EQ(req->account, "team-a");
  EXPECT_EQ(req->qos, "high");  // the site's, since the spec names none
  job.scheduling.qos = "low";
  EXPECT_EQ(assembleLaunch(job, testSite(), testRegistry(), kIdentity, kAttemptDir, "")->qos,
            "low");
}

TEST(Assembler, CpuOnlyJobWithScratchZeroIsTheJobWithoutScratch) {
  const auto without = assembleLaunch(parsed(kCpuSpec), testSite(), testRegistry(), kIdentity,
                                      kAttemptDir, kCheckpointDir);
  const auto zero = assembleLaunch(
      parsed(replaced(kCpuSpec, "memory_gb: 8", "memory_gb: 8\n        scratch_gb: 0")), testSite(),
      testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(without.has_value()) << without.error().front().describe();
  ASSERT_TRUE(zero.has_value()) << zero.error().front().describe();
  // The script and the submit body are rendered from the components alone (slurm/), so equal
  // components render the same: no --tmp, no temporary_disk_per_node.
  EXPECT_EQ(zero->components, without->components);
  EXPECT_EQ(zero->components.at(0).scratch_mb, 0);
  // A positive amount is still refused.
  const auto one = assembleLaunch(
      parsed(replaced(kCpuSpec, "memory_gb: 8", "memory_gb: 8\n        scratch_gb: 1")), testSite(),
      testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_FALSE(one.has_value());
  ASSERT_EQ(one.error().size(), 1u);
  EXPECT_EQ(one.error()[0].code, "launch.cpu_only_scratch");
  EXPECT_EQ(one.error()[0].field, "spec.resources.pools[0].scratch_gb");
}

TEST(Assembler, TimeLimitComesFromTheSpecElseTheSiteElseThePartition) {
  // The backend's documented CPU-only job: custom/custom, one pool, one node, no GPUs,
  // CPUs, memory, a runtime id — and no time limit.
  const std::string no_limit = replaced(kCpuSpec, "    time_limit: 30m\n", "");
  struct Case {
    const char* name;
    std::string spec;
    std::optional<std::chrono::minutes> site_default;
    int minutes;
    TimeLimitSource source;
  };
  const std::vector<Case> cases = {
      {"spec", kCpuSpec, std::nullopt, 30, TimeLimitSource::kSpec},
      {"spec wins over the site", kCpuSpec, std::chrono::minutes(240), 30, TimeLimitSource::kSpec},
      {"site default", no_limit, std::chrono::minutes(240), 240, TimeLimitSource::kSiteDefault},
      {"partition default", no_limit, std::nullopt, 0, TimeLimitSource::kPartitionDefault},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    catalog::SiteConfig site = testSite();
    site.default_time_limit = c.site_default;
    const auto req = assembleLaunch(parsed(c.spec), site, testRegistry(), kIdentity, kAttemptDir,
                                    kCheckpointDir);
    ASSERT_TRUE(req.has_value()) << req.error().front().describe();
    EXPECT_EQ(req->time_limit_source, c.source);
    ASSERT_EQ(req->components.size(), 1u);
    EXPECT_EQ(req->components[0].time_limit, std::chrono::minutes(c.minutes));
  }
}

TEST(Assembler, EveryComponentGetsTheSiteDefaultTimeLimit) {
  const std::string text = replaced(std::string(kGpuSpec), "    time_limit: 2h\n", "") +
                           "      - {name: second, gpu_series: a100, gpus_per_node: 2, cpus: 8, "
                           "memory_gb: 32}\n";
  catalog::SiteConfig site = testSite();
  site.default_time_limit = std::chrono::minutes(90);
  const auto req =
      assembleLaunch(parsed(text), site, testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  ASSERT_EQ(req->components.size(), 2u);
  for (const Component& c : req->components) EXPECT_EQ(c.time_limit, std::chrono::minutes(90));
  EXPECT_EQ(req->time_limit_source, TimeLimitSource::kSiteDefault);
}

TEST(Assembler, PoolPartitionAndScratchAreKept) {
  const std::string text =
      replaced(replaced(kGpuSpec, "memory_gb: 64", "memory_gb: 64\n        scratch_gb: 100"),
               "nodes: 2", "nodes: 2\n        partition: spot");
  const auto req = assembleLaunch(parsed(text), testSite(), testRegistry(), kIdentity, kAttemptDir,
                                  kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  EXPECT_EQ(req->components[0].partition, "spot");
  EXPECT_EQ(req->components[0].scratch_mb, 100 * 1024);
}

TEST(Assembler, HeterogeneousJobHasOneComponentPerPoolInOrder) {
  const std::string text = std::string(kGpuSpec) +
                           "      - {name: second, gpu_series: a100, gpus_per_node: 2, cpus: 8, "
                           "memory_gb: 32, partition: other}\n";
  const auto req = assembleLaunch(parsed(text), testSite(), testRegistry(), kIdentity, kAttemptDir,
                                  kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  ASSERT_EQ(req->components.size(), 2u);
  EXPECT_EQ(req->components[0].pool_name, "main");
  EXPECT_EQ(req->components[0].constraint, "h100&ib");
  EXPECT_EQ(req->components[1].pool_name, "second");
  EXPECT_EQ(req->components[1].constraint, "a100");
  EXPECT_EQ(req->components[1].gres_type, "");
  EXPECT_EQ(req->components[1].partition, "other");
  EXPECT_EQ(req->components[1].nodes, 1);
}

TEST(Assembler, ApptainerSiteTakesSifRuntimes) {
  catalog::SiteConfig site = testSite();
  site.container_runtime = catalog::ContainerRuntime::kApptainer;
  const std::string text = asLlamaFactory(kGpuSpec, "lf-sif");
  const auto req =
      assembleLaunch(parsed(text), site, testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(req.has_value()) << req.error().front().describe();
  EXPECT_EQ(req->artifact.format, catalog::ArtifactFormat::kSif);
  EXPECT_EQ(req->container_runtime, catalog::ContainerRuntime::kApptainer);
  EXPECT_EQ(req->framework, "llamafactory/sft");
}

TEST(Assembler, ReportsEveryViolationAtOnce) {
  const std::string text =
      replaced(replaced(replaced(kGpuSpec, "kind: TrainingJob", "kind: Playground"),
                        "runtime_id: custom-torch", "image: nvcr.io/x:1"),
               "  resources:", "  data: {volumes: [{name: a}]}\n  resources:");
  std::string with_bad_series = replaced(text, "gpu_series: h100", "gpu_series: l40s");
  with_bad_series = replaced(with_bad_series, "gpus_per_node: 8", "gpus_per_node: 4");
  const auto req = assembleLaunch(parsed(with_bad_series), testSite(), testRegistry(), kIdentity,
                                  kAttemptDir, kCheckpointDir);
  ASSERT_FALSE(req.has_value());
  std::vector<std::string> codes;
  for (const Error& e : req.error()) codes.push_back(e.code);
  EXPECT_THAT(codes, ::testing::UnorderedElementsAre(
                         "launch.kind_not_supported", "launch.volumes_not_supported",
                         "launch.image_not_supported", "launch.runtime_id_required",
                         "launch.gpu_series_without_constraint"));
}

TEST(Assembler, PrepareDoesNotReadTheArtifactWhenAssemblyFails) {
  catalog::ArtifactVerifier verifier;
  const auto req =
      prepareLaunch(parsed(replaced(kGpuSpec, "gpu_series: h100", "gpu_series: v100")), testSite(),
                    testRegistry(), kIdentity, kAttemptDir, kCheckpointDir, verifier);
  ASSERT_FALSE(req.has_value());
  EXPECT_EQ(req.error()[0].code, "launch.unknown_gpu_series");
  EXPECT_EQ(verifier.fullReads(), 0);
}

TEST(Assembler, UnknownNamesListWhatTheSiteHasAndTheClosest) {
  const auto series =
      assembleLaunch(parsed(replaced(kGpuSpec, "gpu_series: h100", "gpu_series: h10")), testSite(),
                     testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_FALSE(series.has_value());
  EXPECT_EQ(series.error()[0].code, "launch.unknown_gpu_series");
  EXPECT_EQ(series.error()[0].message,
            "'h10' is not a GPU series of this site; this site has: h100, a100, l40s; did you "
            "mean 'h100'?");
  const auto runtime = assembleLaunch(
      parsed(replaced(kGpuSpec, "runtime_id: custom-torch", "runtime_id: custom-troch")),
      testSite(), testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_FALSE(runtime.has_value());
  EXPECT_EQ(runtime.error()[0].code, "launch.unknown_runtime");
  EXPECT_EQ(runtime.error()[0].message,
            "'custom-troch' is not in the runtime registry; this site has: custom-torch, "
            "custom-py, lf, lf-sif, torch-base; did you mean 'custom-torch'?");
}

TEST(Assembler, APartitionTheSiteDoesNotListIsRefusedOnlyWhenItListsSome) {
  const std::string spec =
      replaced(kGpuSpec, "        nodes: 2\n", "        nodes: 2\n        partition: gpu-larg\n");
  // A site that lists no partitions leaves the name to Slurm.
  const auto unlisted = assembleLaunch(parsed(spec), testSite(), testRegistry(), kIdentity,
                                       kAttemptDir, kCheckpointDir);
  ASSERT_TRUE(unlisted.has_value()) << unlisted.error().front().describe();
  EXPECT_EQ(unlisted->components[0].partition, "gpu-larg");

  catalog::SiteConfig site = testSite();
  site.partitions.allowed = std::vector<std::string>{"gpu-large", "debug"};
  const auto refused =
      assembleLaunch(parsed(spec), site, testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
  ASSERT_FALSE(refused.has_value());
  ASSERT_EQ(refused.error().size(), 1u);
  EXPECT_EQ(refused.error()[0].code, "launch.unknown_partition");
  EXPECT_EQ(refused.error()[0].field, "spec.resources.pools[0].partition");
  EXPECT_EQ(refused.error()[0].message,
            "'gpu-larg' is not a partition this site offers; this site has: gpu-part, cpu-part, "
            "gpu-large, debug; did you mean 'gpu-large'?");
  for (const char* name : {"gpu-large", "cpu-part"}) {  // listed, or a default
    const auto ok = assembleLaunch(parsed(replaced(spec, "gpu-larg\n", std::string(name) + "\n")),
                                   site, testRegistry(), kIdentity, kAttemptDir, kCheckpointDir);
    EXPECT_TRUE(ok.has_value()) << name;
  }
}

TEST(Assembler, EveryExampleJobAssemblesAgainstTheExampleSite) {
  const std::filesystem::path examples = test::sourceDir() / "examples";
  const auto site = catalog::loadSiteConfigFile((examples / "site.yaml").string());
  ASSERT_TRUE(site.has_value()) << site.error().front().describe();
  const auto registry = catalog::loadRuntimeRegistryFile(*site->runtime_registry_file);
  ASSERT_TRUE(registry.has_value()) << registry.error().front().describe();
  int seen = 0;
  for (const auto& file : test::fixtureFiles(examples / "jobs")) {
    SCOPED_TRACE(file.string());
    const auto spec = spec::loadJobSpecFile(file.string());
    ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
    const auto req =
        assembleLaunch(*spec, *site, *registry, kIdentity, kAttemptDir, kCheckpointDir);
    ASSERT_TRUE(req.has_value()) << req.error().front().describe();
    EXPECT_EQ(req->components.size(), spec->resources.pools.size());
    ++seen;
  }
  EXPECT_GE(seen, 4);
}

}  // namespace
}  // namespace tuneplane::launch
