// The API's objects: times, nulls for unset values, the list's summary.
#include "api/json_views.h"

#include "api/json_text.h"

#include <gtest/gtest.h>

namespace tuneplane::api {
namespace {

TEST(JsonViewsTest, TimesAreRfc3339UtcWithMillisecondsOrNull) {
  EXPECT_EQ(timeJson(0), nlohmann::json());
  EXPECT_EQ(timeJson(1'796'101'658'123), "2026-12-01T05:07:38.123Z");
  EXPECT_EQ(timeJson(1'000), "1970-01-01T00:00:01.000Z");
  EXPECT_EQ(timeJson(951'782'400'000), "2000-02-29T00:00:00.000Z");  // a leap day
  EXPECT_EQ(timeJson(4'102'444'799'999), "2099-12-31T23:59:59.999Z");
  EXPECT_EQ(timeText(0), "");
  EXPECT_EQ(timeText(1'796'101'658'123), "2026-12-01T05:07:38.123Z");
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

// Every byte value, alone and among others: the direct writer escapes as nlohmann does.
TEST(JsonViewsTest, JsonTextEscapesEveryByteAsDumpDoes) {
  std::vector<std::string> texts = {"",
                                    "plain",
                                    "a\"b\\c/d",
                                    "line\nnext\r\t\b\f",
                                    std::string("nul\0in", 6),
                                    "\x7f",
                                    "caf\xc3\xa9",
                                    "\xe2\x82\xac\xf0\x9f\x98\x80",
                                    "bad \xff\xfe",
                                    "cut \xc3",
                                    "overlong \xc0\xaf"};
  for (int b = 0; b < 256; ++b) texts.push_back("x" + std::string(1, static_cast<char>(b)) + "y");
  for (const auto& text : texts) {
    std::string out;
    JsonText(out).string(text);
    EXPECT_EQ(out, dump(nlohmann::json(text))) << "for a string of " << text.size() << " bytes";
  }
}

TEST(JsonViewsTest, JsonTextNestsAndSeparatesAsDumpDoes) {
  std::string out;
  JsonText w(out);
  w.beginObject();
  w.key("a").beginArray().integer(-3).unsignedInteger(18'446'744'073'709'551'615u).null();
  w.beginObject().endObject().beginArray().endArray().boolean(true).boolean(false).endArray();
  w.key("b").beginObject().key("c").string("d").key("e").integer(0).endObject();
  w.endObject();
  const nlohmann::json expected = {
      {"a",
       {-3, 18'446'744'073'709'551'615u, nullptr, nlohmann::json::object(), nlohmann::json::array(),
        true, false}},
      {"b", {{"c", "d"}, {"e", 0}}}};
  EXPECT_EQ(out, dump(expected));
}

// jobJsonText is the answer of GET /v1/jobs/{id}: the same bytes as the tree jobJson
// builds, for a bare job, and for one with every field set, odd text and several attempts.
TEST(JsonViewsTest, JobJsonTextIsDumpOfJobJson) {
  store::JobView bare;
  bare.job.id = "hello-1a2b3c4d";

  store::JobView full;
  full.job.id = "train-0f0f0f0f";
  full.job.name = "train";
  full.job.owner = "alice";
  full.job.labels = {{"team", "nlp"}, {"Z", "upper"}, {"caf\xc3\xa9", "\"q\"\n"}};
  full.job.spec = "apiVersion: tuneplane.io/v1\nkind: TrainingJob\n\tcommand: [\"a\\b\"]\n\xff";
  full.job.phase = phase::JobPhase::kRetrying;
  full.job.reason = "node failure; retrying";
  full.job.created_ms = 1'796'101'658'123;
  full.job.updated_ms = 1'796'101'659'001;
  full.job.next_attempt_ms = 1'796'101'700'000;
  full.job.cancel_requested = true;
  full.job.cancel_requested_by = "root";
  for (int n = 1; n <= 2; ++n) {
    store::AttemptRecord a;
    a.job_id = full.job.id;
    a.number = n;
    a.phase = n == 1 ? phase::AttemptPhase::kFailed : phase::AttemptPhase::kSubmitUnknown;
    a.reason = n == 1 ? "NODE_FAIL" : "";
    a.cause = n == 1 ? phase::EndCause::kInfrastructure : phase::EndCause::kNone;
    a.submit_token = "tp-" + std::to_string(n);
    a.staging_dir = "/shared/jobs/train-0f0f0f0f/attempts/" + std::to_string(n);
    a.slurm_job_id = n == 1 ? 18'446'744'073'709'551'615u : 0;
    a.created_ms = 1'796'101'658'200;
    a.submitted_ms = n == 1 ? 1'796'101'658'300 : 0;
    a.ended_ms = n == 1 ? 1'796'101'658'400 : 0;
    a.lookups = 3 * n;
    a.abandoned_by = n == 2 ? "root" : "";
    a.abandon_reason = n == 2 ? "receipt lost for good" : "";
    if (n == 1) {
      a.components.push_back({0,
                              "main",
                              42,
                              "sCC1M8VPKSJX00",
                              {"FAILED", "NODE_FAIL"},
                              "NodeDown",
                              1,
                              9,
                              "gpu[1-2]",
                              1'796'101'658,
                              1'796'101'659});
      a.components.push_back({1, "aux", 43, "", {}, "None", std::nullopt, std::nullopt, "", 0, 0});
    }
    full.attempts.push_back(a);
  }

  for (const store::JobView* view : {&bare, &full}) {
    EXPECT_EQ(jobJsonText(*view), dump(jobJson(*view))) << view->job.id;
  }
  // With the step an attempt started from (read from its files by the route).
  const ResumeSteps steps = {{1, 1200}, {7, 3}};
  EXPECT_EQ(jobJsonText(full, {}, steps), dump(jobJson(full, {}, steps)));
  // With why it waits: from the queue (every member set), and from the store alone.
  JobWaiting from_queue{2,
                        1'796'101'660'500,
                        {{"main", "Priority", "gpu", 1'796'105'000'000, 3, 7},
                         {"aux", "Unheard\"Of", std::nullopt, 0, std::nullopt, std::nullopt}}};
  JobWaiting from_store{2, 0, {{"", "", std::nullopt, 0, std::nullopt, std::nullopt}}};
  for (const JobWaiting* waiting : {&from_queue, &from_store}) {
    EXPECT_EQ(jobJsonText(full, {}, steps, *waiting), dump(jobJson(full, {}, steps, *waiting)));
  }
  const nlohmann::json with = jobJson(full, {}, {}, from_queue);
  EXPECT_EQ(with["waiting"]["components"][0]["reason_text"],
            "jobs of higher priority are ahead of it in the partition's queue");
  EXPECT_EQ(with["waiting"]["components"][0]["estimated_start"], "2026-12-01T06:03:20.000Z");
  EXPECT_EQ(with["waiting"]["components"][1]["reason_text"], nullptr);  // not in the table
  EXPECT_EQ(jobJson(full)["waiting"], nullptr);
}

// resume_from_step: the step the attempt's framework said it started from; null when it did
// not say. Only the full view carries it: the list's summary reads no files.
TEST(JsonViewsTest, AnAttemptSaysTheStepItStartedFromWhenItsFrameworkSaid) {
  store::JobView view;
  view.job.id = "lora-sft-1a2b3c4d";
  for (int n = 1; n <= 3; ++n) {
    store::AttemptRecord a;
    a.number = n;
    view.attempts.push_back(a);
  }
  const auto job = nlohmann::json::parse(jobJsonText(view, {}, {{2, 0}, {3, 40}}));
  EXPECT_TRUE(job["attempts"][0]["resume_from_step"].is_null());
  EXPECT_EQ(job["attempts"][1]["resume_from_step"], 0);
  EXPECT_EQ(job["attempts"][2]["resume_from_step"], 40);
  EXPECT_FALSE(
      attemptJson(view.attempts[2], /*with_components=*/false, 40).contains("resume_from_step"));
}

// The console asks the server whether a phase has ended instead of keeping its own list.
TEST(JsonViewsTest, JobsAndAttemptsSayWhetherTheirPhaseIsTerminal) {
  store::JobView view;
  view.job.id = "hello-1a2b3c4d";
  view.job.phase = phase::JobPhase::kRetrying;
  store::AttemptRecord ended;
  ended.phase = phase::AttemptPhase::kFailed;
  view.attempts.push_back(ended);
  const auto job = nlohmann::json::parse(jobJsonText(view));
  EXPECT_EQ(job["terminal"], false);
  EXPECT_EQ(job["attempts"][0]["terminal"], true);
  for (phase::JobPhase p : {phase::JobPhase::kSucceeded, phase::JobPhase::kFailed,
                            phase::JobPhase::kCancelled, phase::JobPhase::kQueued}) {
    view.job.phase = p;
    EXPECT_EQ(jobSummaryJson(view.job)["terminal"], phase::isTerminal(p)) << phase::toString(p);
  }
}

}  // namespace
}  // namespace tuneplane::api
