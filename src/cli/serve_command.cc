// `tuneplane serve --site FILE [--db PATH] [--listen HOST:PORT]`: the control plane's
// daemon — the reconciler and the /v1 HTTP API in one process (server/daemon.h). Settings come
// from the site file's `server:` section (api/server_config.h); the flags override them.
// SIGTERM or SIGINT stops it at a safe point (exit 0); Slurm jobs keep running and the next
// start picks them up from the store. The log goes to stderr — JSON lines by default, with a
// record per transition and per slurmrestd error (cli/log_format.h) — and the access log
// (one JSON line per request, never a token) to stdout. SIGHUP re-reads server.tls's
// certificate and key. Plain HTTP on a non-loopback address is refused unless the site file
// says server.insecure_http: true (a bearer token would cross the network in clear text).
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "api/error_codes.h"
#include "api/server_config.h"
#include "cli/commands.h"
#include "cli/log_format.h"
#include "cli/site_environment.h"
#include "client_cli/output.h"
#include "pipeline/launch_pipeline.h"
#include "server/daemon.h"
#include "store/open_store.h"

namespace tuneplane::cli {
namespace {

struct ServeFlags {
  std::optional<std::string> site_file;
  std::optional<std::string> db;
  std::optional<std::string> listen;
  std::string log_format = "json";
};

[[noreturn]] void failLines(const Errors& errors, int code) {
  failWith(errors, OutputFormat::kText, code, std::cout, std::cerr);
}

// The soft descriptor limit up to the hard one, so that server.max_connections, not the
// descriptor limit, decides how many clients are served.
void raiseDescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    spdlog::warn("serve: cannot raise the descriptor limit above {}", before);
  }
}

// Plain HTTP only on loopback, unless the operator said otherwise (and is told every time).
void checkListenSecurity(const api::ServerConfig& config, const api::ListenAddress& listen,
                         const std::string& field) {
  if (config.tls || api::isLoopbackHost(listen.host)) return;
  if (!config.insecure_http) {
    failLines({{"server.insecure_listen", field,
                "'" + listen.host +
                    "' is not a loopback address: bearer tokens would cross the network in "
                    "clear text. Configure server.tls (cert, key), or set "
                    "server.insecure_http: true to accept that"}},
              kExitInvalid);
  }
  spdlog::warn(
      "serve: listening on {} over plain HTTP (server.insecure_http: true): bearer tokens "
      "cross the network in clear text; configure server.tls",
      listen.host);
}

// Names this replica in the lease row and the log: host and process id.
std::string replicaName() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(::getpid());
}

