// See usage_service.h.
#include "api/usage_service.h"

#include <algorithm>

#include <fmt/format.h>

#include "api/metrics.h"
#include "common/text_checks.h"
#include "slurm/rest_client.h"
#include "store/job_store.h"

namespace tuneplane::api {
namespace {

// Counts a read in flight for its lifetime.
class ReadSlot {
 public:
  ReadSlot(std::atomic<int>& reads, int limit) : reads_(reads) {
    taken_ = reads_.fetch_add(1) < limit;
    if (!taken_) reads_.fetch_sub(1);
  }
  ~ReadSlot() {
    if (taken_) reads_.fetch_sub(1);
  }
  ReadSlot(const ReadSlot&) = delete;
  ReadSlot& operator=(const ReadSlot&) = delete;
  bool taken() const { return taken_; }

 private:
  std::atomic<int>& reads_;
  bool taken_ = false;
};

std::string hoursText(int64_t seconds) {
  return fmt::format("{:.3f}", static_cast<double>(seconds) / 3600.0);
}

}  // namespace

OwnershipLookup ownershipFromStore(store::JobStore& store) {
  return [&store](const std::string& job_id) -> std::optional<JobOwnership> {
    auto view = store.getJob(job_id);
    if (!view || !*view) return std::nullopt;
    return JobOwnership{(*view)->job.owner, (*view)->job.run_as};
  };
}

tl::expected<UsageRequest, Errors> parseUsageQuery(
    const std::multimap<std::string, std::string>& params) {
  UsageRequest request;
  Errors errors;
  auto first = [&](const std::string& key) -> std::optional<std::string> {
    const auto it = params.find(key);
    return it == params.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  if (auto by = first("by")) {
    if (auto parsed = parseUsageGrouping(*by)) {
      request.by = *parsed;
    } else {
      errors.push_back({usage_codes::kBadQuery, "by", "by is one of user, team, owner, job"});
    }
  }
  for (const char* key : {"since", "until"}) {
    auto text = first(key);
    if (!text) continue;
    auto time = parseUsageTime(*text);
    if (!time) {
      errors.push_back(
          {usage_codes::kBadQuery, key,
           std::string(key) + " is a date (2026-12-01), an RFC 3339 time or Unix seconds"});
      continue;
    }
    (std::string_view(key) == "since" ? request.since : request.until) = *time;
  }
  for (auto [it, end] = params.equal_range("user"); it != end; ++it) {
    if (!isUnixUserName(it->second)) {
      errors.push_back({usage_codes::kBadQuery, "user", "user is a Unix user name"});
      break;
    }
    request.users.push_back(it->second);
  }
  if (!errors.empty()) return tl::unexpected(std::move(errors));
  return request;
}

UsageService::UsageService(Reader reader, OwnershipLookup lookup, Options options,
                           const Clock& clock)
    : reader_(std::move(reader)),
      lookup_(std::move(lookup)),
      options_(std::move(options)),
      clock_(clock) {}

std::shared_ptr<UsageService> UsageService::overSlurm(
    std::unique_ptr<slurm::SlurmRestClient> client, OwnershipLookup lookup, Options options,
    const Clock& clock) {
  std::shared_ptr<slurm::SlurmRestClient> shared = std::move(client);
  return std::make_shared<UsageService>(
      [shared](const slurm::SlurmdbJobsQuery& query) {
        return slurm::readSlurmdbJobs(*shared, query);
      },
      std::move(lookup), std::move(options), clock);
}

Result<std::vector<slurm::AccountingRun>> UsageService::read(const slurm::SlurmdbJobsQuery& query) {
  if (!reader_) {
    return fail(usage_codes::kAccountingUnavailable, "",
                "this server does not read Slurm's accounting");
  }
  auto runs = reader_(query);
  if (runs) return std::move(*runs);
  const slurm::SlurmError& e = runs.error();
  if (e.error.code == slurm::kErrAccountingUnavailable) {
    return fail(usage_codes::kAccountingUnavailable, "",
                "accounting is not available: " + e.error.message);
  }
  return fail(usage_codes::kSlurmError, "", "reading slurmdbd's records failed: " + e.describe());
}

Result<UsageReport> UsageService::report(const UsageRequest& request, const Principal& who) {
  const int64_t now = clock_.nowMs() / 1000;
  const int64_t until = request.until.value_or(now);
  const int64_t since = request.since.value_or(until - options_.default_window.count());
  if (since >= until) {
    return fail(usage_codes::kBadQuery, "since", "since must come before until");
  }
  if (until - since > options_.max_window.count()) {
    return fail(usage_codes::kBadQuery, "since",
                fmt::format("a window of at most {} days", options_.max_window.count() / 86400));
  }
  UsageScope scope;
  slurm::SlurmdbJobsQuery query{{}, since, until};
  if (who.admin) {
    scope.everyone = true;
    query.users = request.users;
  } else {
    scope.user = who.user;
    scope.unix_user = who.unix_user.empty() ? who.user : who.unix_user;
    for (const auto& user : request.users) {
      if (user != scope.unix_user) {
        return fail("auth.forbidden", "user", "a user sees their own usage only");
      }
    }
    // Their own runs, and slurm.user's: TunePlane's jobs in shared mode run as it.
    query.users = {scope.unix_user};
    if (!options_.service_user.empty() && options_.service_user != scope.unix_user) {
      query.users.push_back(options_.service_user);
    }
  }
  ReadSlot slot(reads_, options_.max_concurrent_reads);
  if (!slot.taken()) {
    return fail(usage_codes::kBusy, "", "too many usage reads are running; try again in a moment");
  }
  auto runs = read(query);
  if (!runs) return tl::unexpected(runs.error());
  UsageInput input;
  input.window = {since, until};
  input.now = now;
  input.by = request.by;
  input.staging_root = options_.staging_root;
  input.service_user = options_.service_user;
  input.scope = scope;
  return buildUsageReport(*runs, input, lookup_);
}

int UsageService::statusFor(const Error& error) {
  if (error.code == usage_codes::kBadQuery) return 400;
  if (error.code == "auth.forbidden") return 403;
  if (error.code == usage_codes::kBusy) return 429;
  if (error.code == usage_codes::kAccountingUnavailable) return 501;
  if (error.code == usage_codes::kSlurmError) return 502;
  return 500;
}

void UsageService::refreshMetrics() {
  std::unique_lock<std::mutex> one(refresh_mu_, std::try_to_lock);
  if (!one.owns_lock()) return;  // another scrape reads them now: serve what is cached
  const int64_t steady = clock_.steadyMs();
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    const bool fresh =
        snapshot_.read_at_ms > 0 && steady - snapshot_.read_at_steady_ms <
                                        std::chrono::milliseconds(options_.metrics_max_age).count();
    const bool retry_due =
        !last_attempt_steady_ms_ || steady - *last_attempt_steady_ms_ >=
                                        std::chrono::milliseconds(options_.metrics_retry).count();
    if (fresh || !retry_due) return;
    last_attempt_steady_ms_ = steady;
  }
  const int64_t now_ms = clock_.nowMs();
  const int64_t now = now_ms / 1000;
  const int64_t since = now - options_.metrics_window.count();
  auto runs = read({{}, since, now});
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  if (!runs) {
    snapshot_.available = false;
    return;
  }
  UsageInput input;
  input.window = {since, now};
  input.now = now;
  input.by = UsageGrouping::kTeam;
  input.staging_root = options_.staging_root;
  input.service_user = options_.service_user;
  input.scope.everyone = true;
  snapshot_.teams = buildUsageReport(*runs, input, lookup_).rows;
  snapshot_.available = true;
  snapshot_.read_at_ms = now_ms;
  snapshot_.read_at_steady_ms = steady;
}

std::string UsageService::metricsText() {
  refreshMetrics();
  Snapshot snapshot;
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    snapshot = snapshot_;
  }
  const int64_t age_ms = clock_.steadyMs() - snapshot.read_at_steady_ms;
  const bool shown = snapshot.read_at_ms > 0 &&
                     age_ms <= 3 * std::chrono::milliseconds(options_.metrics_max_age).count();
  std::string text;
  // `header`: the family's HELP and TYPE lines, written out (scripts/check_docs.py reads them).
  auto family = [&](const char* name, const char* header, auto seconds_of) {
    text += header;
    if (!shown) return;
    for (const auto& row : snapshot.teams) {
      const int64_t tuneplane = seconds_of(row.tuneplane);
      const int64_t other = seconds_of(row.all) - tuneplane;
      const std::string team = escapeLabel(row.key);
      text += fmt::format("{}{{team=\"{}\",origin=\"tuneplane\"}} {}\n", name, team,
                          hoursText(tuneplane));
      text += fmt::format("{}{{team=\"{}\",origin=\"other\"}} {}\n", name, team, hoursText(other));
    }
  };
  family("tuneplane_usage_cpu_hours",
         "# HELP tuneplane_usage_cpu_hours CPU-hours of the runs slurmdbd recorded in the "
         "trailing usage window (tuneplane_usage_window_seconds), by Slurm account (team) and "
         "origin (tuneplane: TunePlane's jobs; other: the rest).\n"
         "# TYPE tuneplane_usage_cpu_hours gauge\n",
         [](const UsageFigures& f) { return f.cpu_seconds; });
  family("tuneplane_usage_gpu_hours",
         "# HELP tuneplane_usage_gpu_hours GPU-hours of the same runs (tres gres/gpu), by Slurm "
         "account (team) and origin.\n"
         "# TYPE tuneplane_usage_gpu_hours gauge\n",
         [](const UsageFigures& f) { return f.gpu_seconds; });
  text += fmt::format(
      "# HELP tuneplane_usage_window_seconds The trailing window the usage figures cover.\n"
      "# TYPE tuneplane_usage_window_seconds gauge\ntuneplane_usage_window_seconds {}\n",
      options_.metrics_window.count());
  text += fmt::format(
      "# HELP tuneplane_usage_accounting_up Whether the last read of slurmdbd's records "
      "succeeded (0: accounting not available, or the read failed).\n"
      "# TYPE tuneplane_usage_accounting_up gauge\ntuneplane_usage_accounting_up {}\n",
      snapshot.available ? 1 : 0);
  text += fmt::format(
      "# HELP tuneplane_usage_updated_timestamp_seconds When the usage figures shown were "
      "read (Unix seconds; 0: none are shown).\n"
      "# TYPE tuneplane_usage_updated_timestamp_seconds gauge\n"
      "tuneplane_usage_updated_timestamp_seconds {}\n",
      shown ? snapshot.read_at_ms / 1000 : 0);
  return text;
}

}  // namespace tuneplane::api
