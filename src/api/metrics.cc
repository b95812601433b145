// See metrics.h.
#include "api/metrics.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "api/route_templates.h"

namespace tuneplane::api {
namespace {

// `value` itself when it is one of `known` (returned as the table's own, static, string),
// else "other".
template <std::size_t N>
std::string_view fixedLabel(std::string_view value, const std::array<std::string_view, N>& known) {
  const auto found = std::find(known.begin(), known.end(), value);
  return found != known.end() ? *found : kOtherLabel;
}

std::string_view routeLabel(std::string_view route) {
  return route == kUnmatchedRoute ? kUnmatchedRoute : fixedLabel(route, kRouteTemplates);
}

// A status outside HTTP's three-digit range is counted as 0, rendered "other".
int statusLabel(int status) {
  return status >= 100 && status <= 599 ? status : 0;
}

}  // namespace

std::string escapeLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Histogram::observe(double seconds) {
  ++count_;
  sum_ += seconds;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (seconds <= bounds_[i]) {
      ++buckets_[i];
      return;
    }
  }
}

void Histogram::render(std::string& out, std::string_view name, const std::string& labels) const {
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i];
    out +=
        fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, bounds_[i], cumulative);
  }
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, count_);
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, braces, sum_, name, braces, count_);
}

void Metrics::observeRequest(std::string_view method, std::string_view route, int status,
                             double seconds) {
  const std::string_view route_label = routeLabel(route);
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{fixedLabel(method, kCountedMethods), route_label, statusLabel(status)}];
  request_seconds_[route_label].observe(seconds);
}

void Metrics::observeSlurm(std::string_view operation, bool ok, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++slurm_calls_[{std::string(operation), ok}];
  slurm_seconds_[std::string(operation)].observe(seconds);
}

void Metrics::observeCycle(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  cycle_seconds_.observe(seconds);
}

void Metrics::observeSubmitLatency(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  submit_seconds_.observe(seconds);
}

void Metrics::countDuplicateSlurmJobs(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  duplicate_slurm_jobs_ += static_cast<uint64_t>(count);
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out +=
      "# HELP tuneplane_http_requests_total HTTP requests served, by route template and status.\n"
      "# TYPE tuneplane_http_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    const auto& [method, route, status] = key;
    out += fmt::format(
        "tuneplane_http_requests_total{{method=\"{}\",route=\"{}\",status=\"{}\"}} {}\n",
        escapeLabel(method), escapeLabel(route),
        status == 0 ? std::string(kOtherLabel) : std::to_string(status), count);
  }
  out +=
      "# HELP tuneplane_http_request_duration_seconds Time to answer an HTTP request.\n"
      "# TYPE tuneplane_http_request_duration_seconds histogram\n";
  for (const auto& [route, histogram] : request_seconds_) {
    histogram.render(out, "tuneplane_http_request_duration_seconds",
                     "route=\"" + escapeLabel(route) + "\"");
  }
  out +=
      "# HELP tuneplane_slurm_requests_total Calls to slurmrestd, by operation and outcome.\n"
      "# TYPE tuneplane_slurm_requests_total counter\n";
  for (const auto& [key, count] : slurm_calls_) {
    out += fmt::format("tuneplane_slurm_requests_total{{operation=\"{}\",outcome=\"{}\"}} {}\n",
                       escapeLabel(key.first), key.second ? "ok" : "error", count);
  }
  out +=
      "# HELP tuneplane_slurm_request_duration_seconds Time of a slurmrestd call, retries "
      "included (operation=\"submit\" is the submit latency).\n"
      "# TYPE tuneplane_slurm_request_duration_seconds histogram\n";
  for (const auto& [operation, histogram] : slurm_seconds_) {
    histogram.render(out, "tuneplane_slurm_request_duration_seconds",
                     "operation=\"" + escapeLabel(operation) + "\"");
  }
  out +=
      "# HELP tuneplane_control_cycle_duration_seconds Time of one control-loop reconcile cycle "
      "(every active job looked at once).\n"
      "# TYPE tuneplane_control_cycle_duration_seconds histogram\n";
  cycle_seconds_.render(out, "tuneplane_control_cycle_duration_seconds", "");
  out +=
      "# HELP tuneplane_submit_latency_seconds From an attempt's creation to the commit of "
      "Slurm's receipt (staging, artifact check and the POST included).\n"
      "# TYPE tuneplane_submit_latency_seconds histogram\n";
  submit_seconds_.render(out, "tuneplane_submit_latency_seconds", "");
  out +=
      "# HELP tuneplane_duplicate_slurm_jobs_total Slurm jobs found carrying an attempt's submit "
      "token beside the one adopted (a submit that reached Slurm twice); each was cancelled.\n"
      "# TYPE tuneplane_duplicate_slurm_jobs_total counter\n";
  out += fmt::format("tuneplane_duplicate_slurm_jobs_total {}\n", duplicate_slurm_jobs_);
  return out;
}

std::string renderAttemptOutcomes(
    const std::map<std::pair<phase::AttemptPhase, phase::EndCause>, int64_t>& counts) {
  std::string out =
      "# HELP tuneplane_attempts_total Attempts that ended, by outcome (terminal phase) and "
      "cause.\n"
      "# TYPE tuneplane_attempts_total counter\n";
  for (const auto& [key, count] : counts) {
    std::string outcome(phase::toString(key.first));
    for (char& c : outcome) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += fmt::format("tuneplane_attempts_total{{outcome=\"{}\",cause=\"{}\"}} {}\n",
                       escapeLabel(outcome), escapeLabel(phase::toString(key.second)), count);
  }
  return out;
}

}  // namespace tuneplane::api
