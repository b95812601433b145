#include "spec/names.h"

#include <gtest/gtest.h>

namespace tuneplane::spec {
namespace {

using std::chrono::milliseconds;

TEST(DnsLabel, AcceptsAndRefuses) {
  EXPECT_TRUE(isDnsLabel("a"));
  EXPECT_TRUE(isDnsLabel("train-0"));
  EXPECT_TRUE(isDnsLabel("123"));
  EXPECT_TRUE(isDnsLabel(std::string(63, 'a')));
  EXPECT_FALSE(isDnsLabel(std::string(64, 'a')));
  EXPECT_FALSE(isDnsLabel(""));
  EXPECT_FALSE(isDnsLabel("-a"));
  EXPECT_FALSE(isDnsLabel("a-"));
  EXPECT_FALSE(isDnsLabel("A"));
  EXPECT_FALSE(isDnsLabel("a_b"));
  EXPECT_FALSE(isDnsLabel("a.b"));
}

TEST(LabelKey, AcceptsAndRefuses) {
  EXPECT_TRUE(isLabelKey("team"));
  EXPECT_TRUE(isLabelKey("app.kubernetes.io/name"));
  EXPECT_TRUE(isLabelKey("Tier_2.x"));
  EXPECT_FALSE(isLabelKey(""));
  EXPECT_FALSE(isLabelKey("/name"));
  EXPECT_FALSE(isLabelKey("a b"));
  EXPECT_FALSE(isLabelKey("-a"));
  EXPECT_FALSE(isLabelKey("Upper.Prefix/name"));
  EXPECT_FALSE(isLabelKey(std::string(64, 'a')));
}

TEST(EnvName, AcceptsAndRefuses) {
  EXPECT_TRUE(isEnvName("PATH"));
  EXPECT_TRUE(isEnvName("_x1"));
  EXPECT_FALSE(isEnvName("1X"));
  EXPECT_FALSE(isEnvName("A-B"));
  EXPECT_FALSE(isEnvName(""));
  EXPECT_TRUE(isReservedEnvName("TUNEPLANE_JOB_ID"));
  EXPECT_TRUE(isReservedEnvName("SLURM_JOB_ID"));
  EXPECT_TRUE(isReservedEnvName("tp_srun"));  // the batch script's own
  EXPECT_FALSE(isReservedEnvName("SLURMX"));
  EXPECT_FALSE(isReservedEnvName("TP_X"));
}

TEST(Duration, ParsesUnitsAndCombinations) {
  EXPECT_EQ(parseDuration("90m"), milliseconds(90 * 60'000));
  EXPECT_EQ(parseDuration("2h"), milliseconds(2 * 3'600'000));
  EXPECT_EQ(parseDuration("1d"), milliseconds(86'400'000));
  EXPECT_EQ(parseDuration("1h30m"), milliseconds(90 * 60'000));
  EXPECT_EQ(parseDuration("1d2h3m4s5ms"), milliseconds(86'400'000 + 7'200'000 + 180'000 + 4'005));
  EXPECT_EQ(parseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(parseDuration("0m"), milliseconds(0));
}

TEST(Duration, RefusesMalformed) {
  for (const char* bad : {"", "90", "m", "1x", "30m1h", "1h1h", "1.5h", "-1h", " 1h", "1h ",
                          "99999999999999999999d", "4000d"}) {
    EXPECT_EQ(parseDuration(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace tuneplane::spec