void runServe(const ServeFlags& flags) {
  // Every thread started from here on inherits this mask, so the signals reach only the
  // sigwait below: no handler runs in the middle of a store write.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // Before anything logs, so every line of the run has one format.
  server::EventLog::Sink records = installServeLogging(*parseLogFormat(flags.log_format));

  auto context = pipeline::loadSiteContext(flags.site_file, siteEnvironmentFromProcess());
  if (!context) failLines(context.error(), kExitInvalid);
  auto config = api::loadServerConfig(context->site_path);
  if (!config) failLines(config.error(), kExitInvalid);
  if (flags.db) config->db = *flags.db;
  if (flags.listen) config->listen = *flags.listen;
  const std::string listen_field = flags.listen ? "--listen" : "server.listen";
  auto listen = api::parseListen(config->listen, listen_field);
  if (!listen) failLines({listen.error()}, kExitInvalid);
  checkListenSecurity(*config, *listen, listen_field);
  raiseDescriptorLimit();
  if (config->tokens.empty()) {
    spdlog::warn("serve: server.tokens is empty: every /v1 request will be refused (401)");
  }

  store::LeaseOptions lease;
  lease.lease_seconds = config->lease_seconds;
  lease.holder = replicaName();
  lease.on_change = [](bool leader, int64_t epoch, const std::string& why) {
    if (leader) {
      spdlog::info("serve: lease taken, epoch {}: this replica runs the control loop", epoch);
    } else {
      spdlog::warn("serve: lease lost, epoch {} ({}): this replica is a standby", epoch, why);
    }
  };
  auto opened = store::openJobStore(config->db, config->db_password_file, std::move(lease));
  if (!opened) failLines({opened.error()}, kExitFailure);
  store::JobStore& job_store = *opened->store;

  auto access =
      std::make_shared<spdlog::logger>("access", std::make_shared<spdlog::sinks::stdout_sink_mt>());
  access->set_pattern("%v");
  access->flush_on(spdlog::level::info);  // a line per request, even when stdout is a pipe
  server::DaemonOptions options;
  options.server = {*listen,
                    config->tokens,
                    config->max_body_bytes,
                    config->threads,
                    config->max_header_bytes,
                    config->request_timeout,
                    config->idle_timeout,
                    config->max_connections,
                    config->max_connections_per_client,
                    config->tls};
  options.poll_interval = config->poll_interval;
  options.submit_concurrency = config->submit_concurrency;
  options.access_log = [access](const std::string& line) { access->info(line); };
  options.event_log = std::move(records);
  if (store::LeaderLease* replica = opened->lease) {
    options.more_metrics = [replica] { return store::renderLeaseMetrics(*replica); };
  }
  auto daemon = server::Daemon::start(*context, job_store, std::move(options));
  if (!daemon) {
    failLines({daemon.error()},
              daemon.error().code == api::codes::kListen ? kExitFailure : kExitInvalid);
  }
  if (opened->postgres != nullptr) {
    // A job created or cancelled through another replica wakes this one's loop at once.
    server::Daemon* running = daemon->get();
    if (auto listening = opened->postgres->listenForWakeups([running] { running->loop().wake(); });
        !listening) {
      spdlog::warn("serve: no wake-ups from other replicas (each waits for its poll): {}",
                   listening.error().message);
    }
  }
  spdlog::info("serve: listening on {} (db {}, polling every {} ms)", (*daemon)->baseUrl(),
               store::describeDb(config->db), config->poll_interval.count());

  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) != 0 || signal_number == SIGHUP) {
    if (signal_number != SIGHUP) continue;
    signal_number = 0;
    if (!config->tls) {
      spdlog::info("serve: SIGHUP received; no server.tls to reload");
    } else if (auto reloaded = (*daemon)->reloadTls(); reloaded) {
      spdlog::info("serve: SIGHUP received; TLS certificate and key reloaded");
    } else {
      spdlog::error("serve: SIGHUP received; TLS reload failed, the old certificate stays: {}",
                    reloaded.error().message);
    }
  }
  spdlog::info("serve: {} received; stopping at a safe point (Slurm jobs keep running)",
               signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  if (opened->postgres != nullptr) opened->postgres->stopWakeups();  // before the loop goes
  (*daemon)->stop();
  spdlog::info("serve: stopped");
}

}  // namespace

void addServeCommand(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Run the control plane: the reconciler and the /v1 HTTP API (docs/operators.md, 'tuneplane\n"
      "serve and the /v1 API'). Settings from the site file's server: section; flags override.\n"
      "SIGTERM/SIGINT stop it at a safe point; SIGHUP reloads server.tls. Exit codes: 0\n"
      "stopped by a signal; 1 the store cannot be opened or the address cannot be bound;\n"
      "2 a bad site file or flag, or a non-loopback listen without server.tls (or\n"
      "server.insecure_http: true).");
  cmd->add_option(
      "--site", flags->site_file,
      std::string("Site file (YAML) with a server: section; default: $") + pipeline::kSiteFileEnv);
  cmd->add_option(
      "--db", flags->db,
      "SQLite file, or a postgresql:// URI without its password (default: server.db, else "
      "tuneplane.db beside the site file)");
  cmd->add_option("--listen", flags->listen,
                  "HOST:PORT to listen on (default: server.listen, else 127.0.0.1:8080)");
  cmd->add_option("--log-format", flags->log_format,
                  "stderr log: json (one object per line: messages, transitions, slurmrestd\n"
                  "errors) or text (default: json)")
      ->check(CLI::IsMember({"json", "text"}));
  cmd->callback([flags] { runServe(*flags); });
}

}  // namespace tuneplane::cli
