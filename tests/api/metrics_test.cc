// Metrics in Prometheus' text format: histograms with their own buckets, the control loop's
// cycle and submit-latency histograms, attempts by outcome from the store's counts, and
// HELP/TYPE for every family.
#include "api/metrics.h"

#include <gtest/gtest.h>

#include "api/serve_observer.h"
#include "prometheus_text.h"

namespace tuneplane::api::testing {
namespace {

using store::AttemptPhase;
using store::EndCause;

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
  EventLog log({}, clock);
  ServeObserver observer(metrics, log);
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

}  // namespace
}  // namespace tuneplane::api::testing
