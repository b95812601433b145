// Stored values this build cannot read are reported as "store.corrupt" naming the table and
// column — never guessed into a phase — and the state list encoding round-trips.
#include "store/record_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/sqlite_connection.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

TEST(RecordRowsTest, StateListsRoundTrip) {
  const std::vector<std::vector<std::string>> lists = {
      {}, {"PENDING"}, {"COMPLETED", "COMPLETING", "STAGE_OUT"}, {"with \"quote\"", "ü", ""}};
  for (const auto& list : lists) {
    auto back = decodeState(encodeState(list));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, list);
  }
}

TEST(RecordRowsTest, AStateThatIsNotAListOfStringsIsCorrupt) {
  for (const char* text : {"", "RUNNING", "{}", "[1]", "[\"A\",null]", "[\"A\"", "\"A\""}) {
    auto state = decodeState(text);
    ASSERT_FALSE(state) << text;
    EXPECT_EQ(state.error().code, "store.corrupt");
    EXPECT_EQ(state.error().field, "components.state");
  }
}

TEST(RecordRowsTest, SlurmIdsSurviveTheSignedColumnBitForBit) {
  for (uint64_t id : {uint64_t{0}, uint64_t{4294967295u}, uint64_t{1} << 63, ~uint64_t{0}}) {
    EXPECT_EQ(fromStored(toStored(id)), id);
  }
}

// Rows written by something else: today's store reports them instead of guessing.
TEST(RecordRowsTest, UnknownStoredStringsAreReportedWithTheirColumn) {
  tuneplane::testing::TempDir dir;
  const std::string path = dir.file("odd.db");
  {
    auto store = openOrDie(path);
    ASSERT_NE(store, nullptr);
    for (const char* id : {"phase-00000001", "cause-00000001", "state-00000001"}) {
      const JobRecord job = sampleJob(id);
      ASSERT_TRUE(store->commit(Change{job, {sampleAttempt(id, 1)}, {}}));
    }
  }
  {
    auto c = SqliteConnection::open(path, SQLITE_OPEN_READWRITE, 1000);
    ASSERT_TRUE(c);
    ASSERT_TRUE(
        (*c)->exec("UPDATE jobs SET phase = 'Paused' WHERE id = 'phase-00000001';"
                   "UPDATE attempts SET phase = 'Failed', cause = 'cosmic_ray' "
                   "WHERE job_id = 'cause-00000001';"
                   "UPDATE components SET state = 'RUNNING' WHERE job_id = 'state-00000001'"));
  }
  auto store = openOrDie(path);
  ASSERT_NE(store, nullptr);
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"phase-00000001", "jobs.phase"},
      {"cause-00000001", "attempts.cause"},
      {"state-00000001", "components.state"}};
  for (const auto& [id, field] : rows) {
    auto view = store->getJob(id);
    ASSERT_FALSE(view) << id;
    EXPECT_EQ(view.error().code, "store.corrupt");
    EXPECT_EQ(view.error().field, field);
  }
  auto active = store->activeJobs();
  ASSERT_FALSE(active);
  EXPECT_EQ(active.error().code, "store.corrupt");
  auto counts = store->countJobsByPhase();
  ASSERT_FALSE(counts);
  EXPECT_EQ(counts.error().field, "jobs.phase");
  auto ended = store->countEndedAttempts();
  ASSERT_FALSE(ended);
  EXPECT_EQ(ended.error().field, "attempts.cause");
}

}  // namespace
}  // namespace tuneplane::store
