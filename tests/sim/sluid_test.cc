#include "sim/sluid.h"

#include <gtest/gtest.h>

namespace tuneplane::sim {
namespace {

TEST(Sluid, RealSluidsDecodeToClusterTimeAndSequence) {
  // sCC1M8VPKSJX00 is job 2 of the real "tp" cluster (transcript 03).
  const auto v = parseSluid("sCC1M8VPKSJX00");
  ASSERT_TRUE(v);
  EXPECT_EQ(*v >> 52, 3168u);
  EXPECT_EQ((*v >> 10) & ((uint64_t{1} << 42) - 1), 1796226016861u);
  EXPECT_EQ(*v & 1023, 0u);
  EXPECT_EQ(formatSluid(*v), "sCC1M8VPKSJX00");
}

TEST(Sluid, LowerCaseIsAccepted) {
  EXPECT_EQ(parseSluid("scc1m8vpksjx00"), parseSluid("sCC1M8VPKSJX00"));
}

TEST(Sluid, MalformedAreRejectedLikeTheRealServer) {
  EXPECT_FALSE(parseSluid("sNOTASLUID"));      // too short
  EXPECT_FALSE(parseSluid("sUUUUUUUUUUUUU"));  // U is not Crockford
  EXPECT_FALSE(parseSluid("s0000000000000"));  // zero
  EXPECT_FALSE(parseSluid("sZZZZZZZZZZZZZ"));  // more than 64 bits
  EXPECT_FALSE(parseSluid("xCC1M8VPKSJX00"));
  EXPECT_TRUE(parseSluid("sCC1M8VPG9ZZZZ"));  // well-formed, unknown
}

TEST(Sluid, GeneratorIsStrictlyIncreasingWithinOneMillisecond) {
  SluidGenerator gen(3168);
  uint64_t prev = 0;
  for (int i = 0; i < 3000; ++i) {
    const uint64_t v = gen.next(1796226016861);
    EXPECT_GT(v, prev);
    EXPECT_EQ(v >> 52, 3168u);
    EXPECT_EQ(formatSluid(v).size(), 14u);
    EXPECT_EQ(parseSluid(formatSluid(v)), v);
    prev = v;
  }
}

TEST(Sluid, FormattedSluidsSortByTime) {
  SluidGenerator gen(3168);
  const std::string a = formatSluid(gen.next(1000));
  const std::string b = formatSluid(gen.next(2000));
  EXPECT_LT(a, b);
}

}  // namespace
}  // namespace tuneplane::sim
