// Node GRES strings as slurmrestd reports them.
#include "doctor/gres.h"

#include <gtest/gtest.h>

namespace tuneplane::doctor {
namespace {

TEST(GresTest, ParsesSlurmsForms) {
  struct Row {
    const char* text;
    std::vector<GresEntry> entries;
  };
  const Row rows[] = {
      {"", {}},
      {"(null)", {}},
      {"gpu:h100:8", {{"gpu", "h100", 8}}},
      {"gpu:h100:8(S:0-1)", {{"gpu", "h100", 8}}},
      {"gpu:a100:4(S:0,1),nvme:1", {{"gpu", "a100", 4}, {"nvme", "", 1}}},
      {"gpu:2", {{"gpu", "", 2}}},
      {"gpu:h100", {{"gpu", "h100", 1}}},
      {"gpu", {{"gpu", "", 1}}},
      {"gres/gpu:l40s:4", {{"gpu", "l40s", 4}}},
      {"bandwidth:lustre:4G", {{"bandwidth", "lustre", int64_t{4} << 30}}},
      {"gpu:h100:8,gpu:a100:2", {{"gpu", "h100", 8}, {"gpu", "a100", 2}}},
      {",gpu:1", {{"gpu", "", 1}}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.text);
    EXPECT_EQ(parseGres(row.text), row.entries);
  }
}

TEST(GresTest, CountsGpusOfAType) {
  const auto gres = parseGres("gpu:h100:8(S:0-1),gpu:a100:2,nvme:3");
  EXPECT_EQ(gpusOfType(gres, "h100"), 8);
  EXPECT_EQ(gpusOfType(gres, "a100"), 2);
  EXPECT_EQ(gpusOfType(gres, "l40s"), 0);
  EXPECT_EQ(gpusOfType(gres, ""), 10);  // no type asked: every GPU
  EXPECT_EQ(gpusOfType(parseGres("nvme:3"), ""), 0);
}

}  // namespace
}  // namespace tuneplane::doctor
