// Metrics in Prometheus' text format: histograms with their own buckets, the control loop's
// cycle and submit-latency histograms, attempts by outcome from the store's counts, and
// HELP/TYPE for every family.
#include "api/metrics.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "prometheus_text.h"
#include "server/serve_observer.h"

namespace tuneplane::api::testing {
namespace {

using phase::AttemptPhase;
using phase::EndCause;

TEST(Histogram, BucketsAreCumulativeOverItsOwnBounds) {
  static constexpr std::array<double, 3> kBounds = {0.1, 1.0, 10.0};
  Histogram h(kBounds);
  for (double seconds : {0.05, 0.5, 0.7, 5.0, 50.0}) h.observe(seconds);
  std::string out;
  h.render(out, "x_seconds", "op=\"a\"");
  EXPECT_EQ(out,
            "x_seconds_bucket{op=\"a\",le=\"0.1\"} 1\n"
            "x_seconds_bucket{op=\"a\",le=\"1\"} 3\n"
            "x_seconds_bucket{op=\"a\",le=\"10\"} 4\n"
            "x_seconds_bucket{op=\"a\",le=\"+Inf\"} 5\n"
            "x_seconds_sum{op=\"a\"} 56.25\n"
            "x_seconds_count{op=\"a\"} 5\n");
}

TEST(Metrics, CycleAndSubmitLatencyAreHistogramsWithHelp) {
  Metrics metrics;
  const std::string empty = metrics.render();
  EXPECT_NE(empty.find("# TYPE tuneplane_control_cycle_duration_seconds histogram\n"),
            std::string::npos);
  EXPECT_NE(empty.find("# TYPE tuneplane_submit_latency_seconds histogram\n"), std::string::npos);
  EXPECT_EQ(sampleValue(empty, "tuneplane_control_cycle_duration_seconds_count"), 0.0);
  EXPECT_EQ(sampleValue(empty, "tuneplane_submit_latency_seconds_count"), 0.0);

  metrics.observeCycle(0.003);
  metrics.observeCycle(0.2);
  metrics.observeSubmitLatency(1.5);
  const std::string text = metrics.render();
  EXPECT_EQ(expositionProblems(text), std::vector<std::string>{}) << text;
  EXPECT_EQ(sampleValue(text, "tuneplane_control_cycle_duration_seconds_count"), 2.0);
  EXPECT_EQ(sampleValue(text, "tuneplane_control_cycle_duration_seconds_bucket{le=\"0.005\"}"),
            1.0);
  EXPECT_EQ(sampleValue(text, "tuneplane_control_cycle_duration_seconds_bucket{le=\"0.25\"}"), 2.0);
  EXPECT_EQ(sampleValue(text, "tuneplane_submit_latency_seconds_count"), 1.0);
  EXPECT_EQ(sampleValue(text, "tuneplane_submit_latency_seconds_bucket{le=\"1\"}"), 0.0);
  EXPECT_EQ(sampleValue(text, "tuneplane_submit_latency_seconds_bucket{le=\"2.5\"}"), 1.0);
  EXPECT_EQ(sampleValue(text, "tuneplane_submit_latency_seconds_sum"), 1.5);
}

TEST(Metrics, DuplicateSlurmJobsAreACounterFromTheObserver) {
  Metrics metrics;
  EXPECT_EQ(sampleValue(metrics.render(), "tuneplane_duplicate_slurm_jobs_total"), 0.0);
  FakeClock clock;
  server::EventLog log({}, clock);
  server::ServeObserver observer(metrics, log);
  observer.duplicates(store::AttemptRecord{}, 1);
  observer.duplicates(store::AttemptRecord{}, 2);
  const std::string text = metrics.render();
  EXPECT_EQ(expositionProblems(text), std::vector<std::string>{}) << text;
  EXPECT_NE(text.find("# TYPE tuneplane_duplicate_slurm_jobs_total counter\n"), std::string::npos);
  EXPECT_EQ(sampleValue(text, "tuneplane_duplicate_slurm_jobs_total"), 3.0);
}

TEST(Metrics, AttemptsByOutcomeAndCauseFromTheStoreCounts) {
  const std::string text = renderAttemptOutcomes({
      {{AttemptPhase::kSucceeded, EndCause::kNone}, 7},
      {{AttemptPhase::kFailed, EndCause::kInfrastructure}, 2},
      {{AttemptPhase::kFailed, EndCause::kUser}, 1},
      {{AttemptPhase::kFailed, EndCause::kPreempted}, 3},  // issue 47: apart from failures
      {{AttemptPhase::kAbandoned, EndCause::kAbandoned}, 1},
  });
  EXPECT_EQ(expositionProblems(text), std::vector<std::string>{}) << text;
  EXPECT_NE(text.find("# TYPE tuneplane_attempts_total counter\n"), std::string::npos);
  EXPECT_EQ(sampleValue(text, "tuneplane_attempts_total{outcome=\"succeeded\",cause=\"none\"}"),
            7.0);
  EXPECT_EQ(
      sampleValue(text, "tuneplane_attempts_total{outcome=\"failed\",cause=\"infrastructure\"}"),
      2.0);
  EXPECT_EQ(sampleValue(text, "tuneplane_attempts_total{outcome=\"failed\",cause=\"user\"}"), 1.0);
  EXPECT_EQ(sampleValue(text, "tuneplane_attempts_total{outcome=\"failed\",cause=\"preempted\"}"),
            3.0);
  EXPECT_EQ(
      sampleValue(text, "tuneplane_attempts_total{outcome=\"abandoned\",cause=\"abandoned\"}"),
      1.0);
  // No attempts ended yet: the family is still declared.
  EXPECT_EQ(renderAttemptOutcomes({}),
            "# HELP tuneplane_attempts_total Attempts that ended, by outcome (terminal phase) and "
            "cause.\n# TYPE tuneplane_attempts_total counter\n");
}

TEST(Metrics, LabelValuesAreEscaped) {
  EXPECT_EQ(escapeLabel("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  Metrics metrics;
  metrics.observeSlurm("odd\"op\n", false, 0.01);
  const std::string text = metrics.render();
  EXPECT_NE(
      text.find("tuneplane_slurm_requests_total{operation=\"odd\\\"op\\n\",outcome=\"error\"} 1"),
      std::string::npos)
      << text;
  EXPECT_EQ(expositionProblems(text), std::vector<std::string>{}) << text;
}

// Issue 16: 30 requests with 2 KB methods tripled /metrics. Label values come from fixed sets.
TEST(Metrics, RequestLabelsComeFromFixedSetsWhateverIsHandedIn) {
  Metrics metrics;
  std::mt19937 random(16);
  std::uniform_int_distribution<int> letter('A', 'Z');
  const auto text = [&](std::size_t size) {
    std::string out;
    for (std::size_t i = 0; i < size; ++i) out += static_cast<char>(letter(random));
    return out;
  };
  metrics.observeRequest(text(2048), "/" + text(40), 400, 0.001);
  metrics.observeRequest("GET", "unmatched", 404, 0.001);
  metrics.observeRequest("GET", "/v1/jobs/{id}", 200, 0.001);
  const std::string first = metrics.render();
  for (int i = 0; i < 40; ++i) {
    // Unknown methods (and lower-case ones: methods are case-sensitive) and routes; statuses
    // outside 100..599 all become "other", so one more series at most for those.
    metrics.observeRequest(i % 2 ? text(2048) : "get", "/" + text(40), 400, 0.001);
  }
  const std::string after = metrics.render();
  EXPECT_EQ(seriesCount(after), seriesCount(first)) << after;
  for (int status : {-1, 0, 99, 600, 1000, 123456}) {
    metrics.observeRequest(text(16), text(16), status, 0.001);
  }
  const std::string statuses = metrics.render();
  EXPECT_EQ(seriesCount(statuses), seriesCount(first) + 1) << statuses;  // other/other/other
  EXPECT_NE(statuses.find("method=\"other\",route=\"other\",status=\"other\""), std::string::npos);
  EXPECT_NE(statuses.find("method=\"other\",route=\"other\",status=\"400\""), std::string::npos);
  EXPECT_NE(statuses.find("route=\"/v1/jobs/{id}\",status=\"200\""), std::string::npos);
  EXPECT_NE(statuses.find("method=\"GET\",route=\"unmatched\",status=\"404\""), std::string::npos);
  EXPECT_EQ(expositionProblems(statuses), std::vector<std::string>{}) << statuses;
  EXPECT_LT(statuses.size(), 8000u);
}

}  // namespace
}  // namespace tuneplane::api::testing
