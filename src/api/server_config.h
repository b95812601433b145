// The `server:` section of the site file: where `tuneplane serve` listens, its database,
// its API tokens and its request limits. The section is read here, beside the rest of the
// site file that catalog/ reads (which only lets the key through), so the API's settings
// stay in the API's module. Every problem is reported with its field path.
// Thread-safety: pure functions.
//
//   server:
//     listen: 127.0.0.1:8080          # HOST:PORT; port 0 takes any free port
//     db: tuneplane.db                # relative to the site file's directory, or a
//                                     # postgresql://host/db URI (store/open_store.h);
//                                     # default $STATE_DIRECTORY/tuneplane.db under systemd,
//                                     # else tuneplane.db beside the site file
//     db_password_file: pg.pass       # PostgreSQL's password, mode 0600; or PGPASSFILE
//     lease_seconds: 10               # PostgreSQL replicas: a dead leader's replacement bound
//     poll_interval: 10s              # how often the control loop ticks
//     max_body_bytes: 1048576         # POST bodies larger than this get 413
//     workdir_max_bytes: 67108864     # POST /v1/workdirs: a code folder's files, in all
//     workdir_max_files: 2000         # … and its files and folders (common/workdir_tree.h)
//     threads: 8                      # worker threads that run the route handlers
//     submit_concurrency: 8           # attempts staged and submitted at once (1..64)
//     request_timeout: 30s            # a whole request (headers and body), and each answer
//     idle_timeout: 60s               # a kept-alive connection with no request is closed
//     max_connections: 1024           # in total; the excess is refused at once (503)
//     max_connections_per_client: 64  # per client IP address; the excess is refused (503)
//     client_ipv6_prefix: 64          # IPv6 clients count per network of this many bits
//     max_header_bytes: 16384         # request line and headers; larger gets 431
//     trusted_proxies: [127.0.0.1]    # addresses/CIDRs whose X-Forwarded-For is believed
//     tls:                            # HTTPS; both PEM files, relative to the site file
//       cert: tls/cert.pem            # re-read on SIGHUP
//       key: tls/key.pem
//     insecure_http: false            # true: allow a non-loopback listen without tls
//     tokens:                         # re-read on SIGHUP (`tuneplane token add` writes them)
//       - user: alice
//         token_sha256: <64 hex>      # sha256 of the bearer token; the token is never stored
//         admin: false
//         slurm_account: [team-a]     # Slurm accounts alice's jobs may be charged to; the
//         qos: [normal, high]         # first is the default (a single name is a list of one)
//         unix_user: alice            # slurm.identity per_user: the Unix user her jobs run as
//                                     # (default: the same name as user)
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/network_ranges.h"
#include "common/result.h"
#include "common/workdir_tree.h"

