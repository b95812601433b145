// Daemon: everything `tuneplane serve` runs, wired together — the Slurm client (metered for
// /metrics), the launch pipeline's collaborators, the job service, the reconciler on its
// ControlLoop thread, a second Slurm client for /readyz (one try, short timeout, so a probe
// never queues behind the loop's requests), and the ApiServer. The store is the caller's
// (serve opens SQLite; tests pass one in memory).
//
// Stop order: the HTTP server first (no new request; in-flight ones finish, so every store
// write they started completes), then the loop at its next safe point. Slurm jobs keep
// running; a restart picks every job up from the store. GET /v1/doctor runs doctor's checks
// over the probe client, so each Slurm request is bounded by its short timeout.
// Thread-safety: start() and stop() from one thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/api_server.h"
#include "api/metrics.h"
#include "api/server_config.h"
#include "catalog/artifact_verifier.h"
#include "common/clock.h"
#include "control/control_loop.h"
#include "control/job_service.h"
#include "control/reconciler.h"
#include "doctor/doctor.h"
#include "launch/attempt_identity.h"
#include "server/event_log.h"
#include "server/metered_slurm_client.h"
#include "server/serve_observer.h"
#include "server/site_reload.h"
#include "slurm/identity_tokens.h"
#include "slurm/rest_client.h"
#include "staging/staging_fs.h"

namespace tuneplane::server {

struct DaemonOptions {
  api::HttpServerOptions http;        // the API server's, handed to it whole
  std::vector<api::ApiToken> tokens;  // its users at start (reload() replaces them)
  std::chrono::milliseconds poll_interval{10'000};
  // Attempts staged and submitted at once, each on its own slurmrestd connection
  // (server.submit_concurrency).
  int submit_concurrency = api::kDefaultSubmitConcurrency;
  std::function<void(const std::string&)> access_log;  // one JSON line per request
  // One record per transition and per failed slurmrestd call (event_log.h); may be empty.
  EventLog::Sink event_log;
  // More /metrics text from outside the daemon (the store's leader lease); may be empty.
  std::function<std::string()> more_metrics;
  // The server: section's credential files (server.tls.key, server.db_password_file), which
  // GET /v1/doctor checks beside the slurm section's.
  std::vector<doctor::SecretFile> server_secrets;
};

class Daemon {
 public:
  // Builds and starts everything. Errors: "slurm.config" (the site's slurm section),
  // "api.listen". REQUIRES: `site` and `store` outlive the daemon.
  static Result<std::unique_ptr<Daemon>> start(const pipeline::SiteContext& site,
                                               store::JobStore& store, DaemonOptions options);
  ~Daemon();  // stop()
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  int port() const { return server_->port(); }
  std::string baseUrl() const { return server_->baseUrl(); }
  control::ControlLoop& loop() { return *loop_; }
  // SIGHUP (site_reload.h): puts `next` in force — the TLS files, the tokens and the runtime
  // registry — all of it, or, when the TLS files do not load, none of it (the error says
  // why). A change of whether TLS is on at all waits for a restart (next.restart_needed names
  // it) and the rest is applied. Returns what changed, for the log.
  Result<std::string> reload(SiteReload next);
  // See above. Idempotent.
  void stop();

 private:
  explicit Daemon(store::JobStore& store);
  std::string loopMetrics() const;
  // GET /v1/doctor: doctor's checks over the probe client (one try, short timeout per
  // request) and the launcher's artifact cache. One run at a time; "api.busy" otherwise.
  Result<nlohmann::json> doctorReport();

  store::JobStore& store_;
  SystemClock clock_;
  api::Metrics metrics_;
  std::unique_ptr<EventLog> events_;
  std::unique_ptr<ServeObserver> observer_;
  catalog::ArtifactVerifier verifier_;
  launch::OpenSslRandomSource random_;
  staging::PosixStagingFs fs_;
  std::unique_ptr<slurm::SlurmRestClient> slurm_;
  std::unique_ptr<slurm::SlurmRestClient> probe_;
  std::unique_ptr<MeteredSlurmClient> metered_;
  // The launch stage's connections (one per attempt in flight), each metered.
  std::vector<std::unique_ptr<slurm::SlurmRestClient>> launch_slurm_;
  std::vector<std::unique_ptr<MeteredSlurmClient>> launch_metered_;
  std::unique_ptr<pipeline::AttemptLauncher> launcher_;
  std::unique_ptr<control::JobService> service_;
  std::unique_ptr<control::Reconciler> reconciler_;
  std::unique_ptr<control::ControlLoop> loop_;
  // Slurm's queue for the API (api/slurm_queue.h): its own connection, one try, metered.
  std::unique_ptr<slurm::SlurmRestClient> queue_slurm_;
  std::unique_ptr<MeteredSlurmClient> queue_metered_;
  std::unique_ptr<api::SlurmQueue> queue_;
  std::unique_ptr<api::ApiServer> server_;
  std::mutex doctor_mu_;
  std::mutex reload_mu_;  // one reload at a time
  std::vector<doctor::SecretFile> server_secrets_;
  std::size_t token_count_ = 0;
  std::vector<std::string> mapped_users_;  // the tokens' run-as users (doctor's checks)
  std::optional<slurm::IdentityMechanism> identity_mechanism_;
};

}  // namespace tuneplane::server
