// siteinit::gpuSeries and draftSiteYaml over node layouts shaped like slurmrestd's answers:
// one series per (GRES type, GPUs per node, features), fail-closed for featureless GPU
// nodes, the partitions by where the nodes are, and a draft the site parser accepts.
#include "siteinit/site_draft.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "api/server_config.h"
#include "catalog/site_loader.h"

namespace tuneplane::siteinit {
namespace {

slurm::NodeInfo node(std::string name, std::vector<std::string> partitions,
                     std::vector<std::string> features, std::string gres) {
  slurm::NodeInfo n;
  n.name = std::move(name);
  n.partitions = std::move(partitions);
  n.features = std::move(features);
  n.gres = std::move(gres);
  return n;
}

slurm::PartitionInfo partition(std::string name) {
  slurm::PartitionInfo p;
  p.name = std::move(name);
  return p;
}

// Loaded as a file, as tuneplane loads it: the draft's runtime_registry_file is relative.
Checked<catalog::SiteConfig> parseDraft(const std::string& yaml) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tp-site-draft-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << yaml;
  auto site = catalog::loadSiteConfigFile(path.string());
  std::filesystem::remove(path);
  return site;
}

DraftInputs inputs() {
  DraftInputs in;
  in.slurm_url = "http://127.0.0.1:6820";
  in.token_file = "/etc/tuneplane/slurm.jwt";
  in.user = "tpuser";
  in.user_source = "the token's sun claim";
  in.staging_root = "/shared/tuneplane/attempts";
  in.runtime = "apptainer";
  return in;
}

TEST(SiteDraftTest, OneSeriesPerTypeCountAndFeatures) {
  const std::vector<slurm::NodeInfo> nodes = {
      node("gpu1", {"gpu"}, {"h100", "ib"}, "gpu:h100:8(S:0-1)"),
      node("gpu2", {"gpu"}, {"ib", "h100"}, "gpu:h100:8"),
      node("gpu3", {"gpu"}, {"h100"}, "gpu:h100:4"),
      node("gpu4", {"gpu"}, {}, "gpu:l40s:2,nvme:1"),
      node("cpu1", {"cpu"}, {"epyc"}, ""),
  };
  const auto series = gpuSeries(nodes);
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[0].name, "h100");
  EXPECT_EQ(series[0].gpus_per_node, 4);
  EXPECT_EQ(series[0].features, std::vector<std::string>{"h100"});
  EXPECT_EQ(series[1].name, "h100-2");
  EXPECT_EQ(series[1].gpus_per_node, 8);
  EXPECT_EQ(series[1].features, (std::vector<std::string>{"h100", "ib"}));
  EXPECT_EQ(series[1].nodes, (std::vector<std::string>{"gpu1", "gpu2"}));
  EXPECT_EQ(series[2].name, "l40s");
  EXPECT_TRUE(series[2].features.empty());
}

TEST(SiteDraftTest, DraftParsesAsASiteFileAndFeaturelessSeriesHasNoConstraint) {
  const std::vector<slurm::NodeInfo> nodes = {
      node("g1", {"gpu"}, {"a100"}, "gpu:a100:4"),
      node("g2", {"gpu"}, {}, "gpu:l40s:2"),
      node("c1", {"batch"}, {}, ""),
      node("c2", {"batch", "gpu"}, {}, ""),
  };
  const std::string yaml = draftSiteYaml(inputs(), {partition("gpu"), partition("batch")}, nodes);
  auto site = parseDraft(yaml);
  ASSERT_TRUE(site) << yaml;
  EXPECT_EQ(site->partitions.gpu, "gpu");
  EXPECT_EQ(site->partitions.cpu, "batch");  // both CPU nodes are in it, one in gpu
  // Every partition Slurm listed, so a pool naming another is refused at validation.
  EXPECT_EQ(site->partitions.allowed, (std::vector<std::string>{"gpu", "batch"}));
  EXPECT_TRUE(site->partitions.accepts("batch"));
  EXPECT_FALSE(site->partitions.accepts("nosuch"));
  EXPECT_EQ(site->slurm.user, "tpuser");
  ASSERT_EQ(site->gpu_series.size(), 2u);
  EXPECT_EQ(site->gpu_series[0].slurm_constraint, "a100");
  EXPECT_EQ(site->gpu_series[0].gres_type, "a100");
  EXPECT_EQ(site->gpu_series[1].name, "l40s");
  EXPECT_FALSE(site->gpu_series[1].slurm_constraint.has_value());
  EXPECT_NE(yaml.find("refuses every pool of this series until one is set"), std::string::npos);
  EXPECT_NE(yaml.find("# --staging-root"), std::string::npos);
}

