// How `describe` shows a job's preemptions (issue 47), from the API's JSON as the server sends
// it: the count beside the attempts (none of them used one of retry.max_attempts), each
// preempted attempt's cause, and a running attempt in Slurm's grace time with the time Slurm
// ends it. Pure views (job_views.h).
#include <gtest/gtest.h>

#include "client/api_objects.h"
#include "client_cli/job_views.h"

namespace tuneplane::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kPreemptNow = 1'796'687'420'000;  // 2026-12-07T23:50:20Z

Json attemptJson(int number, const std::string& phase, const std::string& cause, Json component) {
  return {{"number", number},
          {"phase", phase},
          {"terminal", phase != "Running"},
          {"reason", phase == "Running" ? "running" : "the job was preempted"},
          {"cause", cause},
          {"components", Json::array({std::move(component)})}};
}

Json componentJson(const std::string& state, Json preempt_time, Json end_time) {
  return {{"index", 0},
          {"pool", "main"},
          {"state", Json::array({state})},
          {"reason", "None"},
          {"nodes", "cpu1"},
          {"start_time", "2026-12-07T23:50:13.000Z"},
          {"end_time", end_time},
          {"preempt_time", preempt_time}};
}

// One attempt, as a one-element array (a braced single element would be the element itself).
Json onlyAttempt(Json attempt) {
  Json list = Json::array();
  list.push_back(std::move(attempt));
  return list;
}

client::JobView jobOf(Json attempts, int preemptions) {
  Json job = {{"id", "train-1a2b3c4d"},     {"name", "train"},
              {"owner", "alice"},           {"phase", "Running"},
              {"reason", "running"},        {"attempt_count", attempts.size()},
              {"preemptions", preemptions}, {"attempts", std::move(attempts)}};
  auto view = client::jobFromJson(job);
  EXPECT_TRUE(view.has_value());
  return *view;
}

TEST(PreemptionViewsTest, DescribeCountsPreemptionsApartFromMaxAttempts) {
  const Json preempted =
      componentJson("PREEMPTED", "2026-12-07T23:40:00.000Z", "2026-12-07T23:40:30.000Z");
  const client::JobView job =
      jobOf({attemptJson(1, "Failed", "preempted", preempted),
             attemptJson(2, "Failed", "preempted", preempted),
             attemptJson(3, "Running", "none", componentJson("RUNNING", nullptr, nullptr))},
            2);
  EXPECT_EQ(job.preemptions, 2);
  const std::string page = describeJob(job, {}, {kPreemptNow, false});
  EXPECT_NE(page.find("Attempts:      3 (2 preempted: not counted against retry.max_attempts)\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("  Cause:         preempted\n"), std::string::npos) << page;
  // An ended preemption is history, not a grace time.
  EXPECT_EQ(page.find("being preempted"), std::string::npos) << page;
}

TEST(PreemptionViewsTest, DescribeSaysARunningAttemptIsInItsGraceTime) {
  const client::JobView job =
      jobOf(onlyAttempt(attemptJson(
                1, "Running", "none",
                componentJson("RUNNING", "2026-12-07T23:50:16.000Z", "2026-12-07T23:50:46.000Z"))),
            0);
  const std::string piped = describeJob(job, {}, {kPreemptNow, false});
  EXPECT_NE(piped.find("  Preemption:    being preempted since 2026-12-07T23:50:16.000Z\n"
                       "  Grace ends:    2026-12-07T23:50:46.000Z (Slurm ends it by then)\n"),
            std::string::npos)
      << piped;
  EXPECT_NE(piped.find("Attempts:      1\n"), std::string::npos) << piped;
  const std::string terminal = describeJob(job, {}, {kPreemptNow, true});
  EXPECT_NE(terminal.find("  Grace ends:    in 26s (2026-12-07T23:50:46.000Z)"), std::string::npos)
      << terminal;
}

TEST(PreemptionViewsTest, AServerWithoutTheFieldsShowsNoPreemption) {
  const client::JobView job = jobOf(
      onlyAttempt(attemptJson(1, "Running", "none", componentJson("RUNNING", nullptr, nullptr))),
      0);
  ASSERT_EQ(job.attempts.size(), 1u);
  const std::string page = describeJob(job, {}, {kPreemptNow, false});
  EXPECT_EQ(page.find("Preemption"), std::string::npos) << page;
  EXPECT_EQ(page.find("preempted"), std::string::npos) << page;
}

}  // namespace
}  // namespace tuneplane::cli
