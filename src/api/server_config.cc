// See server_config.h.
#include "api/server_config.h"

#include <charconv>
#include <set>

#include "catalog/file_paths.h"
#include "common/text_checks.h"
#include "spec/names.h"
#include "spec/yaml_reader.h"
#include "store/postgres_job_store.h"

namespace tuneplane::api {
namespace {

using spec::YamlReader;
using R = spec::YamlReader;

// tokens[i].<key>: one name, or a list of them (the first is the default).
void readNames(YamlReader& r, const YAML::Node& entry, const char* key, const std::string& path,
               std::vector<std::string>& out) {
  const YAML::Node node = R::get(entry, key);
  if (!R::present(node)) return;
  const std::string field = R::child(path, key);
  std::vector<std::pair<YAML::Node, std::string>> items;
  if (node.IsSequence()) {
    if (node.size() == 0) {
      r.report("invalid_value", field, "an empty list: leave the key out instead");
      return;
    }
    for (std::size_t i = 0; i < node.size(); ++i) items.emplace_back(node[i], R::index(field, i));
  } else {
    items.emplace_back(node, field);
  }
  std::set<std::string> seen;
  for (const auto& [item, item_path] : items) {
    auto name = r.str(item, item_path);
    if (!name) continue;
    if (!spec::isSlurmName(*name)) {
      r.report("invalid_value", item_path,
               "'" + *name + "' is not a Slurm name (letters, digits, '_', '-', '.'; at most 64)");
    } else if (!seen.insert(*name).second) {
      r.report("invalid_value", item_path, "'" + *name + "' is listed twice");
    } else {
      out.push_back(*name);
    }
  }
}

void parseTokens(YamlReader& r, const YAML::Node& list, std::vector<ApiToken>& out) {
  if (!list.IsSequence()) {
    r.report("wrong_type", "server.tokens",
             "expected a list of {user, token_sha256, admin, slurm_account, qos, unix_user}");
    return;
  }
  std::set<std::string> hashes;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = R::index("server.tokens", i);
    const YAML::Node entry = list[i];
    if (!r.checkMap(entry, path,
                    {"user", "token_sha256", "admin", "slurm_account", "qos", "unix_user"})) {
      continue;
    }
    ApiToken token;
    if (auto user = r.str(r.require(entry, "user", path), R::child(path, "user"))) {
      token.user = *user;
    }
    const YAML::Node hash = r.require(entry, "token_sha256", path);
    if (R::present(hash)) {
      if (auto text = r.str(hash, R::child(path, "token_sha256"))) {
        if (!isSha256Hex(*text)) {
          r.report("invalid_hash", R::child(path, "token_sha256"),
                   "expected the token's SHA-256 as 64 lower-case hex digits "
                   "(`tuneplane token add USER --site FILE` writes it), never the token itself");
        } else if (!hashes.insert(*text).second) {
          r.report("duplicate_token", R::child(path, "token_sha256"),
                   "two entries share this token: each token names one user");
        } else {
          token.token_sha256 = *text;
        }
      }
    }
    const YAML::Node admin = R::get(entry, "admin");
    if (R::present(admin)) {
      if (auto v = r.boolean(admin, R::child(path, "admin"))) token.admin = *v;
    }
    readNames(r, entry, "slurm_account", path, token.slurm_accounts);
    readNames(r, entry, "qos", path, token.qos);
    const YAML::Node unix_user = R::get(entry, "unix_user");
    if (R::present(unix_user)) {
      if (auto v = r.str(unix_user, R::child(path, "unix_user"))) {
        if (!isUnixUserName(*v)) {
          r.report("invalid_value", R::child(path, "unix_user"),
                   "'" + *v +
                       "' is not a Unix user name ([a-z_] then [a-z0-9_-], at most 32 "
                       "characters)");
        } else {
          token.unix_user = *v;
        }
      }
    }
    if (!token.user.empty() && !spec::isDnsLabel(token.user)) {
      r.report("invalid_value", R::child(path, "user"),
               "'" + token.user + "' is not a user name (lower-case letters, digits, '-')");
    }
    // A user may hold several tokens (rotation): only the hash must be unique.
    if (!token.user.empty() && !token.token_sha256.empty()) out.push_back(std::move(token));
  }
}

// server.<key>: a positive duration (10s, 500ms), into `out` when present and valid.
void readDuration(YamlReader& r, const YAML::Node& server, const char* key,
                  std::chrono::milliseconds& out) {
  const YAML::Node node = R::get(server, key);
  if (!R::present(node)) return;
  const std::string path = R::child("server", key);
  auto text = r.str(node, path, spec::Text::kAnyScalar);
  auto parsed = text ? spec::parseDuration(*text) : std::nullopt;
  if (text && (!parsed || parsed->count() <= 0)) {
    r.report("invalid_duration", path,
             "'" + *text + "' is not a positive duration (e.g. 10s, 500ms)");
  } else if (parsed) {
    out = *parsed;
  }
}

// server.<key>: an integer min..max, into `out` when present and valid.
void readCount(YamlReader& r, const YAML::Node& server, const char* key, int min, int max,
               int& out) {
  const std::string path = R::child("server", key);
  if (auto v = r.optInt(server, key, "server")) {
    if (*v < min || *v > max) {
      r.report("invalid_value", path,
               "must be " + std::to_string(min) + ".." + std::to_string(max));
    } else {
      out = *v;
    }
  }
}

}  // namespace