namespace tuneplane::api {

inline constexpr const char* kDefaultListen = "127.0.0.1:8080";
inline constexpr const char* kDefaultDbName = "tuneplane.db";
inline constexpr std::size_t kDefaultMaxBodyBytes = 1024 * 1024;
inline constexpr int kDefaultThreads = 8;
inline constexpr std::size_t kDefaultMaxHeaderBytes = 16 * 1024;
inline constexpr std::chrono::milliseconds kDefaultRequestTimeout{30'000};
inline constexpr std::chrono::milliseconds kDefaultIdleTimeout{60'000};
inline constexpr int kDefaultMaxConnections = 1024;
inline constexpr int kDefaultMaxConnectionsPerClient = 64;
// An IPv6 client is counted per /64 (network_ranges.h, clientShareKey): the usual size of one
// site's or one host's allocation, inside which a client can rotate addresses at will.
inline constexpr int kDefaultClientIpv6Prefix = 64;
// Attempts the control loop stages and submits at once, each on its own slurmrestd
// connection: below slurmrestd's default of 20 threads, leaving room for the loop's polls,
// /readyz and other clients (docs/decisions.md, "The loop launches many attempts at once").
inline constexpr int kDefaultSubmitConcurrency = 8;
inline constexpr int kMaxSubmitConcurrency = 64;

// The one route whose body may be larger than max_body_bytes: a code folder's archive
// (POST /v1/workdirs), bounded by HttpServerOptions::workdir instead (workdirBodyLimit).
inline constexpr std::string_view kWorkdirUploadPath = "/v1/workdirs";
inline constexpr std::uint64_t kMaxWorkdirBytes = 1024ull * 1024 * 1024;  // what a site may set
inline constexpr std::size_t kMaxWorkdirFiles = 100'000;

// The largest ustar archive of a folder within `limits`: its contents, plus per entry a
// 512-byte header and up to 511 bytes of padding, plus the two end blocks.
constexpr std::size_t workdirBodyLimit(const workdir::Limits& limits) {
  return static_cast<std::size_t>(limits.max_bytes) + (limits.max_files + 2) * 1024;
}

// server.tls: the PEM certificate chain and private key (absolute once loaded).
struct TlsFiles {
  std::string cert = {};
  std::string key = {};

  bool operator==(const TlsFiles&) const = default;
};

struct ApiToken {
  std::string user = {};
  std::string token_sha256 = {};  // 64 lower-case hex digits
  bool admin = false;
  // The Slurm accounts and QOS this user's jobs may be charged to (server.tokens[].
  // slurm_account, .qos), the first of each the default; empty: the site's slurm.account /
  // slurm.qos, and a spec may not choose (api/job_charge.h).
  std::vector<std::string> slurm_accounts = {};
  std::vector<std::string> qos = {};
  // The Unix (and Slurm) user this user's jobs run as in slurm.identity: per_user
  // (server.tokens[].unix_user); empty: the same name as `user`.
  std::string unix_user = {};

  // The Unix user the jobs of this token's user run as under per_user.
  const std::string& runAs() const { return unix_user.empty() ? user : unix_user; }

  bool operator==(const ApiToken&) const = default;
};

struct ListenAddress {
  std::string host = {};
  int port = 0;  // 0: any free port

  bool operator==(const ListenAddress&) const = default;
};

// Everything the HTTP server needs, from the site file's server: section to the transport:
// one type with named fields, built with designated initializers
// (`{.listen = …, .max_body_bytes = …}`) and handed down whole, never copied field by field
// into a look-alike struct, so that two limits of one type cannot be swapped silently.
struct HttpServerOptions {
  // The site file's default is kDefaultListen; a server built in code takes a free port.
  ListenAddress listen{"127.0.0.1", 0};
  int threads = kDefaultThreads;  // worker threads that run the handlers
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  std::size_t max_header_bytes = kDefaultMaxHeaderBytes;
  std::chrono::milliseconds request_timeout = kDefaultRequestTimeout;
  std::chrono::milliseconds idle_timeout = kDefaultIdleTimeout;
  int max_connections = kDefaultMaxConnections;
  int max_connections_per_client = kDefaultMaxConnectionsPerClient;
  int client_ipv6_prefix = kDefaultClientIpv6Prefix;  // bits of an IPv6 client's network
  // Peers whose X-Forwarded-For names the client (network_ranges.h); empty: none.
  NetworkRanges trusted_proxies = {};
  std::optional<TlsFiles> tls = std::nullopt;  // absolute paths; HTTPS when set
  // POST /v1/workdirs: the limits of a code folder (server.workdir_max_bytes,
  // .workdir_max_files), checked by the route; the transport lets that route's body be
  // workdirBodyLimit(workdir), whatever max_body_bytes is.
  workdir::Limits workdir = {};

  bool operator==(const HttpServerOptions&) const = default;
};

struct ServerConfig {
  bool present = false;  // the site file has a server: section (every value below defaults)
  HttpServerOptions http;
  std::string db;  // absolute or relative to the working directory; set by the loader
  std::optional<std::string> db_password_file;  // absolute or relative to the working dir
  int lease_seconds = 10;                       // store/leader_lease.h (PostgreSQL only)
  std::chrono::milliseconds poll_interval{10'000};
  std::vector<ApiToken> tokens;
  int submit_concurrency = kDefaultSubmitConcurrency;
  bool insecure_http = false;
};

// "HOST:PORT" (IPv6 as "[::1]:8080"). Errors: "server.invalid_listen" (field `field`).
Result<ListenAddress> parseListen(std::string_view text, const std::string& field = "listen");

// Whether `host` is a loopback address (127.0.0.0/8, ::1) or "localhost": the only hosts
// serve listens on over plain HTTP without server.insecure_http.
bool isLoopbackHost(std::string_view host);

// Where the database goes when server.db is not set: systemd's StateDirectory= (the
// STATE_DIRECTORY variable it sets, the first of its ':'-separated paths) when given, else
// beside the site file.
struct ServerDefaults {
  std::optional<std::string> state_directory;  // $STATE_DIRECTORY, as the process got it
};

// The database serve opens when the site names none: <state dir>/tuneplane.db, else
// <site dir>/tuneplane.db (else tuneplane.db).
std::string defaultDbPath(const std::optional<std::string>& site_dir,
                          const ServerDefaults& defaults);

// The section from the site file's text; `site_dir` resolves a relative `db` (nullopt:
// relative paths are refused). Errors: "server.<kind>" per problem (unknown_field,
// wrong_type, missing_field, invalid_listen, invalid_hash, duplicate_token, invalid_value,
// invalid_proxy).
Checked<ServerConfig> parseServerConfig(std::string_view site_yaml,
                                        const std::optional<std::string>& site_dir,
                                        const ServerDefaults& defaults = {});
// The same from the site file. Errors: parseServerConfig's and "server.file_unreadable".
Checked<ServerConfig> loadServerConfig(const std::string& site_path,
                                       const ServerDefaults& defaults = {});

}  // namespace tuneplane::api
