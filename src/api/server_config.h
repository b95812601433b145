// The `server:` section of the site file: where `tuneplane serve` listens, its database,
// its API tokens and its request limits. The section is read here, beside the rest of the
// site file that catalog/ reads (which only lets the key through), so the API's settings
// stay in the API's module. Every problem is reported with its field path.
// Thread-safety: pure functions.
//
//   server:
//     listen: 127.0.0.1:8080          # HOST:PORT; port 0 takes any free port
//     db: tuneplane.db                # relative to the site file's directory, or a
//                                     # postgresql://host/db URI (store/open_store.h)
//     db_password_file: pg.pass       # PostgreSQL's password, mode 0600; or PGPASSFILE
//     lease_seconds: 10               # PostgreSQL replicas: a dead leader's replacement bound
//     poll_interval: 10s              # how often the control loop ticks
//     max_body_bytes: 1048576         # POST bodies larger than this get 413
//     threads: 8                      # worker threads that run the route handlers
//     submit_concurrency: 8           # attempts staged and submitted at once (1..64)
//     request_timeout: 30s            # a whole request (headers and body), and each answer
//     idle_timeout: 60s               # a kept-alive connection with no request is closed
//     max_connections: 1024           # in total; the excess is refused at once (503)
//     max_connections_per_client: 64  # per client IP address; the excess is refused (503)
//     max_header_bytes: 16384         # request line and headers; larger gets 431
//     tls:                            # HTTPS; both PEM files, relative to the site file
//       cert: tls/cert.pem            # re-read on SIGHUP
//       key: tls/key.pem
//     insecure_http: false            # true: allow a non-loopback listen without tls
//     tokens:
//       - user: alice
//         token_sha256: <64 hex>      # sha256 of the bearer token; the token is never stored
//         admin: false
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

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
// Attempts the control loop stages and submits at once, each on its own slurmrestd
// connection: below slurmrestd's default of 20 threads, leaving room for the loop's polls,
// /readyz and other clients (docs/decisions.md, "Launching attempts concurrently").
inline constexpr int kDefaultSubmitConcurrency = 8;
inline constexpr int kMaxSubmitConcurrency = 64;

// server.tls: the PEM certificate chain and private key (absolute once loaded).
struct TlsFiles {
  std::string cert;
  std::string key;
};

struct ApiToken {
  std::string user;
  std::string token_sha256;  // 64 lower-case hex digits
  bool admin = false;
};

struct ServerConfig {
  bool present = false;  // the site file has a server: section (every value below defaults)
  std::string listen = kDefaultListen;
  std::string db;  // absolute or relative to the working directory; set by the loader
  std::optional<std::string> db_password_file;  // absolute or relative to the working dir
  int lease_seconds = 10;                       // store/leader_lease.h (PostgreSQL only)
  std::chrono::milliseconds poll_interval{10'000};
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  int threads = kDefaultThreads;
  std::vector<ApiToken> tokens;
  std::chrono::milliseconds request_timeout = kDefaultRequestTimeout;
  std::chrono::milliseconds idle_timeout = kDefaultIdleTimeout;
  int max_connections = kDefaultMaxConnections;
  int max_connections_per_client = kDefaultMaxConnectionsPerClient;
  int submit_concurrency = kDefaultSubmitConcurrency;
  std::size_t max_header_bytes = kDefaultMaxHeaderBytes;
  std::optional<TlsFiles> tls;
  bool insecure_http = false;
};

struct ListenAddress {
  std::string host;
  int port = 0;  // 0: any free port
};

// "HOST:PORT" (IPv6 as "[::1]:8080"). Errors: "server.invalid_listen" (field `field`).
Result<ListenAddress> parseListen(std::string_view text, const std::string& field = "listen");

// Whether `host` is a loopback address (127.0.0.0/8, ::1) or "localhost": the only hosts
// serve listens on over plain HTTP without server.insecure_http.
bool isLoopbackHost(std::string_view host);

// The section from the site file's text; `site_dir` resolves a relative `db` (nullopt:
// relative paths are refused). Errors: "server.<kind>" per problem (unknown_field,
// wrong_type, missing_field, invalid_listen, invalid_hash, duplicate_user, invalid_value).
Checked<ServerConfig> parseServerConfig(std::string_view site_yaml,
                                        const std::optional<std::string>& site_dir);
// The same from the site file. Errors: parseServerConfig's and "server.file_unreadable".
Checked<ServerConfig> loadServerConfig(const std::string& site_path);

}  // namespace tuneplane::api
