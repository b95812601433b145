// UsageService: what GET /v1/usage and /metrics ask of slurmdbd, and the limits on asking.
// It reads run records through a Reader (slurm::readSlurmdbJobs over the service's own
// SlurmRestClient in serve: slurmdbd sees every user's jobs only for SlurmUser, an operator
// or a site without PrivateData=jobs), ties them to TunePlane's jobs through an
// OwnershipLookup (the store), and sums them with buildUsageReport (usage_report.h).
//
//  - report(): one slurmdbd read per request, for the caller's scope (an admin: every user, or
//    the users named; a user: their own Unix user and slurm.user, whose runs are then kept
//    only where they are the user's own jobs'). At most Options::max_concurrent_reads run at
//    once; more are refused ("usage.busy", 429), so a page reloaded in a loop cannot queue
//    reads on slurmdbd.
//  - metricsText(): the /metrics lines, from one read of the trailing metrics_window kept
//    for metrics_max_age: a scrape never waits on slurmdbd more than once per max age (a
//    scrape that finds the figures stale reads them again itself; one at a time, the others
//    serve what is cached), a failed read is not repeated before metrics_retry, and figures
//    older than 3 × metrics_max_age are not shown at all. Labels: the Slurm account (`team`)
//    and `origin` (tuneplane | other) — no user name: /metrics is public.
// Thread-safety: every method may be called from any thread. REQUIRES: `clock` outlives the
// service.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/authenticator.h"
#include "api/usage_report.h"
#include "common/clock.h"
#include "common/result.h"
#include "slurm/slurmdb_jobs.h"

namespace tuneplane::slurm {
class SlurmRestClient;
}
namespace tuneplane::store {
class JobStore;
}

namespace tuneplane::api {

// Stable error codes of GET /v1/usage (docs/api.md).
namespace usage_codes {
// 400: a bad since/until/by (the same code as every /v1 route's bad parameter).
inline constexpr const char* kBadQuery = "api.invalid_parameter";
inline constexpr const char* kBusy = "usage.busy";  // 429: too many reads at once
// 501: this slurmrestd has no /slurmdb/ routes (no slurmdbd, or openapi/slurmdbd not loaded).
inline constexpr const char* kAccountingUnavailable = "usage.accounting_unavailable";
inline constexpr const char* kSlurmError = "usage.slurm_error";  // 502: the read failed
}  // namespace usage_codes

// What GET /v1/usage asks: unset times are the defaults (until: now; since: until − 7 days).
struct UsageRequest {
  std::optional<int64_t> since = std::nullopt;
  std::optional<int64_t> until = std::nullopt;
  UsageGrouping by = UsageGrouping::kUser;
  std::vector<std::string> users = {};  // admins: only these Slurm users' runs (none: everyone's)
};

// The store's answer about a job for buildUsageReport: its owner and run_as; nullopt when the
// store has no such job (or cannot say now: the run then counts as not TunePlane's).
// REQUIRES: `store` outlives the lookup.
OwnershipLookup ownershipFromStore(store::JobStore& store);

// GET /v1/usage's query: by (user, team, owner, job; default user), since and until
// (parseUsageTime), user (repeatable). Every bad parameter is one error (kBadQuery, naming it).
tl::expected<UsageRequest, Errors> parseUsageQuery(
    const std::multimap<std::string, std::string>& params);

class UsageService {
 public:
  using Reader = std::function<slurm::SlurmResult<std::vector<slurm::AccountingRun>>(
      const slurm::SlurmdbJobsQuery&)>;

  struct Options {
    std::string staging_root = {};  // where TunePlane's attempt directories are
    std::string service_user = {};  // slurm.user
    std::chrono::seconds default_window{7 * 24 * 3600};
    std::chrono::seconds max_window{366 * 24 * 3600};  // a longer one is refused (400)
    std::chrono::seconds metrics_window{24 * 3600};
    std::chrono::seconds metrics_max_age{300};
    std::chrono::seconds metrics_retry{60};
    int max_concurrent_reads = 2;
  };

  UsageService(Reader reader, OwnershipLookup lookup, Options options, const Clock& clock);

  // The service over `client`, which it owns: readSlurmdbJobs for every read.
  static std::shared_ptr<UsageService> overSlurm(std::unique_ptr<slurm::SlurmRestClient> client,
                                                 OwnershipLookup lookup, Options options,
                                                 const Clock& clock);

  // The report of `request` as `who` may see it. Errors (Error::code): usage_codes::kBadQuery,
  // "auth.forbidden" (a user naming another user), kBusy, kAccountingUnavailable, kSlurmError.
  Result<UsageReport> report(const UsageRequest& request, const Principal& who);
  // The HTTP status of one of report()'s errors.
  static int statusFor(const Error& error);

  // The /metrics families tuneplane_usage_* (docs/operators.md, "Metrics and logs").
  std::string metricsText();

  const Options& options() const { return options_; }

 private:
  struct Snapshot {
    bool available = false;  // the last read succeeded
    int64_t read_at_ms = 0;  // wall clock of the last good read; 0: none
    int64_t read_at_steady_ms = 0;
    std::vector<UsageRow> teams;  // of the last good read
  };
  Result<std::vector<slurm::AccountingRun>> read(const slurm::SlurmdbJobsQuery& query);
  void refreshMetrics();

  Reader reader_;
  OwnershipLookup lookup_;
  Options options_;
  const Clock& clock_;
  std::atomic<int> reads_{0};
  std::mutex refresh_mu_;  // one metrics read at a time
  std::mutex snapshot_mu_;
  Snapshot snapshot_;
  std::optional<int64_t> last_attempt_steady_ms_;  // guarded by snapshot_mu_
};

}  // namespace tuneplane::api
