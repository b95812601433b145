// Sluid: one job whatever the case Slurm or the store wrote it in; the text is kept as given.
#include "slurm/sluid.h"

#include <gtest/gtest.h>

#include <map>

namespace tuneplane::slurm {
namespace {

TEST(Sluid, EqualIgnoringCaseAndKeepsItsText) {
  const Sluid lower("scc1m8vpksjx00");
  const Sluid upper("SCC1M8VPKSJX00");
  EXPECT_EQ(lower, upper);
  EXPECT_EQ(lower.text(), "scc1m8vpksjx00");
  EXPECT_EQ(lower.key(), "SCC1M8VPKSJX00");
  EXPECT_FALSE(Sluid("sCC1M8VPKSJX00") == Sluid("sCC1M8VPKSJX01"));
  EXPECT_FALSE(Sluid("sCC1M8VPKSJX0") == Sluid("sCC1M8VPKSJX00"));
  EXPECT_TRUE(Sluid().empty());
}

TEST(Sluid, OneMapEntryPerJob) {
  std::map<Sluid, int> seen;
  ++seen[Sluid("sAB")];
  ++seen[Sluid("SaB")];
  ++seen[Sluid("sAC")];
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[Sluid("SAB")], 2);
}

}  // namespace
}  // namespace tuneplane::slurm
