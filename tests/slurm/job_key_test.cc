// Job keys (job_key.h) from tables: their forms, how each addressing puts them in a path, and
// the confirmation of an answer by numeric id — the rule that keeps TunePlane from acting on
// a job that took over a purged job's id.
#include "slurm/job_key.h"

#include <gtest/gtest.h>

namespace tuneplane::slurm {
namespace {

constexpr const char* kToken = "tp-0123456789abcdef0123456789abcdef";

JobRecord record(uint64_t id, std::string sluid, int64_t submitted, std::string comment = kToken,
                 std::vector<std::string> state = {"RUNNING"}) {
  JobRecord r;
  r.job_id = id;
  r.sluid = std::move(sluid);
  r.submit_time = NoValNumber{true, false, submitted};
  r.comment = std::move(comment);
  r.job_state = std::move(state);
  return r;
}

TEST(JobKey, ParsesAndFormatsEveryForm) {
  struct Row {
    const char* text;
    JobKey key;
  };
  const std::vector<Row> rows = {
      {"sCC1M8VPKSJX00", {"sCC1M8VPKSJX00", 0, 0, "", false}},
      {"scc1m8vpksjx00", {"scc1m8vpksjx00", 0, 0, "", false}},
      {"sFK1M94Y5HJ700@17", {"sFK1M94Y5HJ700", 17, 0, "", true}},
      {"17@1796535430", {"", 17, 1796535430, "", true}},
      {"17@1796535430/tp-0123456789abcdef0123456789abcdef", {"", 17, 1796535430, kToken, true}},
      {"17", {"", 17, 0, "", false}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.text);
    auto parsed = parseJobKey(row.text);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, row.key);
    EXPECT_EQ(formatJobKey(*parsed), row.text);
  }
}

TEST(JobKey, RefusesWhatIsNoKey) {
  for (const char* text :
       {"", "0", "abc", "sNOTASLUID", "sUUUUUUUUUUUUU", "s0@0", "@17", "sFK1M94Y5HJ700@",
        "sFK1M94Y5HJ700@x", "17@", "17@-5", "17@1/not-a-token", "17@1/tp-short", "10+1", "-3"}) {
    EXPECT_FALSE(parseJobKey(text).has_value()) << text;
  }
}

TEST(JobKey, EachAddressingKeysARecordItsWay) {
  const JobRecord with = record(17, "sFK1M94Y5HJ700", 1796535430);
  const JobRecord without = record(17, "", 1796535430);
  const JobRecord foreign = record(18, "", 1796535431, "someone's comment");
  EXPECT_EQ(jobKeyOf(JobAddressing::kBySluid, with), "sFK1M94Y5HJ700");
  EXPECT_EQ(jobKeyOf(JobAddressing::kByNumericId, with), "sFK1M94Y5HJ700@17");
  EXPECT_EQ(jobKeyOf(JobAddressing::kBySluid, without), std::string("17@1796535430/") + kToken);
  EXPECT_EQ(jobKeyOf(JobAddressing::kByNumericId, without), std::string("17@1796535430/") + kToken);
  EXPECT_EQ(jobKeyOf(JobAddressing::kByNumericId, foreign), "18@1796535431");
  EXPECT_TRUE(isFollowedByNumericId("sFK1M94Y5HJ700@17"));
  EXPECT_TRUE(isFollowedByNumericId("17@1796535430"));
  EXPECT_FALSE(isFollowedByNumericId("sFK1M94Y5HJ700"));
  EXPECT_FALSE(isFollowedByNumericId("17"));
}

TEST(JobKey, AnswersKeepTheFormTheyWereAskedIn) {
  const JobRecord r = record(17, "sFK1M94Y5HJ700", 1796535430);
  // A job followed by numeric id keeps that form on a version that takes SLUIDs (after an
  // upgrade), and one followed by SLUID keeps its SLUID on one that does not (a downgrade).
  EXPECT_EQ(jobKeyLike(*parseJobKey("sFK1M94Y5HJ700@17"), JobAddressing::kBySluid, r),
            "sFK1M94Y5HJ700@17");
  EXPECT_EQ(jobKeyLike(*parseJobKey("sFK1M94Y5HJ700"), JobAddressing::kByNumericId, r),
            "sFK1M94Y5HJ700");
  // A receipt's bare id: the version's own form.
  EXPECT_EQ(jobKeyLike(*parseJobKey("17"), JobAddressing::kByNumericId, r), "sFK1M94Y5HJ700@17");
  EXPECT_EQ(jobKeyLike(*parseJobKey("17"), JobAddressing::kBySluid, r), "sFK1M94Y5HJ700");
}

TEST(JobKey, PathsAndWhetherTheAnswerNeedsConfirming) {
  struct Row {
    const char* key;
    JobAddressing addressing;
    std::optional<std::string> path;
    bool confirm;
  };
  const std::vector<Row> rows = {
      {"sFK1M94Y5HJ700", JobAddressing::kBySluid, "sFK1M94Y5HJ700", false},
      {"sFK1M94Y5HJ700", JobAddressing::kByNumericId, std::nullopt, false},  // the listing
      {"sFK1M94Y5HJ700@17", JobAddressing::kBySluid, "sFK1M94Y5HJ700", false},
      {"sFK1M94Y5HJ700@17", JobAddressing::kByNumericId, "17", true},
      {"17@1796535430", JobAddressing::kBySluid, "17", true},
      {"17@1796535430", JobAddressing::kByNumericId, "17", true},
      {"17", JobAddressing::kBySluid, "17", false},
      {"17", JobAddressing::kByNumericId, "17", false},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.key) +
                 (row.addressing == JobAddressing::kBySluid ? " by SLUID" : " by id"));
    const JobKey key = *parseJobKey(row.key);
    EXPECT_EQ(pathIdFor(row.addressing, key), row.path);
    EXPECT_EQ(needsConfirmation(row.addressing, key), row.confirm);
  }
}

