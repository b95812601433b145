#include "sim/cluster.h"

#include <gtest/gtest.h>

namespace tuneplane::sim {
namespace {

TEST(Hostlist, ExpandsRangesAndPlainNames) {
  EXPECT_EQ(expandHostlist("gpu[1-2],cpu1"), (std::vector<std::string>{"gpu1", "gpu2", "cpu1"}));
  EXPECT_EQ(expandHostlist("n[01-03,7]"), (std::vector<std::string>{"n01", "n02", "n03", "n7"}));
  EXPECT_EQ(expandHostlist("cpu1"), (std::vector<std::string>{"cpu1"}));
  EXPECT_TRUE(expandHostlist("").empty());
}

TEST(Hostlist, CompressesConsecutiveNumbers) {
  EXPECT_EQ(compressHostlist({"gpu1", "gpu2"}), "gpu[1-2]");
  EXPECT_EQ(compressHostlist({"gpu1"}), "gpu1");
  EXPECT_EQ(compressHostlist({"gpu1", "gpu2", "cpu1"}), "gpu[1-2],cpu1");
  EXPECT_EQ(compressHostlist({"n1", "n3", "n4"}), "n[1,3-4]");
  EXPECT_EQ(expandHostlist(compressHostlist({"a1", "a2", "a5", "b"})),
            (std::vector<std::string>{"a1", "a2", "a5", "b"}));
}

TEST(Cluster, DefaultIsTheTestCluster) {
  const ClusterConfig c = defaultCluster();
  EXPECT_EQ(c.name, "tp");
  ASSERT_NE(c.node("gpu1"), nullptr);
  EXPECT_EQ(c.node("gpu1")->gpus, 2);
  EXPECT_EQ(c.node("gpu1")->gpu_type, "h100");
  EXPECT_EQ(c.node("gpu2")->features, std::vector<std::string>{"a100"});
  EXPECT_EQ(c.node("cpu1")->gpus, 0);
  ASSERT_NE(c.defaultPartition(), nullptr);
  EXPECT_EQ(c.defaultPartition()->name, "cpu");
  EXPECT_EQ(c.partition("gpu")->nodes, (std::vector<std::string>{"gpu1", "gpu2"}));
}

TEST(Cluster, ParsesYaml) {
  auto c = parseCluster(R"(
name: lab
nodes:
  - {name: g1, cpus: 8, memory_mb: 8000, gpus: 4, gpu_type: l40s, features: [l40s]}
  - {name: g2, cpus: 8, gpus: 4, gpu_type: l40s, features: [l40s]}
partitions:
  - {name: gpu, nodes: "g[1-2]", default: true}
)");
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->name, "lab");
  EXPECT_EQ(c->partition("gpu")->nodes, (std::vector<std::string>{"g1", "g2"}));
  EXPECT_EQ(c->node("g1")->memory_mb, 8000);
  EXPECT_EQ(c->node("g2")->memory_mb, 4096);
}

TEST(Cluster, ParsesJson) {
  auto c = parseCluster(
      R"({"nodes": [{"name": "c1"}], "partitions": [{"name": "p", "nodes": ["c1"]}]})");
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->defaultPartition()->name, "p");
}

TEST(Cluster, RejectsUnknownNodeInPartition) {
  auto c = parseCluster("nodes: [{name: a}]\npartitions: [{name: p, nodes: [b]}]\n");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "sim.cluster");
}

}  // namespace
}  // namespace tuneplane::sim
