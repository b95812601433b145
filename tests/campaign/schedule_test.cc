// The campaign's schedule is the seed's alone (schedule.h): the same seed gives the same
// steps, another seed others, with the asked numbers of jobs and faults.
#include <gtest/gtest.h>

#include <set>

#include "campaign/schedule.h"

namespace tuneplane::campaign {
namespace {

TEST(CampaignSchedule, TheSameSeedGivesTheSameScheduleAnotherSeedAnother) {
  const ScheduleSize size{40, 80};
  EXPECT_EQ(describe(makeSchedule(42, size)), describe(makeSchedule(42, size)));
  EXPECT_NE(describe(makeSchedule(42, size)), describe(makeSchedule(43, size)));
}

TEST(CampaignSchedule, HasTheAskedJobsAndFaultsAndStartsWithAJob) {
  const std::vector<Step> steps = makeSchedule(7, {12, 30});
  ASSERT_EQ(steps.size(), 42u);
  EXPECT_FALSE(steps.front().is_fault);
  int faults = 0;
  std::set<int> kinds;
  for (const Step& s : steps) {
    faults += s.is_fault;
    if (s.is_fault) kinds.insert(static_cast<int>(s.fault));
    EXPECT_GE(s.pause_ms, 0);
  }
  EXPECT_EQ(faults, 30);
  EXPECT_GT(kinds.size(), 6u);  // mixed, not one kind
}

TEST(CampaignSchedule, OverManySeedsEveryFaultAndJobKindIsDrawn) {
  std::set<int> faults, jobs;
  bool cancelled = false;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    for (const Step& s : makeSchedule(seed, {10, 14})) {
      if (s.is_fault) {
        faults.insert(static_cast<int>(s.fault));
      } else {
        jobs.insert(static_cast<int>(s.job));
        cancelled = cancelled || s.cancel_after_ms >= 0;
      }
    }
  }
  EXPECT_EQ(faults.size(), static_cast<size_t>(kFaultKinds));
  EXPECT_EQ(jobs.size(), 4u);
  EXPECT_TRUE(cancelled);
}

// A dropped submit answer is a close or a TCP reset, both in one campaign; the variant comes
// from the step's unused status draw, so adding resets left every seed's schedule as it was.
TEST(CampaignSchedule, DroppedSubmitAnswersAreClosesAndResetsBoth) {
  int closes = 0, resets = 0;
  for (const Step& s : makeSchedule(7, {40, 400})) {
    if (!s.is_fault || s.fault != Fault::kDropSubmit) continue;
    (s.reset ? resets : closes) += 1;
    EXPECT_EQ(s.reset, s.status == 503);
    EXPECT_STREQ(describeStrike(s), s.reset ? "submit connection reset" : "submit answer dropped");
  }
  EXPECT_GT(closes, 0);
  EXPECT_GT(resets, 0);
}

}  // namespace
}  // namespace tuneplane::campaign
