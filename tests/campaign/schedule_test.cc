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
  EXPECT_EQ(faults.size(), static_cast<size_t>(kSingleServeFaultKinds));
  EXPECT_EQ(jobs.size(), 4u);
  EXPECT_TRUE(cancelled);
}

// Issue 47: half the node failures are preemptions with a grace time of 1-2 s, without
// changing which steps a seed draws (the same kinds, in the same order, as before).
TEST(CampaignSchedule, SomeNodeFailuresArePreemptionsWithAGraceTime) {
  int node_failures = 0, preemptions = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    for (const Step& s : makeSchedule(seed, {10, 14})) {
      if (!s.is_fault) continue;
      EXPECT_TRUE(!s.preempt || s.fault == Fault::kNodeFail);
      if (s.fault != Fault::kNodeFail) continue;
      s.preempt ? ++preemptions : ++node_failures;
      if (s.preempt) {
        EXPECT_GE(s.grace_s, 1);
        EXPECT_LE(s.grace_s, 2);
        EXPECT_STREQ(describeStrike(s), "running job PREEMPTED");
      }
    }
  }
  EXPECT_GT(preemptions, 0);
  EXPECT_GT(node_failures, 0);
}

TEST(CampaignSchedule, TheReplicaModeDrawsEveryKindAndTheSingleModeNoneOfIssue37s) {
  std::set<int> replica, single;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    for (const Step& s : makeSchedule(seed, {10, 20}, CampaignMode::kReplicasPostgres)) {
      if (s.is_fault) replica.insert(static_cast<int>(s.fault));
    }
    for (const Step& s : makeSchedule(seed, {10, 20}, CampaignMode::kSingleSqlite)) {
      if (s.is_fault) single.insert(static_cast<int>(s.fault));
    }
  }
  EXPECT_EQ(replica.size(), static_cast<size_t>(kFaultKinds));
  EXPECT_LT(*single.rbegin(), kSingleServeFaultKinds);
  EXPECT_NE(describe(makeSchedule(5, {10, 14}, CampaignMode::kReplicasPostgres)),
            describe(makeSchedule(5, {10, 14}, CampaignMode::kSingleSqlite)));
}

// Seed 21 (a fixed row of `make test`) as it was drawn before issue 37's kinds existed: the
// single-serve mode replays recorded seeds as they were.
TEST(CampaignSchedule, TheSingleServeModeKeepsTheSchedulesSeedsHadBeforeIssue37) {
  EXPECT_EQ(
      describe(makeSchedule(21, {10, 14})),
      "  1. +55 ms: short CPU job\n"
      "  2. +145 ms: FAULT 5xx burst (4 × 500)\n"
      "  3. +207 ms: FAULT running job ends NODE_FAIL (pick 2771355623)\n"
      "  4. +142 ms: FAULT slurmrestd restart\n"
      "  5. +50 ms: long CPU job (3 s)\n"
      "  6. +30 ms: FAULT running job purged from Slurm's memory once it ends (pick 311213817)\n"
      "  7. +35 ms: FAULT submit answer dropped\n"
      "  8. +58 ms: FAULT running job purged from Slurm's memory once it ends (pick 90026806)\n"
      "  9. +56 ms: het GPU job\n"
      "  10. +177 ms: FAULT user cancel whose DELETE times out (pick 1543579169)\n"
      "  11. +7 ms: long CPU job (3 s)\n"
      "  12. +11 ms: FAULT slurmrestd restart\n"
      "  13. +185 ms: FAULT every token expired\n"
      "  14. +131 ms: short CPU job\n"
      "  15. +183 ms: FAULT running job purged from Slurm's memory once it ends (pick 3626550385)\n"
      "  16. +37 ms: FAULT 5xx burst (1 × 503)\n"
      "  17. +35 ms: long CPU job (3 s), cancelled by its user after 542 ms\n"
      "  18. +147 ms: FAULT answers delayed past the client's timeout (2322 ms)\n"
      "  19. +80 ms: long CPU job (1 s)\n"
      "  20. +10 ms: FAULT submit connection reset\n"
      "  21. +200 ms: FAULT every token expired\n"
      "  22. +7 ms: short CPU job\n"
      "  23. +163 ms: het GPU job, cancelled by its user after 1441 ms\n"
      "  24. +242 ms: het GPU job\n");
}

TEST(CampaignSchedule, Issue37sFaultsCarryTheirWindows) {
  int seen = 0;
  for (const Step& s : makeSchedule(11, {10, 400}, CampaignMode::kReplicasPostgres)) {
    if (!s.is_fault) continue;
    if (s.fault == Fault::kDbStallWriter) {
      EXPECT_GE(s.hold_ms, 2000);
      EXPECT_LE(s.hold_ms, 18000);
      ++seen;
    }
    if (s.fault == Fault::kDbDelay || s.fault == Fault::kLyingReads) {
      EXPECT_GE(s.hold_ms, 2000);
      EXPECT_LE(s.hold_ms, s.fault == Fault::kDbDelay ? 6000 : 8000);
      EXPECT_GE(s.chunk_delay_ms, 20);
      EXPECT_LE(s.chunk_delay_ms, 250);
      ++seen;
    }
    if (s.fault == Fault::kDbCut) {
      EXPECT_EQ(s.reset, s.status == 503);
      EXPECT_STREQ(describeStrike(s),
                   s.reset ? "database connections reset" : "database connections cut");
    }
  }
  EXPECT_GT(seen, 10);
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