bool isLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8 in dotted decimal.
  if (!host.starts_with("127.")) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3;
}

Result<ListenAddress> parseListen(std::string_view text, const std::string& field) {
  const auto bad = [&](const std::string& why) {
    return fail("server.invalid_listen", field,
                "'" + std::string(text) + "' is not HOST:PORT: " + why);
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad("expected HOST:PORT");
  std::string_view host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3) return bad("an IPv6 host is written [ADDR]");
    host = host.substr(1, host.size() - 2);
  }
  const std::string_view port_text = text.substr(colon + 1);
  int port = -1;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return bad("the port must be 0..65535");
  }
  return ListenAddress{std::string(host), port};
}

std::string defaultDbPath(const std::optional<std::string>& site_dir,
                          const ServerDefaults& defaults) {
  if (defaults.state_directory && !defaults.state_directory->empty()) {
    // systemd sets one path per StateDirectory= entry, ':'-separated: the first is ours.
    const std::string first =
        defaults.state_directory->substr(0, defaults.state_directory->find(':'));
    if (!first.empty() && first.front() == '/') return first + "/" + kDefaultDbName;
  }
  return site_dir ? *site_dir + "/" + kDefaultDbName : kDefaultDbName;
}

Checked<ServerConfig> parseServerConfig(std::string_view site_yaml,
                                        const std::optional<std::string>& site_dir,
                                        const ServerDefaults& defaults) {
  YamlReader r("server");
  ServerConfig config;
  config.db = defaultDbPath(site_dir, defaults);
  config.http.listen = *parseListen(kDefaultListen);
  const auto root = r.parseRoot(site_yaml);
  if (!root) return failAll(r.takeErrors());
  const YAML::Node server = R::get(*root, "server");
  if (!R::present(server)) return config;  // every default; no tokens: every /v1 call is 401
  config.present = true;
  if (!r.checkMap(server, "server",
                  {"listen",
                   "db",
                   "db_password_file",
                   "lease_seconds",
                   "poll_interval",
                   "max_body_bytes",
                   "threads",
                   "tokens",
                   "request_timeout",
                   "idle_timeout",
                   "max_connections",
                   "max_connections_per_client",
                   "client_ipv6_prefix",
                   "max_header_bytes",
                   "tls",
                   "insecure_http",
                   "submit_concurrency",
                   "trusted_proxies",
                   "workdir_max_bytes",
                   "workdir_max_files"})) {
    return failAll(r.takeErrors());
  }
  HttpServerOptions& http = config.http;
  if (auto listen = r.optStr(server, "listen", "server")) {
    if (auto parsed = parseListen(*listen, "server.listen"); !parsed) {
      r.report("invalid_listen", "server.listen", parsed.error().message);
    } else {
      http.listen = *parsed;
    }
  }
  if (auto db = r.optStr(server, "db", "server")) {
    if (store::PostgresJobStore::isUri(*db)) {
      config.db = *db;  // a PostgreSQL URI, not a path
    } else if (auto resolved = catalog::resolveAgainst(*db, site_dir)) {
      config.db = *resolved;
    } else {
      r.report("invalid_path", "server.db", "a relative db path needs the site file's directory");
    }
  }
  if (auto file = r.optStr(server, "db_password_file", "server")) {
    if (auto resolved = catalog::resolveAgainst(*file, site_dir)) {
      config.db_password_file = *resolved;
    } else {
      r.report("invalid_path", "server.db_password_file",
               "a relative path needs the site file's directory");
    }
  }
  readCount(r, server, "lease_seconds", 1, 3600, config.lease_seconds);
  readDuration(r, server, "poll_interval", config.poll_interval);
  readDuration(r, server, "request_timeout", http.request_timeout);
  readDuration(r, server, "idle_timeout", http.idle_timeout);
  readCount(r, server, "max_connections", 1, 1'000'000, http.max_connections);
  readCount(r, server, "max_connections_per_client", 1, 1'000'000, http.max_connections_per_client);
  readCount(r, server, "client_ipv6_prefix", 1, 128, http.client_ipv6_prefix);
  int header_bytes = static_cast<int>(http.max_header_bytes);
  readCount(r, server, "max_header_bytes", 1024, 1024 * 1024, header_bytes);
  http.max_header_bytes = static_cast<std::size_t>(header_bytes);
  const YAML::Node proxies = R::get(server, "trusted_proxies");
  if (R::present(proxies)) {
    if (!proxies.IsSequence()) {
      r.report("wrong_type", "server.trusted_proxies",
               "expected a list of addresses or networks (127.0.0.1, 10.0.0.0/8, ::1)");
    } else {
      for (std::size_t i = 0; i < proxies.size(); ++i) {
        const std::string path = R::index("server.trusted_proxies", i);
        auto text = r.str(proxies[i], path);
        if (!text) continue;
        if (auto range = parseNetworkRange(*text, path)) {
          http.trusted_proxies.push_back(std::move(*range));
        } else {
          r.report("invalid_proxy", path, range.error().message);
        }
      }
    }
  }
  const YAML::Node tls = R::get(server, "tls");
  if (R::present(tls) && r.checkMap(tls, "server.tls", {"cert", "key"})) {
    TlsFiles files;
    for (auto [key, out] : {std::pair{"cert", &files.cert}, std::pair{"key", &files.key}}) {
      const std::string path = R::child("server.tls", key);
      if (auto text = r.str(r.require(tls, key, "server.tls"), path)) {
        if (auto resolved = catalog::resolveAgainst(*text, site_dir)) {
          *out = *resolved;
        } else {
          r.report("invalid_path", path, "a relative path needs the site file's directory");
        }
      }
    }
    if (!files.cert.empty() && !files.key.empty()) http.tls = std::move(files);
  }
  const YAML::Node insecure = R::get(server, "insecure_http");
  if (R::present(insecure)) {
    if (auto v = r.boolean(insecure, "server.insecure_http")) config.insecure_http = *v;
  }
  const YAML::Node max_body = R::get(server, "max_body_bytes");
  if (R::present(max_body)) {
    auto v = r.integer(max_body, "server.max_body_bytes");
    if (v && (*v < 1024 || *v > 64LL * 1024 * 1024)) {
      r.report("invalid_value", "server.max_body_bytes", "must be 1024..67108864");
    } else if (v) {
      http.max_body_bytes = static_cast<std::size_t>(*v);
    }
  }
  const YAML::Node workdir_bytes = R::get(server, "workdir_max_bytes");
  if (R::present(workdir_bytes)) {
    auto v = r.integer(workdir_bytes, "server.workdir_max_bytes");
    if (v && (*v < 1 || static_cast<std::uint64_t>(*v) > kMaxWorkdirBytes)) {
      r.report("invalid_value", "server.workdir_max_bytes",
               "must be 1.." + std::to_string(kMaxWorkdirBytes));
    } else if (v) {
      http.workdir.max_bytes = static_cast<std::uint64_t>(*v);
    }
  }
  int workdir_files = static_cast<int>(http.workdir.max_files);
  readCount(r, server, "workdir_max_files", 1, static_cast<int>(kMaxWorkdirFiles), workdir_files);
  http.workdir.max_files = static_cast<std::size_t>(workdir_files);
  readCount(r, server, "threads", 1, 256, http.threads);
  readCount(r, server, "submit_concurrency", 1, kMaxSubmitConcurrency, config.submit_concurrency);
  const YAML::Node tokens = R::get(server, "tokens");
  if (R::present(tokens)) parseTokens(r, tokens, config.tokens);
  if (r.hasErrors()) return failAll(r.takeErrors());
  return config;
}

Checked<ServerConfig> loadServerConfig(const std::string& site_path,
                                       const ServerDefaults& defaults) {
  auto text = catalog::readWholeFile(site_path);
  if (!text) {
    return failAll({Error{"server.file_unreadable", "--site", "cannot read " + site_path}});
  }
  return parseServerConfig(*text, catalog::absoluteDirectoryOf(site_path), defaults);
}

}  // namespace tuneplane::api
