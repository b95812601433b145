#include "common/human.h"

#include <gtest/gtest.h>

namespace tuneplane {
namespace {

TEST(HumanTest, Durations) {
  EXPECT_EQ(formatDuration(-5), "0s");
  EXPECT_EQ(formatDuration(0), "0s");
  EXPECT_EQ(formatDuration(45), "45s");
  EXPECT_EQ(formatDuration(725), "12m 5s");
  EXPECT_EQ(formatDuration(3600), "1h");
  EXPECT_EQ(formatDuration(3 * 3600 + 12 * 60 + 9), "3h 12m");
  EXPECT_EQ(formatDuration(2 * 86400 + 4 * 3600), "2d 4h");
  EXPECT_EQ(formatDuration(86400 + 59), "1d");
}

TEST(HumanTest, Bytes) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(uint64_t{2} << 30), "2.0 GiB");
}

TEST(HumanTest, UtcTimes) {
  EXPECT_EQ(formatUtc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(formatUtc(1796226016), "2026-12-02T15:40:16Z");
}

}  // namespace
}  // namespace tuneplane