TEST(SiteDraftTest, WithoutGpuNodesOrFlagsEveryGuessSaysSo) {
  DraftInputs in = inputs();
  in.staging_root.reset();
  in.runtime.reset();
  const std::string yaml = draftSiteYaml(in, {partition("batch")}, {node("c1", {"batch"}, {}, "")});
  auto site = parseDraft(yaml);
  ASSERT_TRUE(site) << yaml;
  EXPECT_TRUE(site->gpu_series.empty());
  EXPECT_EQ(site->partitions.gpu, "batch");
  EXPECT_NE(yaml.find("no node reports gpu GRES"), std::string::npos);
  EXPECT_NE(yaml.find("container_runtime: apptainer  # a guess"), std::string::npos);
  EXPECT_NE(yaml.find("a placeholder (--staging-root)"), std::string::npos);
}

TEST(SiteDraftTest, PerUserDraftsTheIdentityAndSaysWhatTheTokenCanDo) {
  DraftInputs in = inputs();
  const auto shared =
      parseDraft(draftSiteYaml(in, {partition("cpu")}, {node("c1", {"cpu"}, {}, "")}));
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->slurm.identity, catalog::IdentityMode::kShared);
  in.per_user = true;
  const std::string yaml = draftSiteYaml(in, {partition("cpu")}, {node("c1", {"cpu"}, {}, "")});
  const auto site = parseDraft(yaml);
  ASSERT_TRUE(site) << yaml;
  EXPECT_EQ(site->slurm.identity, catalog::IdentityMode::kPerUser);
  EXPECT_NE(yaml.find("can act as ANY user"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("users/<name>"), std::string::npos) << yaml;
}

TEST(SiteDraftTest, ValuesAreQuotedSoNoNodeNameBreaksTheYaml) {
  DraftInputs in = inputs();
  in.staging_root = "/shared/tune plane #1";
  const std::string yaml =
      draftSiteYaml(in, {partition("gpu")}, {node("g1", {"gpu"}, {"x"}, "gpu:t:1")});
  auto site = parseDraft(yaml);
  ASSERT_TRUE(site) << yaml;
  EXPECT_EQ(site->staging_root, "/shared/tune plane #1");  // a bare # would start a comment
}

}  // namespace
}  // namespace tuneplane::siteinit

namespace tuneplane::siteinit {
namespace {

TEST(SiteDraftServerTest, TheDraftHasAServerSectionAndAnEmptyRegistryThatLoad) {
  DraftInputs in = inputs();
  in.listen = "127.0.0.1:9090";
  in.state_dir = "/var/lib/tp";
  const std::string draft = draftSiteYaml(in, {partition("cpu")}, {node("c1", {"cpu"}, {}, "")});
  auto server = api::parseServerConfig(draft, "/etc/tuneplane");
  ASSERT_TRUE(server) << server.error().front().describe() << "\n" << draft;
  EXPECT_TRUE(server->present);
  EXPECT_EQ(server->http.listen, (api::ListenAddress{"127.0.0.1", 9090}));
  EXPECT_EQ(server->db, "/var/lib/tp/tuneplane.db");
  EXPECT_TRUE(server->tokens.empty());
  auto site = parseDraft(draft);
  ASSERT_TRUE(site) << site.error().front().describe();
  EXPECT_EQ(site->slurm.job_environment.at("PATH"), "/usr/local/bin:/usr/bin:/bin");
  auto registry = catalog::parseRuntimeRegistry(draftRegistryYaml(in));
  ASSERT_TRUE(registry) << registry.error().front().describe();
  EXPECT_TRUE(registry->runtimes.empty());
  EXPECT_NE(draftRegistryYaml(in).find("#       path: /shared/tuneplane/runtimes/python-3.11.sif"),
            std::string::npos)
      << draftRegistryYaml(in);
}

}  // namespace
}  // namespace tuneplane::siteinit
