// Metrics: the counters and histograms behind GET /metrics, rendered in Prometheus' text
// format (version 0.0.4). HTTP requests by route template and status, their latency;
// slurmrestd calls by operation and outcome, their latency (MeteredSlurmClient feeds them);
// jobs by phase and the control loop's ticks are read at render time from the sources the
// caller passes. Thread-safety: every method may be called from any thread (one mutex; the
// observe calls are a map lookup and a few additions).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

namespace tuneplane::api {

// Upper bounds (seconds) of the latency buckets; +Inf is implicit.
inline constexpr std::array<double, 12> kLatencyBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0};

class Histogram {
 public:
  void observe(double seconds);
  // Appends `name`_bucket/_sum/_count lines with `labels` ("" or `a="b",c="d"`).
  void render(std::string& out, std::string_view name, const std::string& labels) const;

 private:
  std::array<uint64_t, kLatencyBuckets.size()> buckets_{};  // not cumulative
  uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  // `route` is the route's template ("/v1/jobs/{id}"), never the raw path (ids would make
  // one series per job).
  void observeRequest(std::string_view method, std::string_view route, int status, double seconds);
  void observeSlurm(std::string_view operation, bool ok, double seconds);

  // Every metric this object holds, in text format.
  std::string render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> request_seconds_;  // by route
  std::map<std::pair<std::string, bool>, uint64_t> slurm_calls_;
  std::map<std::string, Histogram> slurm_seconds_;  // by operation
};

// Escapes a label value (backslash, quote, newline) for the text format.
std::string escapeLabel(std::string_view value);

}  // namespace tuneplane::api
