// JobStateList (job_state_list.h): 16-byte entries with nothing on the heap, and every entry's
// id and state text given back exactly as they came, the unusual ones included.
#include "slurm/job_state_list.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tuneplane::slurm {
namespace {

using Names = std::vector<std::string>;

static_assert(sizeof(JobStateEntry) == 16, "an entry stays small: 10,000 of them every poll");

TEST(JobStateList, GivesBackEveryIdAndStateAsItCame) {
  struct Case {
    std::string job_id;
    Names state;
    uint64_t numeric_id;
    std::optional<uint32_t> het_offset;
    bool compact_state;
  };
  const Case cases[] = {
      {"10", {"RUNNING"}, 10, std::nullopt, true},
      {"11+1", {"COMPLETED", "COMPLETING"}, 11, 1u, true},
      {"0", {}, 0, std::nullopt, true},
      {"12", {"FUTURE_STATE"}, 12, std::nullopt, false},
      {"010", {"PENDING"}, 10, std::nullopt, true},      // an id written unusually
      {"13+01", {"RUNNING", "PENDING"}, 13, 1u, false},  // both unusual
      {"18446744073709551615", {"FAILED"}, UINT64_MAX, std::nullopt, true},
      {"14+4294967295", {"COMPLETING", "COMPLETED"}, 14, UINT32_MAX, false},
  };
  JobStateList list;
  for (const Case& c : cases) ASSERT_TRUE(list.add(c.job_id, c.state).has_value()) << c.job_id;
  ASSERT_EQ(list.size(), std::size(cases));
  for (size_t i = 0; i < list.size(); ++i) {
    const Case& c = cases[i];
    EXPECT_EQ(list.jobId(i), c.job_id);
    EXPECT_EQ(list.stateNames(i), c.state) << c.job_id;
    EXPECT_TRUE(list.stateIs(i, c.state)) << c.job_id;
    EXPECT_FALSE(list.stateIs(i, {"SOMETHING_ELSE"})) << c.job_id;
    EXPECT_EQ(list[i].numericId(), c.numeric_id);
    EXPECT_EQ(list[i].hetOffset(), c.het_offset);
    EXPECT_EQ(list[i].hasCompactState(), c.compact_state) << c.job_id;
  }
  EXPECT_EQ(list[1].state().base(), JobBaseState::kCompleted);
  EXPECT_TRUE(list[1].state().has(JobStateFlag::kCompleting));
}

TEST(JobStateList, RefusesIdsThatAreNotJobIdsAndAppendsNothing) {
  JobStateList list;
  for (const char* bad : {"12x", "12+", "+1", "", "-3", "1+99999999999", "1+2+3"}) {
    auto added = list.add(bad, {"RUNNING"});
    ASSERT_FALSE(added.has_value()) << bad;
    EXPECT_EQ(added.error().code, "slurm.bad_response");
    EXPECT_EQ(added.error().field, "job_id");
    EXPECT_NE(added.error().message.find(bad), std::string::npos) << added.error().message;
  }
  EXPECT_TRUE(list.empty());
}

TEST(JobStateList, AppendKeepsTheVerbatimTextWithItsEntry) {
  JobStateList first;
  ASSERT_TRUE(first.add("1", {"FUTURE_STATE"}).has_value());
  ASSERT_TRUE(first.add("2", {"RUNNING"}).has_value());
  JobStateList second;
  ASSERT_TRUE(second.add("3", {"PENDING"}).has_value());
  ASSERT_TRUE(second.add("04", {"RUNNING", "FUTURE_FLAG"}).has_value());
  first.append(std::move(second));
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first.stateNames(0), Names{"FUTURE_STATE"});
  EXPECT_EQ(first.stateNames(1), Names{"RUNNING"});
  EXPECT_EQ(first.stateNames(2), Names{"PENDING"});
  EXPECT_EQ(first.jobId(3), "04");
  EXPECT_EQ(first.stateNames(3), (Names{"RUNNING", "FUTURE_FLAG"}));
  JobStateList same;
  for (const auto& [id, state] :
       std::vector<std::pair<std::string, Names>>{{"1", {"FUTURE_STATE"}},
                                                  {"2", {"RUNNING"}},
                                                  {"3", {"PENDING"}},
                                                  {"04", {"RUNNING", "FUTURE_FLAG"}}}) {
    ASSERT_TRUE(same.add(id, state).has_value());
  }
  EXPECT_TRUE(first == same);
}

}  // namespace
}  // namespace tuneplane::slurm
