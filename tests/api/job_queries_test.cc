// The /v1/jobs query parsers (api/job_queries.h), as tables: parameters in, the store query
// or the refusal out.
#include "api/job_queries.h"

#include <gtest/gtest.h>

namespace tuneplane::api {
namespace {

const Principal kAlice{"alice", false};
const Principal kAdmin{"root", true};

TEST(ParseBoundedInt, AcceptsOnlyWholeDecimalsInRange) {
  struct Row {
    std::string text;
    std::optional<int> want;
  };
  const Row rows[] = {{"1", 1},
                      {"1000", 1000},
                      {"0", std::nullopt},
                      {"1001", std::nullopt},
                      {"", std::nullopt},
                      {"+1", std::nullopt},
                      {"1x", std::nullopt},
                      {" 1", std::nullopt},
                      {"-1", std::nullopt},
                      {"99999999999", std::nullopt}};
  for (const auto& row : rows) {
    EXPECT_EQ(parseBoundedInt(row.text, 1, 1000), row.want) << "'" << row.text << "'";
  }
}

TEST(ParseJobListQuery, ReadsEveryParameter) {
  auto query = parseJobListQuery({{"phase", "Running"},
                                  {"name", "train"},
                                  {"label", "team=nlp=x"},
                                  {"limit", "7"},
                                  {"continue", "tok"}},
                                 kAlice);
  ASSERT_TRUE(query);
  EXPECT_EQ(query->phase, phase::JobPhase::kRunning);
  EXPECT_EQ(query->name, "train");
  ASSERT_TRUE(query->label);
  EXPECT_EQ(query->label->first, "team");
  EXPECT_EQ(query->label->second, "nlp=x");
  EXPECT_EQ(query->limit, 7);
  EXPECT_EQ(query->continue_token, "tok");
  EXPECT_EQ(query->owner, "alice");  // a user's list is their own
}

TEST(ParseJobListQuery, DefaultsWhenEmpty) {
  auto query = parseJobListQuery({}, kAlice);
  ASSERT_TRUE(query);
  EXPECT_FALSE(query->phase);
  EXPECT_FALSE(query->name);
  EXPECT_FALSE(query->label);
  EXPECT_EQ(query->limit, 100);
  EXPECT_EQ(query->continue_token, "");
}

TEST(ParseJobListQuery, Owner) {
  struct Row {
    Principal who;
    std::string owner;
    std::optional<std::string> want_owner;  // nullopt: every owner
    int want_status;                        // 0: accepted
  };
  const Row rows[] = {
      {kAlice, "", "alice", 0},           {kAlice, "alice", "alice", 0},
      {kAlice, "bob", std::nullopt, 403}, {kAdmin, "", std::nullopt, 0},
      {kAdmin, "bob", "bob", 0},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.who.user + " asks for owner '" + row.owner + "'");
    QueryParams params;
    if (!row.owner.empty()) params.emplace("owner", row.owner);
    auto query = parseJobListQuery(params, row.who);
    if (row.want_status == 0) {
      ASSERT_TRUE(query);
      EXPECT_EQ(query->owner, row.want_owner);
    } else {
      ASSERT_FALSE(query);
      EXPECT_EQ(query.error().status, row.want_status);
      ASSERT_EQ(query.error().errors.size(), 1u);
      EXPECT_EQ(query.error().errors[0].code, "auth.forbidden");
    }
  }
}

TEST(ParseJobListQuery, EveryBadParameterIsOneErrorOfA400) {
  auto query = parseJobListQuery({{"phase", "Sleeping"}, {"label", "=x"}, {"limit", "0"}}, kAlice);
  ASSERT_FALSE(query);
  EXPECT_EQ(query.error().status, 400);
  ASSERT_EQ(query.error().errors.size(), 3u);
  EXPECT_EQ(query.error().errors[0].field, "phase");
  EXPECT_EQ(query.error().errors[1].field, "label");
  EXPECT_EQ(query.error().errors[2].field, "limit");
  for (const auto& e : query.error().errors) EXPECT_EQ(e.code, "api.invalid_parameter");
}

TEST(ParseJobListQuery, ForbiddenOwnerWinsOverBadParameters) {
  auto query = parseJobListQuery({{"limit", "0"}, {"owner", "bob"}}, kAlice);
  ASSERT_FALSE(query);
  EXPECT_EQ(query.error().status, 403);
}

TEST(ParseJobListQuery, TheFirstOfARepeatedParameterCounts) {
  auto query = parseJobListQuery({{"limit", "5"}, {"limit", "x"}}, kAlice);
  ASSERT_TRUE(query);
  EXPECT_EQ(query->limit, 5);
}

TEST(ParseLogQuery, Table) {
  struct Row {
    QueryParams params;
    bool ok;
    attempt::LogStream stream;
    bool attempt_given;
    std::optional<int> attempt_number;
    std::string component;
  };
  using attempt::LogStream;
  const Row rows[] = {
      {{}, true, LogStream::kStdout, false, std::nullopt, ""},
      {{{"stream", "stdout"}}, true, LogStream::kStdout, false, std::nullopt, ""},
      {{{"stream", "stderr"}}, true, LogStream::kStderr, false, std::nullopt, ""},
      {{{"stream", ""}}, true, LogStream::kStdout, false, std::nullopt, ""},
      {{{"stream", "both"}}, false, LogStream::kStdout, false, std::nullopt, ""},
      {{{"attempt", "2"}}, true, LogStream::kStdout, true, 2, ""},
      {{{"attempt", "0"}}, true, LogStream::kStdout, true, std::nullopt, ""},
      {{{"attempt", "x"}}, true, LogStream::kStdout, true, std::nullopt, ""},
      {{{"component", "workers"}}, true, LogStream::kStdout, false, std::nullopt, "workers"},
  };
  for (const auto& row : rows) {
    auto query = parseLogQuery(row.params);
    ASSERT_EQ(static_cast<bool>(query), row.ok);
    if (!row.ok) {
      EXPECT_EQ(query.error().status, 400);
      ASSERT_EQ(query.error().errors.size(), 1u);
      EXPECT_EQ(query.error().errors[0].field, "stream");
      continue;
    }
    EXPECT_EQ(query->stream, row.stream);
    EXPECT_EQ(query->attempt_given, row.attempt_given);
    EXPECT_EQ(query->attempt_number, row.attempt_number);
    EXPECT_EQ(query->component, row.component);
  }
}

}  // namespace
}  // namespace tuneplane::api
