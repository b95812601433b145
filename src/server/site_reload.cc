// See site_reload.h.
#include "server/site_reload.h"

namespace tuneplane::server {

Checked<SiteReload> readSiteReload(const std::string& site_path,
                                   const pipeline::SiteEnvironment& env,
                                   const api::ServerDefaults& defaults,
                                   const api::ServerConfig& running) {
  Errors errors;
  auto site = pipeline::loadSiteFile(site_path, env);
  if (!site) errors.insert(errors.end(), site.error().begin(), site.error().end());
  auto config = api::loadServerConfig(site_path, defaults);
  if (!config) errors.insert(errors.end(), config.error().begin(), config.error().end());
  std::optional<pipeline::RegistryFile> registry;
  if (site) {
    auto loaded = pipeline::loadRegistryFile(site->site, env);
    if (loaded) {
      registry = std::move(*loaded);
    } else {
      errors.insert(errors.end(), loaded.error().begin(), loaded.error().end());
    }
  }
  if (!errors.empty()) return failAll(std::move(errors));

  SiteReload next{config->tokens, config->http.tls, std::move(*registry), {}};
  // What a reload does not apply, so the log can say it waits for a restart.
  const api::HttpServerOptions& now = config->http;
  const api::HttpServerOptions& then = running.http;
  const auto differs = [&](bool changed, const char* field) {
    if (changed) next.restart_needed.emplace_back(field);
  };
  differs(now.listen != then.listen, "server.listen");
  differs(now.threads != then.threads, "server.threads");
  differs(now.max_body_bytes != then.max_body_bytes, "server.max_body_bytes");
  differs(now.max_header_bytes != then.max_header_bytes, "server.max_header_bytes");
  differs(now.request_timeout != then.request_timeout, "server.request_timeout");
  differs(now.idle_timeout != then.idle_timeout, "server.idle_timeout");
  differs(now.max_connections != then.max_connections, "server.max_connections");
  differs(now.max_connections_per_client != then.max_connections_per_client,
          "server.max_connections_per_client");
  differs(now.trusted_proxies != then.trusted_proxies, "server.trusted_proxies");
  differs(now.tls.has_value() != then.tls.has_value(), "server.tls");
  differs(config->db != running.db, "server.db");
  differs(config->db_password_file != running.db_password_file, "server.db_password_file");
  differs(config->lease_seconds != running.lease_seconds, "server.lease_seconds");
  differs(config->poll_interval != running.poll_interval, "server.poll_interval");
  differs(config->submit_concurrency != running.submit_concurrency, "server.submit_concurrency");
  differs(config->insecure_http != running.insecure_http, "server.insecure_http");
  return next;
}

}  // namespace tuneplane::server
