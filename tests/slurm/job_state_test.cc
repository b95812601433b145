// JobState (job_state.h): a job_state list has a compact form exactly when Slurm itself could
// have sent it, and that form gives back the list's exact text.
#include "slurm/job_state.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tuneplane::slurm {
namespace {

using Names = std::vector<std::string>;

TEST(JobState, ListsSlurmSendsHaveACompactFormThatGivesThemBack) {
  struct Case {
    Names names;
    JobBaseState base;
    uint16_t flags;
  };
  const auto bit = [](JobStateFlag flag) { return static_cast<uint16_t>(flag); };
  const Case cases[] = {
      {{}, JobBaseState::kNone, 0},
      {{"PENDING"}, JobBaseState::kPending, 0},
      {{"RUNNING", "CONFIGURING"}, JobBaseState::kRunning, bit(JobStateFlag::kConfiguring)},
      {{"COMPLETED", "COMPLETING"}, JobBaseState::kCompleted, bit(JobStateFlag::kCompleting)},
      {{"FAILED", "COMPLETING"}, JobBaseState::kFailed, bit(JobStateFlag::kCompleting)},
      {{"COMPLETED", "STAGE_OUT"}, JobBaseState::kCompleted, bit(JobStateFlag::kStageOut)},
      {{"PENDING", "LAUNCH_FAILED", "REQUEUED", "EXPEDITING"},
       JobBaseState::kPending,
       static_cast<uint16_t>(bit(JobStateFlag::kLaunchFailed) | bit(JobStateFlag::kRequeued) |
                             bit(JobStateFlag::kExpediting))},
      {{"OUT_OF_MEMORY"}, JobBaseState::kOutOfMemory, 0},
      {{"BOOT_FAIL", "RESV_DEL_HOLD", "SIGNALING"},
       JobBaseState::kBootFail,
       static_cast<uint16_t>(bit(JobStateFlag::kResvDelHold) | bit(JobStateFlag::kSignaling))},
  };
  for (const Case& c : cases) {
    auto state = JobState::fromNames(c.names);
    ASSERT_TRUE(state.has_value()) << ::testing::PrintToString(c.names);
    EXPECT_EQ(state->base(), c.base);
    EXPECT_EQ(state->flags(), c.flags);
    EXPECT_EQ(state->names(), c.names);
    EXPECT_TRUE(state->sameNames(c.names));
  }
}

TEST(JobState, EveryBaseAndFlagNameRoundTrips) {
  for (int base = 1; base <= static_cast<int>(JobBaseState::kOutOfMemory); ++base) {
    const auto b = static_cast<JobBaseState>(base);
    for (int bit = 0; bit < 16; ++bit) {
      const auto flag = static_cast<JobStateFlag>(1 << bit);
      const Names names = {std::string(jobStateName(b)), std::string(jobStateName(flag))};
      auto state = JobState::fromNames(names);
      ASSERT_TRUE(state.has_value()) << names[0] << " " << names[1];
      EXPECT_EQ(state->base(), b);
      EXPECT_TRUE(state->has(flag));
      EXPECT_EQ(state->names(), names);
    }
  }
}

TEST(JobState, OtherListsHaveNoCompactForm) {
  const Names cases[] = {
      {"FUTURE_STATE"},                           // unknown base
      {"RUNNING", "FUTURE_FLAG"},                 // unknown flag
      {"COMPLETING"},                             // a flag without a base
      {"RUNNING", "PENDING"},                     // two bases
      {"COMPLETED", "STAGE_OUT", "COMPLETING"},   // flags out of Slurm's order
      {"COMPLETED", "COMPLETING", "COMPLETING"},  // a flag twice
      {"running"},                                // names are case-sensitive
      {"RUNNING "},                               // and exact
      {""},
      {"PENDINGX"},  // same slot as a known name, other text
  };
  for (const Names& names : cases) {
    EXPECT_FALSE(JobState::fromNames(names).has_value()) << ::testing::PrintToString(names);
    JobStateNames reader;
    for (const auto& name : names) reader.add(name);
    ASSERT_FALSE(reader.isCompact());
    EXPECT_EQ(reader.verbatim(), names) << "the names are kept as they came";
  }
}

TEST(JobState, SameNamesComparesWithoutBuildingTheList) {
  const JobState completing(JobBaseState::kCompleted,
                            static_cast<uint16_t>(JobStateFlag::kCompleting));
  EXPECT_TRUE(completing.sameNames({"COMPLETED", "COMPLETING"}));
  EXPECT_FALSE(completing.sameNames({"COMPLETED"}));
  EXPECT_FALSE(completing.sameNames({"COMPLETED", "COMPLETING", "STAGE_OUT"}));
  EXPECT_FALSE(completing.sameNames({"FAILED", "COMPLETING"}));
  EXPECT_TRUE(JobState().sameNames({}));
  EXPECT_FALSE(JobState().sameNames({"PENDING"}));
}

}  // namespace
}  // namespace tuneplane::slurm
