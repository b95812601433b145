// The short fault campaign (issue 21) in `make test`: a few fixed seeds, each a regression
// for what an earlier campaign found, and one random seed (TUNEPLANE_CAMPAIGN_SEED replays
// any seed through FaultCampaign.Seed). Each run starts the real simulator and the real
// `tuneplane serve`, plays its schedule, stops the faults and checks every invariant
// (invariants.h); a failure prints the seed, its schedule, each violation and the command
// that replays it. The long campaign is bench/fault_campaign.cc (`make campaign`).
#include <cstdlib>
#include <iostream>
#include <random>

#include <gtest/gtest.h>

#include "campaign/campaign_run.h"

namespace tuneplane::campaign {
namespace {

// Sized so the four runs take about a minute on 2 cores. Under AddressSanitizer every
// process is several times slower: fewer steps, every fault kind and check the same.
#if defined(__SANITIZE_ADDRESS__)
constexpr ScheduleSize kSize{6, 8};
#else
constexpr ScheduleSize kSize{10, 14};
#endif

void runSeed(uint64_t seed) {
  const CampaignOutcome outcome = runCampaign({seed, kSize, true});
  std::cout << summarize(outcome) << std::endl;
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  ASSERT_TRUE(outcome.started) << "the simulator or serve did not start";
  // Every job of the schedule was accepted, and one more per duplicated submit.
  const auto duplicates = outcome.by_fault.find(describe(Fault::kDuplicateSubmit));
  EXPECT_EQ(outcome.verdict.jobs,
            kSize.jobs + (duplicates == outcome.by_fault.end() ? 0 : duplicates->second));
  EXPECT_EQ(outcome.verdict.lost, 0);
  EXPECT_EQ(outcome.verdict.run_twice, 0);
  EXPECT_TRUE(outcome.verdict.violations.empty())
      << outcome.verdict.violations.size()
      << " violations (above); replay: " << replayCommand(seed);
  EXPECT_GT(outcome.faults_injected, 0);
}

class FaultCampaignFixed : public ::testing::TestWithParam<uint64_t> {};

TEST_P(FaultCampaignFixed, Seed) {
  runSeed(GetParam());
}

INSTANTIATE_TEST_SUITE_P(FaultCampaign, FaultCampaignFixed,
                         ::testing::Values(uint64_t{21}, uint64_t{1021}, uint64_t{777}));

// A random seed each run (printed), or TUNEPLANE_CAMPAIGN_SEED's.
TEST(FaultCampaign, Seed) {
  uint64_t seed = (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  if (const char* given = std::getenv("TUNEPLANE_CAMPAIGN_SEED"))
    seed = std::strtoull(given, nullptr, 10);
  runSeed(seed);
}

}  // namespace
}  // namespace tuneplane::campaign
