// The structured log records: every field named, unknown numbers null, and a reason with
// quotes, backslashes and newlines kept exact on one line.
#include "server/event_log.h"

#include <gtest/gtest.h>

#include "api/json_views.h"

namespace tuneplane::server::testing {
namespace {

using nlohmann::json;

TEST(EventLog, ATransitionRecordSurvivesQuotesAndNewlinesOnOneLine) {
  const std::string reason = "Slurm said \"no\"\nthen C:\\path\t…";
  store::EventRecord e{42,        "train-0a1b2c3d", 2,      1'700'000'000'123,
                       "Running", "Failed",         reason, "reconciler"};
  const std::string line = dumpRecord(transitionRecord(e));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const json back = json::parse(line);
  EXPECT_EQ(back["event"], "transition");
  EXPECT_EQ(back["level"], "info");
  EXPECT_EQ(back["job"], "train-0a1b2c3d");
  EXPECT_EQ(back["attempt"], 2);
  EXPECT_EQ(back["from"], "Running");
  EXPECT_EQ(back["to"], "Failed");
  EXPECT_EQ(back["reason"], reason);
  EXPECT_EQ(back["actor"], "reconciler");
  EXPECT_EQ(back["time"], "2023-11-14T22:13:20.123Z");
}

TEST(EventLog, TimeLevelAndEventComeFirst) {
  const std::string line =
      dumpRecord(transitionRecord({0, "j-00000001", 1, 1, "A", "B", "r", "x"}));
  EXPECT_EQ(
      line.rfind(R"({"time":"1970-01-01T00:00:00.001Z","level":"info","event":"transition",)", 0),
      0u)
      << line;
}

TEST(EventLog, ACreationHasNoFromAndAJobEventNoAttempt) {
  store::EventRecord e{0, "j-00000001", 0, 1, "", "Pending", "submitted by ann", "ann"};
  const LogRecord record = transitionRecord(e);
  EXPECT_TRUE(record["from"].is_null());
  EXPECT_TRUE(record["attempt"].is_null());
  EXPECT_EQ(record["msg"], "job j-00000001: new -> Pending");
}

TEST(EventLog, ASlurmErrorRecordNamesEveryPart) {
  slurm::SlurmError e = slurm::makeSlurmError(slurm::kErrRejected, "submit", "slurmrestd refused",
                                              slurm::TransportClass::kRejected);
  e.http_status = 422;
  e.slurm_error_number = 2014;
  e.slurm_error = "Requested node configuration is not available";
  e.attempts = 1;
  const LogRecord record = slurmErrorRecord("submit", e, 1'700'000'000'000);
  EXPECT_EQ(record["event"], "slurm_error");
  EXPECT_EQ(record["level"], "warning");
  EXPECT_EQ(record["operation"], "submit");
  EXPECT_EQ(record["code"], "slurm.rejected");
  EXPECT_EQ(record["http_status"], 422);
  EXPECT_EQ(record["slurm_error_code"], 2014);
  EXPECT_EQ(record["slurm_error"], "Requested node configuration is not available");
  EXPECT_TRUE(record["slurm_description"].is_null());
  EXPECT_EQ(record["transport"], "rejected");
  EXPECT_EQ(record["attempts"], 1);
}

TEST(EventLog, UnknownNumbersAreNull) {
  const slurm::SlurmError e = slurm::makeSlurmError(
      slurm::kErrNotSent, "get_job", "connection refused", slurm::TransportClass::kNotSent);
  const LogRecord record = slurmErrorRecord("get_job", e, 1);
  EXPECT_TRUE(record["http_status"].is_null());
  EXPECT_TRUE(record["slurm_error_code"].is_null());
  EXPECT_TRUE(record["attempts"].is_null());
  EXPECT_EQ(record["transport"], "not_sent");
}

TEST(EventLog, AnEmptySinkLogsNothingAndASinkGetsEachRecord) {
  FakeClock clock(5000);
  EventLog silent({}, clock);
  silent.transition({});  // no sink: nothing to call, nothing to crash
  std::vector<LogRecord> got;
  EventLog log([&](const LogRecord& r) { got.push_back(r); }, clock);
  log.slurmError("cancel", slurm::makeSlurmError(slurm::kErrJobNotFound, "cancel", "gone",
                                                 slurm::TransportClass::kRejected));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0]["operation"], "cancel");
  EXPECT_EQ(got[0]["time"], "1970-01-01T00:00:05.000Z");
}

}  // namespace
}  // namespace tuneplane::server::testing
