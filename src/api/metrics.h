// Metrics: the counters and histograms behind GET /metrics, rendered in Prometheus' text
// format (version 0.0.4). HTTP requests by route template and status, their latency;
// slurmrestd calls by operation and outcome, their latency (MeteredSlurmClient feeds them);
// the control loop's cycle duration and the submit latency (ServeObserver feeds them); jobs
// by phase, attempts by outcome and the control loop's ticks are read at render time from
// the sources the caller passes. Thread-safety: every method may be called from any thread (one
// mutex; the observe calls are a map lookup and a few additions).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "phase/phases.h"

namespace tuneplane::api {

// Upper bounds (seconds) of the latency buckets; +Inf is implicit.
inline constexpr std::array<double, 12> kLatencyBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0};
// A reconcile cycle: about a millisecond idle, seconds with many jobs or a slow slurmrestd
// (its retries included).
inline constexpr std::array<double, 12> kCycleBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                         0.25,  0.5,   1.0,  2.5,   10.0, 60.0};
// Submit latency: staging and an artifact's first hash (minutes for a large image) included.
inline constexpr std::array<double, 12> kSubmitBuckets = {0.01, 0.05, 0.1,  0.25, 0.5,   1.0,
                                                          2.5,  5.0,  10.0, 30.0, 120.0, 600.0};

class Histogram {
 public:
  // REQUIRES: `bounds` ascending, and alive as long as the histogram (a constant above).
  explicit Histogram(std::span<const double> bounds = kLatencyBuckets)
      : bounds_(bounds), buckets_(bounds.size()) {}
  void observe(double seconds);
  // Appends `name`_bucket/_sum/_count lines with `labels` ("" or `a="b",c="d"`).
  void render(std::string& out, std::string_view name, const std::string& labels) const;

 private:
  std::span<const double> bounds_;
  std::vector<uint64_t> buckets_;  // not cumulative
  uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  // `route` is the route's template ("/v1/jobs/{id}"), never the raw path (ids would make
  // one series per job). Every label value comes from a fixed set, whatever a client sent:
  // the method one of kCountedMethods, the route one of kRouteTemplates or "unmatched", the
  // status 100..599; anything else is counted as "other" (route_templates.h).
  void observeRequest(std::string_view method, std::string_view route, int status, double seconds);
  void observeSlurm(std::string_view operation, bool ok, double seconds);
  void observeCycle(double seconds);
  void observeSubmitLatency(double seconds);
  // Duplicate Slurm jobs of one submit token, cancelled by the control loop.
  void countDuplicateSlurmJobs(int count);

  // Every metric this object holds, in text format.
  std::string render() const;

 private:
  mutable std::mutex mu_;
  // By method, route and status (0: "other"); the strings are route_templates.h's.
  std::map<std::tuple<std::string_view, std::string_view, int>, uint64_t> requests_;
  std::map<std::string_view, Histogram> request_seconds_;  // by route
  std::map<std::pair<std::string, bool>, uint64_t> slurm_calls_;
  std::map<std::string, Histogram> slurm_seconds_;  // by operation
  Histogram cycle_seconds_{kCycleBuckets};
  Histogram submit_seconds_{kSubmitBuckets};
  uint64_t duplicate_slurm_jobs_ = 0;
};

// tuneplane_attempts_total from the store's counts (JobStore::countEndedAttempts): outcome is
// the terminal phase in lower case, cause the stored end cause. HELP and TYPE even when empty.
std::string renderAttemptOutcomes(
    const std::map<std::pair<phase::AttemptPhase, phase::EndCause>, int64_t>& counts);

// Escapes a label value (backslash, quote, newline) for the text format.
std::string escapeLabel(std::string_view value);

}  // namespace tuneplane::api
