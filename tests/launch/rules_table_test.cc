// The backend's rule table: each launch rule and each artifact rule, one row each, mapped to
// its stable error code and field. Every row starts from a spec that assembles and verifies
// cleanly and changes one thing, so it must produce exactly that one error.
// (Structural spec rules have their own table in tests/spec; site and registry rules in
// tests/catalog.)
#include <gtest/gtest.h>

#include <functional>

#include "../catalog/temp_dir.h"
#include "catalog/artifact_verifier.h"
#include "fixtures.h"
#include "launch/assembler.h"

namespace tuneplane::launch {
namespace {

using namespace tuneplane::launch::testing;
using tuneplane::testing::TempDir;

struct RuleRow {
  const char* rule;
  std::string spec;
  const char* code;
  const char* field;
  std::function<void(catalog::SiteConfig&, catalog::RuntimeRegistry&)> tweak = nullptr;
  std::string attempt_dir = kAttemptDir;
  std::string checkpoint_dir = kCheckpointDir;
};

std::vector<RuleRow> rows() {
  const std::string g = kGpuSpec;
  const std::string c = kCpuSpec;
  auto gr = [&](const std::string& from, const std::string& to) { return replaced(g, from, to); };
  auto cr = [&](const std::string& from, const std::string& to) { return replaced(c, from, to); };
  const std::string lf_gpu = asLlamaFactory(g);
  return {
      // Refused on the Slurm backend.
      {"Playground", gr("kind: TrainingJob", "kind: Playground"), "launch.kind_not_supported",
       "kind"},
      {"ModelDeployment", gr("kind: TrainingJob", "kind: ModelDeployment"),
       "launch.kind_not_supported", "kind"},
      {"any data volume", gr("  resources:", "  data:\n    volumes: [{name: ds}]\n  resources:"),
       "launch.volumes_not_supported", "spec.data.volumes[0]"},
      {"an OCI image",
       gr("runtime_id: custom-torch", "runtime_id: custom-torch\n    image: pytorch:2"),
       "launch.image_not_supported", "spec.framework.image"},
      // The runtime artifact.
      {"no runtime id", gr("    runtime_id: custom-torch\n", ""), "launch.runtime_id_required",
       "spec.framework.runtime_id"},
      {"unknown runtime id", gr("runtime_id: custom-torch", "runtime_id: custom-nope"),
       "launch.unknown_runtime", "spec.framework.runtime_id"},
      {"sif runtime on a pyxis site", replaced(lf_gpu, "runtime_id: lf", "runtime_id: lf-sif"),
       "launch.runtime_format_mismatch", "spec.framework.runtime_id"},
      {"sqsh runtime on an apptainer site", lf_gpu, "launch.runtime_format_mismatch",
       "spec.framework.runtime_id",
       [](catalog::SiteConfig& s, catalog::RuntimeRegistry&) {
         s.container_runtime = catalog::ContainerRuntime::kApptainer;
       }},
      {"framework not offered by the runtime", asLlamaFactory(g, "custom-torch"),
       "launch.framework_not_in_runtime", "spec.framework.runtime_id"},
      {"custom framework on a non-custom runtime without it",
       gr("runtime_id: custom-torch", "runtime_id: lf"), "launch.framework_not_in_runtime",
       "spec.framework.runtime_id"},
      // GPU pools.
      {"GPUs without a series", gr("        gpu_series: h100\n", ""), "launch.gpu_series_required",
       "spec.resources.pools[0].gpu_series"},
      {"unknown GPU series", gr("gpu_series: h100", "gpu_series: v100"),
       "launch.unknown_gpu_series", "spec.resources.pools[0].gpu_series"},
      {"series without slurm_constraint (fail-closed)",
       replaced(gr("gpu_series: h100", "gpu_series: l40s"), "gpus_per_node: 8", "gpus_per_node: 4"),
       "launch.gpu_series_without_constraint", "spec.resources.pools[0].gpu_series"},
      {"more GPUs than a node has", gr("gpus_per_node: 8", "gpus_per_node: 9"),
       "launch.too_many_gpus_per_node", "spec.resources.pools[0].gpus_per_node"},
      {"GPU and CPU pools mixed",
       g + "      - {name: cpu, gpus_per_node: 0, cpus: 2, memory_gb: 4}\n",
       "launch.mixed_gpu_and_cpu_pools", "spec.resources.pools"},
      {"memory beyond MiB range", gr("memory_gb: 64", "memory_gb: 3000000"), "launch.too_large",
       "spec.resources.pools[0].memory_gb"},
      // CPU-only custom jobs.
      {"CPU-only job not custom/custom", cr("task: custom", "task: sft"),
       "launch.cpu_only_requires_custom_framework", "spec.framework"},
      {"CPU-only job with two pools", c + "      - {name: second, cpus: 1, memory_gb: 1}\n",
       "launch.cpu_only_requires_one_pool", "spec.resources.pools"},
      {"CPU-only job on two nodes", cr("gpus_per_node: 0", "gpus_per_node: 0\n        nodes: 2"),
       "launch.cpu_only_multi_node", "spec.resources.pools[0].nodes"},
      {"CPU-only job with scratch",
       cr("gpus_per_node: 0", "gpus_per_node: 0\n        scratch_gb: 10"),
       "launch.cpu_only_scratch", "spec.resources.pools[0].scratch_gb"},
      {"CPU-only job on a non-custom runtime",
       cr("runtime_id: custom-py", "runtime_id: torch-base"),
       "launch.cpu_only_requires_custom_runtime", "spec.framework.runtime_id"},
      {"CPU-only pool naming a GPU series",
       cr("gpus_per_node: 0", "gpus_per_node: 0\n        gpu_series: h100"),
       "launch.cpu_only_gpu_series", "spec.resources.pools[0].gpu_series"},
      // The attempt directory goes into the mount list.
      {"attempt dir with a mount separator", g, "launch.invalid_attempt_dir", "", nullptr,
       "/shared/attempts/a:b"},
      // So does the job's checkpoint directory.
      {"checkpoint dir with a mount separator", g, "launch.invalid_checkpoint_dir", "", nullptr,
       kAttemptDir, "/shared/attempts/job-0001/check,points"},
      // Artifact rules (prepareLaunch): checked only after assembly passed.
      {"artifact file missing", g, "artifact.missing", "spec.framework.runtime_id",
       [](catalog::SiteConfig&, catalog::RuntimeRegistry& r) { r.runtimes[0].path += ".gone"; }},
      {"artifact hash differs from the registry", g, "artifact.sha256_mismatch",
       "spec.framework.runtime_id",
       [](catalog::SiteConfig&, catalog::RuntimeRegistry& r) {
         r.runtimes[0].sha256 = std::string(64, '0');
       }},
      {"artifact is a directory", g, "artifact.not_regular_file", "spec.framework.runtime_id",
       [](catalog::SiteConfig&, catalog::RuntimeRegistry& r) {
         r.runtimes[0].path = r.runtimes[0].path.substr(0, r.runtimes[0].path.rfind('/'));
       }},
  };
}

// Writes every registry artifact into `dir` and records its real hash.
catalog::RuntimeRegistry realRegistry(const TempDir& dir, catalog::ArtifactVerifier& verifier) {
  catalog::RuntimeRegistry registry = testRegistry(dir.path());
  for (catalog::Runtime& r : registry.runtimes) {
    dir.write(r.path.substr(dir.path().size() + 1), "image bytes of " + r.id);
    r.sha256 = verifier.sha256Of(r.path).value();
  }
  return registry;
}

TEST(RulesTable, BothBaseSpecsPassEveryRule) {
  TempDir dir;
  catalog::ArtifactVerifier verifier;
  const catalog::RuntimeRegistry registry = realRegistry(dir, verifier);
  for (const std::string& text :
       {std::string(kGpuSpec), std::string(kCpuSpec), asLlamaFactory(kGpuSpec)}) {
    const auto req = prepareLaunch(parsed(text), testSite(), registry, kIdentity, kAttemptDir,
                                   kCheckpointDir, verifier);
    EXPECT_TRUE(req.has_value()) << req.error().front().describe();
  }
}

TEST(RulesTable, EachRuleHasItsCodeAndField) {
  TempDir dir;
  catalog::ArtifactVerifier verifier;
  const catalog::RuntimeRegistry base_registry = realRegistry(dir, verifier);
  for (const RuleRow& row : rows()) {
    SCOPED_TRACE(row.rule);
    catalog::SiteConfig site = testSite();
    catalog::RuntimeRegistry registry = base_registry;
    if (row.tweak) row.tweak(site, registry);
    const auto req = prepareLaunch(parsed(row.spec), site, registry, kIdentity, row.attempt_dir,
                                   row.checkpoint_dir, verifier);
    ASSERT_FALSE(req.has_value());
    std::string all;
    for (const Error& e : req.error()) all += e.describe() + "\n";
    ASSERT_EQ(req.error().size(), 1u) << all;
    EXPECT_EQ(req.error()[0].code, row.code) << req.error()[0].describe();
    EXPECT_EQ(req.error()[0].field, row.field) << req.error()[0].describe();
    EXPECT_FALSE(req.error()[0].message.empty());
  }
}

// judgeSpec (the one-pass check that also takes partly parsed specs) judges the same rules
// as assembly; the attempt dir and the artifact are left to assembleLaunch/prepareLaunch.
TEST(RulesTable, JudgeSpecFindsEachAssemblyRuleToo) {
  for (const RuleRow& row : rows()) {
    SCOPED_TRACE(row.rule);
    catalog::SiteConfig site = testSite();
    catalog::RuntimeRegistry registry = testRegistry();
    if (row.tweak) row.tweak(site, registry);
    const Errors errors = judgeSpec(spec::parsePartialJobSpec(row.spec), site, registry);
    const std::string code = row.code;
    if (!code.starts_with("launch.") || code == "launch.invalid_attempt_dir" ||
        code == "launch.invalid_checkpoint_dir") {
      EXPECT_TRUE(errors.empty()) << errors.front().describe();
      continue;
    }
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].code, row.code);
    EXPECT_EQ(errors[0].field, row.field);
  }
}

}  // namespace
}  // namespace tuneplane::launch
