// Retries that learn: which nodes each component keeps out (node_exclusion.h), from a table.
#include "pipeline/node_exclusion.h"

#include <gtest/gtest.h>

namespace tuneplane::pipeline {
namespace {

slurm::NodeInfo node(const std::string& name, const std::string& partition,
                     std::vector<std::string> features = {}) {
  slurm::NodeInfo n;
  n.name = name;
  n.partitions = {partition};
  n.features = std::move(features);
  return n;
}

launch::Component component(const std::string& pool, const std::string& partition, int nodes,
                            std::optional<std::string> constraint = std::nullopt) {
  launch::Component c;
  c.pool_name = pool;
  c.partition = partition;
  c.nodes = nodes;
  c.constraint = std::move(constraint);
  return c;
}

TEST(NodeExclusion, EachComponentKeepsOutWhatItCouldGetWhileItStillFits) {
  const std::vector<slurm::NodeInfo> cluster = {
      node("gpu1", "gpu", {"h100"}), node("gpu2", "gpu", {"h100"}), node("gpu3", "gpu", {"a100"}),
      node("cpu1", "cpu"), node("cpu2", "cpu")};
  const std::map<std::string, std::string> avoid = {{"gpu1", "NODE_FAIL in attempt 1"},
                                                    {"cpu1", "NODE_FAIL in attempt 1"}};
  struct Row {
    const char* name;
    launch::Component c;
    std::vector<std::string> excluded;
    std::string note;  // a part of the component's note; "" for none
  };
  const std::vector<Row> rows = {
      {"fits without it",
       component("train", "gpu", 1, "h100"),
       {"gpu1"},
       "pool train excludes gpu1 (gpu1: NODE_FAIL in attempt 1)"},
      {"would not fit: keeps it",
       component("train", "gpu", 2, "h100"),
       {},
       "pool train keeps gpu1"},
      {"another series: nothing to exclude", component("eval", "gpu", 1, "a100"), {}, ""},
      {"a CPU pool", component("main", "cpu", 1), {"cpu1"}, "pool main excludes cpu1"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    launch::LaunchRequest r;
    r.components = {row.c};
    const auto notes = applyExclusions(r, avoid, cluster);
    EXPECT_EQ(r.components[0].excluded_nodes, row.excluded);
    if (row.note.empty()) {
      EXPECT_TRUE(notes.empty()) << notes.front();
    } else {
      ASSERT_EQ(notes.size(), 1u);
      EXPECT_NE(notes[0].find(row.note), std::string::npos) << notes[0];
    }
  }
}

TEST(NodeExclusion, WithoutSlurmsNodeListNothingIsExcludedAndTheNoteSaysWhy) {
  launch::LaunchRequest r;
  r.components = {component("main", "cpu", 1)};
  const auto notes = applyExclusions(r, {{"cpu1", "NODE_FAIL in attempt 1"}}, std::nullopt);
  EXPECT_TRUE(r.components[0].excluded_nodes.empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("could not be read"), std::string::npos) << notes[0];
  EXPECT_TRUE(applyExclusions(r, {}, std::nullopt).empty());  // nothing to avoid: no note
}

}  // namespace
}  // namespace tuneplane::pipeline
