// The `server:` section of the site file: where `tuneplane serve` listens, its database,
// its API tokens and its request limits. The section is read here, beside the rest of the
// site file that catalog/ reads (which only lets the key through), so the API's settings
// stay in the API's module. Every problem is reported with its field path.
// Thread-safety: pure functions.
//
//   server:
//     listen: 127.0.0.1:8080          # HOST:PORT; port 0 takes any free port
//     db: tuneplane.db                # relative to the site file's directory
//     poll_interval: 10s              # how often the control loop ticks
//     max_body_bytes: 1048576         # POST bodies larger than this get 413
//     threads: 8                      # HTTP worker threads
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

struct ApiToken {
  std::string user;
  std::string token_sha256;  // 64 lower-case hex digits
  bool admin = false;
};

struct ServerConfig {
  std::string listen = kDefaultListen;
  std::string db;  // absolute or relative to the working directory; set by the loader
  std::chrono::milliseconds poll_interval{10'000};
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  int threads = kDefaultThreads;
  std::vector<ApiToken> tokens;
};

struct ListenAddress {
  std::string host;
  int port = 0;  // 0: any free port
};

// "HOST:PORT" (IPv6 as "[::1]:8080"). Errors: "server.invalid_listen" (field `field`).
Result<ListenAddress> parseListen(std::string_view text, const std::string& field = "listen");

// The section from the site file's text; `site_dir` resolves a relative `db` (nullopt:
// relative paths are refused). Errors: "server.<kind>" per problem (unknown_field,
// wrong_type, missing_field, invalid_listen, invalid_hash, duplicate_user, invalid_value).
Checked<ServerConfig> parseServerConfig(std::string_view site_yaml,
                                        const std::optional<std::string>& site_dir);
// The same from the site file. Errors: parseServerConfig's and "server.file_unreadable".
Checked<ServerConfig> loadServerConfig(const std::string& site_path);

}  // namespace tuneplane::api
