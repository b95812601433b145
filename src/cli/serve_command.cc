// `tuneplane serve --site FILE [--db PATH] [--listen HOST:PORT]`: the control plane's
// daemon — the reconciler and the /v1 HTTP API in one process (server/daemon.h). Settings come
// from the site file's `server:` section (api/server_config.h); the flags override them.
// SIGTERM or SIGINT stops it at a safe point (exit 0); Slurm jobs keep running and the next
// start picks them up from the store. The log goes to stderr — JSON lines by default, with a
// record per transition and per slurmrestd error (cli/log_format.h) — and the access log
// (one JSON line per request, never a token) to stdout. SIGHUP (`systemctl reload`) re-reads
// the site's tokens, its runtime registry and server.tls's certificate and key, and puts them
// in force together or not at all (server/site_reload.h). Plain HTTP on a non-loopback
// address is refused unless the site file says server.insecure_http: true (a bearer token
// would cross the network in clear text). Under systemd the database defaults to
// $STATE_DIRECTORY/tuneplane.db (StateDirectory=tuneplane: /var/lib/tuneplane).
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "api/error_codes.h"
#include "api/server_config.h"
#include "cli/commands.h"
#include "cli/credential_gate.h"
#include "cli/log_format.h"
#include "cli/site_environment.h"
#include "client_cli/output.h"
#include "pipeline/launch_pipeline.h"
#include "server/daemon.h"
#include "store/open_store.h"
#include "store/postgres_job_store.h"

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
void checkListenSecurity(const api::ServerConfig& config, const std::string& field) {
  const api::ListenAddress& listen = config.http.listen;
  if (config.http.tls || api::isLoopbackHost(listen.host)) return;
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

// What a failed open of a SQLite store needs next: a directory this user can write.
std::string storeHint(const std::string& db) {
  if (store::PostgresJobStore::isUri(db)) return "";
  const std::filesystem::path dir = std::filesystem::absolute(db).parent_path();
  if (::access(dir.c_str(), W_OK) == 0) return "";
  return " (this user cannot write " + dir.string() +
         ": set server.db to a file in a directory it can write — under systemd the default "
         "is the unit's StateDirectory, $STATE_DIRECTORY/tuneplane.db)";
}

// The cluster's nodes as slurmrestd lists them, to tell whether this host is one (the
// credential rule for a host that is also a node). A slurmrestd that cannot be asked leaves
// that one rule unchecked, as doctor does then, and says so.
std::vector<std::string> nodesForCredentialRule(const catalog::SiteConfig& site) {
  auto nodes = clusterNodeNames(site);
  if (nodes) return *nodes;
  spdlog::warn(
      "serve: cannot ask slurmrestd for the cluster's nodes ({}), so whether this host is also "
      "a compute node is not checked now; it is at the next reload, and `tuneplane doctor` "
      "checks it",
      nodes.error().describe());
  return {};
}

// The site's credential files out of the jobs' reach and readable by serve's user alone
// (doctor/credential_checks.h), or serve does not start — unless the site accepts the risk.
void checkCredentials(const pipeline::SiteContext& site, const api::ServerConfig& config) {
  std::vector<std::string> accepted;
  const Errors refusals =
      credentialRefusals(site, config, nodesForCredentialRule(site.site), accepted);
  for (const auto& warning : accepted) spdlog::warn("serve: {}", warning);
  if (!refusals.empty()) failLines(refusals, kExitInvalid);
}

void logReload(Checked<server::SiteReload> next, const pipeline::SiteContext& site,
               const api::ServerConfig& running, server::Daemon& daemon) {
  if (next) {
    // A new TLS key is held to the credential rule as the one at start was.
    api::ServerConfig reloaded = running;
    reloaded.http.tls = next->tls;
    std::vector<std::string> accepted;
    if (Errors refusals =
            credentialRefusals(site, reloaded, nodesForCredentialRule(site.site), accepted);
        !refusals.empty()) {
      next = failAll(std::move(refusals));
    }
  }
  if (!next) {
    std::string why;
    for (const auto& e : next.error()) why += (why.empty() ? "" : "; ") + e.describe();
    spdlog::error(
        "serve: reload refused: the tokens, runtime registry and TLS files in force stay "
        "as they were: {}",
        why);
    return;
  }
  auto applied = daemon.reload(*next);
  if (!applied) {
    spdlog::error(
        "serve: reload refused: the tokens, runtime registry and TLS files in force stay "
        "as they were: {}",
        applied.error().describe());
    return;
  }
  spdlog::info("serve: reloaded: {}", *applied);
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
  const char* state_directory = std::getenv("STATE_DIRECTORY");
  const api::ServerDefaults defaults{state_directory ? std::optional<std::string>(state_directory)
                                                     : std::nullopt};
  auto from_file = api::loadServerConfig(context->site_path, defaults);
  if (!from_file) failLines(from_file.error(), kExitInvalid);
  api::ServerConfig config = *from_file;
  if (flags.db) config.db = *flags.db;
  if (flags.listen) {
    auto listen = api::parseListen(*flags.listen, "--listen");
    if (!listen) failLines({listen.error()}, kExitInvalid);
    config.http.listen = *listen;
  }
  checkListenSecurity(config, flags.listen ? "--listen" : "server.listen");
  checkCredentials(*context, config);
  raiseDescriptorLimit();
  if (config.tokens.empty()) {
    spdlog::warn(
        "serve: server.tokens is empty: every /v1 request will be refused (401). Add a user "
        "with `tuneplane token add USER --site {}`, then reload (`systemctl reload tuneplane`, "
        "or SIGHUP)",
        context->site_path);
  }

  store::LeaseOptions lease;
  lease.lease_seconds = config.lease_seconds;
  lease.holder = replicaName();
  lease.on_change = [](bool leader, int64_t epoch, const std::string& why) {
    if (leader) {
      spdlog::info("serve: lease taken, epoch {}: this replica runs the control loop", epoch);
    } else {
      spdlog::warn("serve: lease lost, epoch {} ({}): this replica is a standby", epoch, why);
    }
  };
  auto opened = store::openJobStore(config.db, config.db_password_file, std::move(lease));
  if (!opened) {
    Error why = opened.error();
    why.message += storeHint(config.db);
    failLines({why}, kExitFailure);
  }
  store::JobStore& job_store = *opened->store;

  auto access =
      std::make_shared<spdlog::logger>("access", std::make_shared<spdlog::sinks::stdout_sink_mt>());
  access->set_pattern("%v");
  access->flush_on(spdlog::level::info);  // a line per request, even when stdout is a pipe
  server::DaemonOptions options;
  options.http = config.http;
  options.tokens = config.tokens;
  options.server_secrets = serverSecrets(config);
  options.poll_interval = config.poll_interval;
  options.submit_concurrency = config.submit_concurrency;
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
               store::describeDb(config.db), config.poll_interval.count());

  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) != 0 || signal_number == SIGHUP) {
    if (signal_number != SIGHUP) continue;
    signal_number = 0;
    spdlog::info(
        "serve: SIGHUP received: re-reading the tokens, the runtime registry and the "
        "TLS files of {}",
        context->site_path);
    logReload(server::readSiteReload(context->site_path, siteEnvironmentFromProcess(), defaults,
                                     *from_file),
              *context, config, **daemon);
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
      "SIGTERM/SIGINT stop it at a safe point; SIGHUP reloads the tokens, the runtime registry\n"
      "and server.tls together (all or none). Exit codes: 0\n"
      "stopped by a signal; 1 the store cannot be opened or the address cannot be bound;\n"
      "2 a bad site file or flag, or a non-loopback listen without server.tls (or\n"
      "server.insecure_http: true).");
  cmd->add_option(
      "--site", flags->site_file,
      std::string("Site file (YAML) with a server: section; default: $") + pipeline::kSiteFileEnv);
  cmd->add_option(
      "--db", flags->db,
      "SQLite file, or a postgresql:// URI without its password (default: server.db, else "
      "$STATE_DIRECTORY/tuneplane.db under systemd, else tuneplane.db beside the site file)");
  cmd->add_option("--listen", flags->listen,
                  "HOST:PORT to listen on (default: server.listen, else 127.0.0.1:8080)");
  cmd->add_option("--log-format", flags->log_format,
                  "stderr log: json (one object per line: messages, transitions, slurmrestd\n"
                  "errors) or text (default: json)")
      ->check(CLI::IsMember({"json", "text"}));
  cmd->callback([flags] { runServe(*flags); });
}

}  // namespace tuneplane::cli
