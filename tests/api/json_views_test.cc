// The API's objects: times, nulls for unset values, the list's summary.
#include "api/json_views.h"

#include <gtest/gtest.h>

namespace tuneplane::api {
namespace {

TEST(JsonViewsTest, TimesAreRfc3339UtcWithMillisecondsOrNull) {
  EXPECT_EQ(timeJson(0), nlohmann::json());
  EXPECT_EQ(timeJson(1'796'101'658'123), "2026-12-01T05:07:38.123Z");
  EXPECT_EQ(timeJson(1'000), "1970-01-01T00:00:01.000Z");
}

TEST(JsonViewsTest, UnsetValuesAreNull) {
  store::JobView view;
  view.job.id = "hello-1a2b3c4d";
  view.job.created_ms = 1'000;
  store::AttemptRecord attempt;
  attempt.number = 1;
  attempt.components.push_back({});
  view.attempts.push_back(attempt);
  const nlohmann::json job = jobJson(view);
  EXPECT_TRUE(job["cancel_requested_by"].is_null());
  EXPECT_TRUE(job["next_attempt_at"].is_null());
  EXPECT_EQ(job["attempt_count"], 1);
  const nlohmann::json a = job["attempts"][0];
  EXPECT_TRUE(a["job_id"].is_null());
  EXPECT_TRUE(a["submitted"].is_null());
  EXPECT_TRUE(a["abandoned_by"].is_null());
  const nlohmann::json c = a["components"][0];
  EXPECT_TRUE(c["sluid"].is_null());
  EXPECT_TRUE(c["exit_code"].is_null());
  EXPECT_TRUE(c["end_time"].is_null());
}

TEST(JsonViewsTest, ErrorsKeepCodeFieldAndMessage) {
  EXPECT_EQ(errorsJson({{"a.b", "f", "m"}}),
            nlohmann::json::parse(R"({"errors":[{"code":"a.b","field":"f","message":"m"}]})"));
}

TEST(JsonViewsTest, InvalidUtf8IsReplacedWhenDumped) {
  EXPECT_EQ(dump(nlohmann::json("a\xff")), "\"a\xef\xbf\xbd\"");
}

}  // namespace
}  // namespace tuneplane::api
