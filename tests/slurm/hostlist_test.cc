// Slurm's host lists as node names (hostlist.h), from a table.
#include "slurm/hostlist.h"

#include <gtest/gtest.h>

namespace tuneplane::slurm {
namespace {

TEST(Hostlist, ExpandsWhatSlurmWrites) {
  struct Row {
    std::string list;
    std::vector<std::string> nodes;
  };
  const std::vector<Row> rows = {
      {"", {}},
      {"cpu1", {"cpu1"}},
      {"gpu[1-2]", {"gpu1", "gpu2"}},
      {"gpu[1-2],cpu1", {"gpu1", "gpu2", "cpu1"}},
      {"node[01-03,07]", {"node01", "node02", "node03", "node07"}},
      {"rack[1-2]-gpu", {"rack1-gpu", "rack2-gpu"}},
      {"a1,a1,a[1-1]", {"a1"}},    // each once
      {"odd[x-y]", {"odd[x-y]"}},  // not a range: kept as it is
      {"odd[3-1]", {"odd[3-1]"}},  // backwards: kept
      {"unclosed[1-2", {"unclosed[1-2"}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.list);
    EXPECT_EQ(expandHostlist(row.list), row.nodes);
  }
}

TEST(Hostlist, AHugeRangeIsCutAtTheBound) {
  const auto nodes = expandHostlist("n[0-99999999]");
  EXPECT_EQ(nodes.size(), kMaxHostlistNodes);
  EXPECT_EQ(nodes.front(), "n0");
}

}  // namespace
}  // namespace tuneplane::slurm
