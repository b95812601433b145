// What `tuneplane serve` re-reads on SIGHUP (`systemctl reload tuneplane`): the API's users
// (server.tokens), the runtime registry and the TLS certificate and key — all three
// together. readSiteReload reads and checks the files; Daemon::reload puts them in force,
// all of them or none: the TLS files are loaded first (the only step that can still fail),
// then the tokens and the registry are swapped in whole. A request or an attempt already
// under way finishes with what it started with; the control loop never stops, so jobs are
// tracked throughout. Everything else in the site file is read at start only: a change there
// is named in `restart_needed` and waits for a restart.
// Thread-safety: readSiteReload is a function of the files it reads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/server_config.h"
#include "common/result.h"
#include "pipeline/launch_pipeline.h"

namespace tuneplane::server {

struct SiteReload {
  std::vector<api::ApiToken> tokens;
  std::optional<api::TlsFiles> tls;  // absolute paths; nullopt: no server.tls
  pipeline::RegistryFile registry;
  // Settings of the server: section that differ from `running` and that only a restart
  // applies, by field ("server.listen", "server.max_connections", …).
  std::vector<std::string> restart_needed;
};

// Reads the site file at `site_path` (it must still load whole), its server: section and the
// runtime registry it names (TUNEPLANE_RUNTIME_REGISTRY_FILE first, as at start). `running`
// is the section serve started with. Errors: every problem of each file, each with its field
// and code (the site loader's, "server.*", the registry's).
Checked<SiteReload> readSiteReload(const std::string& site_path,
                                   const pipeline::SiteEnvironment& env,
                                   const api::ServerDefaults& defaults,
                                   const api::ServerConfig& running);

}  // namespace tuneplane::server
