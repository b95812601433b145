// UsageService's /metrics lines (api/usage_service.h) with a fake clock: one slurmdbd read per
// max age, none sooner after a failure than the retry, figures dropped once too old, and no
// accounting shown as tuneplane_usage_accounting_up 0 with no figures.
#include "api/usage_service.h"

#include <gtest/gtest.h>

#include "prometheus_text.h"

namespace tuneplane::api {
namespace {

using slurm::AccountingRun;

class UsageMetricsTest : public ::testing::Test {
 protected:
  UsageMetricsTest()
      : service_(
            [this](const slurm::SlurmdbJobsQuery& query)
                -> slurm::SlurmResult<std::vector<AccountingRun>> {
              ++reads_;
              last_ = query;
              if (unavailable_) {
                auto e =
                    slurm::makeSlurmError(slurm::kErrAccountingUnavailable, "slurmdb_jobs",
                                          "no /slurmdb/ routes", slurm::TransportClass::kRejected);
                return slurm::slurmFail(e);
              }
              AccountingRun run;
              run.job_id = 1;
              run.user = "alice";
              run.account = "team-a";
              run.start_time = query.end_time - 7200;
              run.end_time = query.end_time - 3600;
              run.cpus = 3;
              run.gpus = 2;
              run.working_directory = "/staging/jobs/train-0123abcd/attempts/1";
              return std::vector<AccountingRun>{run};
            },
            [](const std::string&) -> std::optional<JobOwnership> {
              return JobOwnership{"alice", "alice"};
            },
            {.staging_root = "/staging", .service_user = "svc"}, clock_) {}

  static bool has(const std::string& text, const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
  }

  FakeClock clock_;
  int reads_ = 0;
  bool unavailable_ = false;
  slurm::SlurmdbJobsQuery last_;
  UsageService service_;
};

TEST_F(UsageMetricsTest, OneReadPerMaxAgeEveryFamilyDescribed) {
  const std::string text = service_.metricsText();
  EXPECT_EQ(reads_, 1);
  EXPECT_EQ(last_.end_time - last_.start_time, 86400);
  EXPECT_TRUE(has(text, "tuneplane_usage_cpu_hours{team=\"team-a\",origin=\"tuneplane\"} 3.000"))
      << text;
  EXPECT_TRUE(has(text, "tuneplane_usage_cpu_hours{team=\"team-a\",origin=\"other\"} 0.000"));
  EXPECT_TRUE(has(text, "tuneplane_usage_gpu_hours{team=\"team-a\",origin=\"tuneplane\"} 2.000"));
  EXPECT_TRUE(has(text, "tuneplane_usage_accounting_up 1"));
  EXPECT_TRUE(has(
      text, "tuneplane_usage_updated_timestamp_seconds " + std::to_string(clock_.nowMs() / 1000)));
  for (const char* family :
       {"tuneplane_usage_cpu_hours", "tuneplane_usage_gpu_hours", "tuneplane_usage_window_seconds",
        "tuneplane_usage_accounting_up", "tuneplane_usage_updated_timestamp_seconds"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + family + " gauge\n"), std::string::npos) << family;
    EXPECT_NE(text.find(std::string("# HELP ") + family + " "), std::string::npos) << family;
  }
  clock_.advance(std::chrono::seconds(299));
  service_.metricsText();
  EXPECT_EQ(reads_, 1);
  clock_.advance(std::chrono::seconds(1));
  service_.metricsText();
  EXPECT_EQ(reads_, 2);
}

TEST_F(UsageMetricsTest, AFailedReadIsRetriedAfterTheRetryAndOldFiguresFadeOut) {
  service_.metricsText();
  unavailable_ = true;
  clock_.advance(std::chrono::seconds(300));
  std::string text = service_.metricsText();
  EXPECT_EQ(reads_, 2);
  EXPECT_TRUE(has(text, "tuneplane_usage_accounting_up 0"));
  // The last good figures stay for up to three max ages, with when they were read.
  EXPECT_NE(text.find("tuneplane_usage_cpu_hours{"), std::string::npos);
  clock_.advance(std::chrono::seconds(59));
  service_.metricsText();
  EXPECT_EQ(reads_, 2);  // not before the retry
  clock_.advance(std::chrono::seconds(1));
  service_.metricsText();
  EXPECT_EQ(reads_, 3);
  clock_.advance(std::chrono::seconds(600));
  text = service_.metricsText();
  EXPECT_EQ(text.find("tuneplane_usage_cpu_hours{"), std::string::npos) << text;
  EXPECT_TRUE(has(text, "tuneplane_usage_updated_timestamp_seconds 0"));
}

TEST_F(UsageMetricsTest, NoAccountingShowsNoFigures) {
  unavailable_ = true;
  const std::string text = service_.metricsText();
  EXPECT_TRUE(has(text, "tuneplane_usage_accounting_up 0"));
  EXPECT_EQ(text.find("tuneplane_usage_cpu_hours{"), std::string::npos);
  EXPECT_EQ(text.find("tuneplane_usage_gpu_hours{"), std::string::npos);
}

TEST_F(UsageMetricsTest, TheTextParsesAsPrometheusText) {
  const std::string text = service_.metricsText();
  const auto problems = testing::expositionProblems(text);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems) << text;
}

}  // namespace
}  // namespace tuneplane::api