TEST(ConfirmJob, OnlyTheJobTheKeyNamesIsTheSame) {
  const JobKey by_sluid = *parseJobKey("sFK1M94Y5HJ700@17");
  const JobKey by_time = *parseJobKey(std::string("17@1796535430/") + kToken);
  struct Row {
    const char* what;
    JobKey key;
    std::vector<JobRecord> answer;
    Confirmation verdict;
  };
  const std::vector<Row> rows = {
      {"same SLUID", by_sluid, {record(17, "sFK1M94Y5HJ700", 1796535430)}, Confirmation::kSame},
      {"same SLUID, other case", by_sluid, {record(17, "sfk1m94y5hj700", 1)}, Confirmation::kSame},
      {"het leader answers for both",
       by_sluid,
       {record(17, "sFK1M94Y5HJ700", 1), record(18, "sFK1M94Y5HJ800", 1)},
       Confirmation::kSame},
      {"id reused by another job",
       by_sluid,
       {record(17, "sFK1M94YC1GA00", 1796999999)},
       Confirmation::kGone},
      {"requeued under a new SLUID",
       by_sluid,
       {record(17, "sFK1M94YBMVR00", 1796535430)},
       Confirmation::kGone},
      {"answer without the id",
       by_sluid,
       {record(18, "sFK1M94Y5HJ700", 1)},
       Confirmation::kUnproven},
      {"record without a SLUID", by_sluid, {record(17, "", 1796535430)}, Confirmation::kUnproven},
      {"same submit time and token", by_time, {record(17, "", 1796535430)}, Confirmation::kSame},
      {"another submit time", by_time, {record(17, "", 1796535999)}, Confirmation::kGone},
      {"same time, comment changed",
       by_time,
       {record(17, "", 1796535430, "edited")},
       Confirmation::kUnproven},
      {"no submit time",
       by_time,
       {[] {
         JobRecord r = record(17, "", 0);
         r.submit_time = NoValNumber{};
         return r;
       }()},
       Confirmation::kUnproven},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    const Confirmed c = confirmJob(row.key, row.answer);
    EXPECT_EQ(c.verdict, row.verdict) << c.why;
    EXPECT_EQ(c.why.empty(), row.verdict == Confirmation::kSame) << c.why;
  }
}

TEST(MayStillRun, OnlyAJobThatWaitsRunsOrIsSuspended) {
  EXPECT_TRUE(mayStillRun(record(1, "", 1, kToken, {"PENDING"})));
  EXPECT_TRUE(mayStillRun(record(1, "", 1, kToken, {"PENDING", "COMPLETING"})));  // a requeue
  EXPECT_TRUE(mayStillRun(record(1, "", 1, kToken, {"RUNNING"})));
  EXPECT_TRUE(mayStillRun(record(1, "", 1, kToken, {"SUSPENDED"})));
  EXPECT_TRUE(mayStillRun(record(1, "", 1, kToken, {"SOMETHING_NEW"})));  // not known: sent
  EXPECT_FALSE(mayStillRun(record(1, "", 1, kToken, {"COMPLETED"})));
  EXPECT_FALSE(mayStillRun(record(1, "", 1, kToken, {"CANCELLED", "COMPLETING"})));
  EXPECT_FALSE(mayStillRun(record(1, "", 1, kToken, {"FAILED"})));
}

}  // namespace
}  // namespace tuneplane::slurm
