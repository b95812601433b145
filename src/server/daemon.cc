// See daemon.h.
#include "server/daemon.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/error_codes.h"
#include "doctor/doctor.h"
#include "doctor/host_probe.h"
#include "slurm/client_factory.h"
#include "staging/os_users.h"
#include "staging/staging_fs.h"

namespace tuneplane::server {

namespace {

constexpr std::chrono::milliseconds kProbeTimeout{3000};

}  // namespace

Daemon::Daemon(store::JobStore& store) : store_(store) {}

Result<std::unique_ptr<Daemon>> Daemon::start(const pipeline::SiteContext& site,
                                              store::JobStore& store, DaemonOptions options) {
  // Who writes the attempts (staging/job_access.h), decided once: a site whose job user
  // could not write its logs is refused before anything is served, staged or submitted.
  auto access = pipeline::checkJobAccess(site);
  if (!access) return tl::unexpected(access.error());
  std::unique_ptr<Daemon> d(new Daemon(store));
  // Every client of this process comes from one factory: the site's settings and its token
  // sources pass through it once (slurm/client_factory.h).
  auto factory = slurm::SlurmClientFactory::fromSite(site.site.slurm);
  if (!factory) return tl::unexpected(factory.error());
  auto client = factory->make();
  if (!client) return tl::unexpected(client.error());
  d->slurm_ = std::move(*client);
  // The REST API version, chosen once at start (api_negotiation.h; the client logs it) and
  // spoken by every client of this process. A server that speaks none of TunePlane's is a
  // configuration error; one that does not answer yet is asked again at the first request.
  if (auto chosen = d->slurm_->negotiate()) {
    factory->setApiVersion(std::string(chosen->api->name));
  } else if (chosen.error().error.code == slurm::kErrNoCommonApi ||
             chosen.error().error.code == slurm::kErrConfig) {
    return tl::unexpected(chosen.error().error);
  } else {
    spdlog::warn(
        "slurm: the REST API version is not negotiated yet ({}); it will be at the "
        "first request",
        chosen.error().describe());
  }
  d->identity_mechanism_ = factory->mechanism();
  if (site.site.slurm.identity == catalog::IdentityMode::kPerUser) {
    spdlog::info("slurm: every job runs as its user (slurm.identity per_user, {})",
                 slurm::toString(factory->mechanism()));
  }
  // The readiness probe: its own connection, one try, a short timeout.
  auto probe = factory->make({.max_attempts = 1, .timeout_cap = kProbeTimeout});
  if (!probe) return tl::unexpected(probe.error());
  d->probe_ = std::move(*probe);

  d->events_ = std::make_unique<EventLog>(std::move(options.event_log), d->clock_);
  d->observer_ = std::make_unique<ServeObserver>(d->metrics_, *d->events_);
  d->metered_ = std::make_unique<MeteredSlurmClient>(*d->slurm_, d->metrics_, d->events_.get());
  d->launcher_ = std::make_unique<pipeline::AttemptLauncher>(site, d->verifier_, d->random_, d->fs_,
                                                             std::move(*access));
  d->service_ =
      std::make_unique<control::JobService>(store, *d->launcher_, d->clock_, d->observer_.get());
  control::ReconcilerOptions reconciler_options;
  reconciler_options.poll_interval = options.poll_interval;
  for (int i = 0; i < std::max(1, options.submit_concurrency); ++i) {
    auto launch_client = factory->make();
    if (!launch_client) return tl::unexpected(launch_client.error());
    d->launch_slurm_.push_back(std::move(*launch_client));
    d->launch_metered_.push_back(std::make_unique<MeteredSlurmClient>(
        *d->launch_slurm_.back(), d->metrics_, d->events_.get()));
    reconciler_options.launch_clients.push_back(d->launch_metered_.back().get());
  }
  reconciler_options.observer = d->observer_.get();
  d->reconciler_ = std::make_unique<control::Reconciler>(store, *d->metered_, *d->launcher_,
                                                         d->clock_, reconciler_options);
  d->loop_ = std::make_unique<control::ControlLoop>(*d->reconciler_, options.poll_interval,
                                                    d->observer_.get());

  // Slurm's queue, read by the API only for jobs that wait in it: one try per listing.
  auto queue_client = factory->make({.max_attempts = 1, .timeout_cap = std::nullopt});
  if (!queue_client) return tl::unexpected(queue_client.error());
  d->queue_slurm_ = std::move(*queue_client);
  d->queue_metered_ =
      std::make_unique<MeteredSlurmClient>(*d->queue_slurm_, d->metrics_, d->events_.get());
  d->queue_ = std::make_unique<api::SlurmQueue>(
      [client = d->queue_metered_.get()] { return client->listJobs(std::nullopt); }, d->clock_);

  // GET /v1/usage and /metrics' usage: slurmdbd's records, on a connection of their own.
  auto usage_client = factory->make({.max_attempts = 1, .timeout_cap = std::nullopt});
  if (!usage_client) return tl::unexpected(usage_client.error());

  Daemon* self = d.get();
  api::ApiDependencies deps{*d->service_,
                            store,
                            *d->launcher_,
                            d->metrics_,
                            api::readLog,
                            {},
                            {},
                            {},
                            {},
                            {},
                            api::readResumeStep,
                            {},
                            {}};
  deps.slurm_ready = [self]() -> Status {
    auto pinged = self->probe_->ping();
    if (!pinged) return fail("api.slurm_unavailable", "slurm", pinged.error().describe());
    return ok();
  };
  deps.job_submitted = [self] { self->loop_->wake(); };
  deps.extra_metrics = [self, more = options.more_metrics] {
    return self->loopMetrics() + (more ? more() : std::string());
  };
  deps.access_log = std::move(options.access_log);
  deps.doctor = [self] { return self->doctorReport(); };
  deps.pending_queue = [self](int64_t newer_than_ms) {
    return self->queue_->current(newer_than_ms);
  };
  deps.usage = api::UsageService::overSlurm(
      std::move(*usage_client), api::ownershipFromStore(store),
      {.staging_root = site.site.staging_root, .service_user = site.site.slurm.user}, d->clock_);
  deps.slurm_api = [self, configured = site.site.slurm.api_version] {
    return slurm::choiceJson(configured, self->slurm_->choice());
  };
  d->token_count_ = options.tokens.size();
  for (const api::ApiToken& token : options.tokens) d->mapped_users_.push_back(token.runAs());
  d->server_secrets_ = std::move(options.server_secrets);
  auto server =
      api::ApiServer::start(std::move(deps), std::move(options.http), std::move(options.tokens));
  if (!server) return tl::unexpected(server.error());
  d->server_ = std::move(*server);
  d->loop_->start();
  return d;
}

Daemon::~Daemon() {
  stop();
}

void Daemon::stop() {
  if (server_) server_->stop();
  if (loop_) loop_->stop();
}

Result<nlohmann::json> Daemon::doctorReport() {
  std::unique_lock<std::mutex> lock(doctor_mu_, std::try_to_lock);
  if (!lock.owns_lock()) {
    return fail(api::codes::kBusy, "",
                "doctor's checks are running already; try again in a moment");
  }
  // The API's report leaves the database checks out (`tuneplane doctor` makes them): this
  // replica is using the database, and its /readyz and /metrics already tell.
  const pipeline::SiteContext& site = launcher_->site();
  doctor::DoctorInput input{site.site, site.registry_path, site.registry, std::nullopt,
                            server_secrets_};
  doctor::SlurmAccess access;
  access.client = probe_.get();
  access.tokens = &probe_->tokens();
  // The main client's choice: it says what the server offered, not only what was taken.
  access.negotiate = [this] { return slurm_->negotiate(); };
  access.read_path = [this](const std::string& path) { return probe_->readPath("doctor", path); };
  access.mechanism = identity_mechanism_;
  {
    std::lock_guard<std::mutex> lock(reload_mu_);  // reload() replaces them
    input.mapped_users = mapped_users_;
  }
  doctor::PosixHostProbe host;
  staging::PosixOsUsers users;
  staging::PosixStagingFs fs;
  // The launcher's verifier: an artifact it verified for a submit is a cache hit here, so a
  // check does not re-read a multi-GB image that has not changed.
  doctor::DoctorEnv env{access, host, users, fs, verifier_, clock_, {}};
  const auto checks = doctor::runDoctor(input, env);
  return doctor::reportToJson(site.site_path, checks, /*strict=*/false);
}

Result<std::string> Daemon::reload(SiteReload next) {
  std::lock_guard<std::mutex> lock(reload_mu_);
  std::vector<std::string> done;
  // First the one step that can fail, so that a failure leaves everything as it was.
  if (next.tls.has_value() == server_->tlsFiles().has_value()) {
    if (auto reloaded = server_->reloadTls(next.tls); !reloaded) {
      return tl::unexpected(reloaded.error());
    }
    if (next.tls) done.push_back("TLS certificate and key re-read");
  }
  done.push_back(fmt::format("{} API tokens (were {})", next.tokens.size(), token_count_));
  token_count_ = next.tokens.size();
  mapped_users_.clear();
  for (const api::ApiToken& token : next.tokens) mapped_users_.push_back(token.runAs());
  server_->replaceTokens(std::move(next.tokens));
  const std::size_t runtimes_before = launcher_->site().registry.runtimes.size();
  done.push_back(fmt::format("{} runtimes from {} (were {})",
                             next.registry.registry.runtimes.size(), next.registry.path,
                             runtimes_before));
  launcher_->replaceRegistry(std::move(next.registry.path), std::move(next.registry.registry));
  std::string summary;
  for (const auto& part : done) summary += (summary.empty() ? "" : "; ") + part;
  if (!next.restart_needed.empty()) {
    std::string fields;
    for (const auto& field : next.restart_needed) fields += (fields.empty() ? "" : ", ") + field;
    summary += "; changed, and applied only by a restart: " + fields;
  }
  return summary;
}

std::string Daemon::loopMetrics() const {
  const control::TickReport last = loop_->lastReport();
  return fmt::format(
      "# HELP tuneplane_control_ticks_total Control loop ticks since the start.\n"
      "# TYPE tuneplane_control_ticks_total counter\n"
      "tuneplane_control_ticks_total {}\n"
      "# HELP tuneplane_control_last_tick What the last tick did, by kind.\n"
      "# TYPE tuneplane_control_last_tick gauge\n"
      "tuneplane_control_last_tick{{kind=\"active_jobs\"}} {}\n"
      "tuneplane_control_last_tick{{kind=\"submits\"}} {}\n"
      "tuneplane_control_last_tick{{kind=\"fetches\"}} {}\n"
      "tuneplane_control_last_tick{{kind=\"cancels\"}} {}\n"
      "tuneplane_control_last_tick{{kind=\"commits\"}} {}\n"
      "tuneplane_control_last_tick{{kind=\"errors\"}} {}\n",
      loop_->ticks(), last.jobs, last.submits, last.fetches, last.cancels, last.commits,
      last.errors);
}

}  // namespace tuneplane::server
