// The /v1 server as `tuneplane serve` builds it, minus the control loop (idle in a benchmark),
// over a store the benchmark filled: one place for the API benchmarks' wiring.
// REQUIRES: `store` outlives the server. Not copyable: the server holds references into it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/api_server.h"
#include "catalog/artifact_verifier.h"
#include "common/clock.h"
#include "common/result.h"
#include "control/job_service.h"
#include "launch/attempt_identity.h"
#include "pipeline/attempt_launcher.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"

namespace tuneplane::bench {

class BenchApiServer {
 public:
  explicit BenchApiServer(store::JobStore& store)
      : launcher_(site_, verifier_, random_, fs_),
        service_(store, launcher_, clock_),
        store_(store) {}
  BenchApiServer(const BenchApiServer&) = delete;
  BenchApiServer& operator=(const BenchApiServer&) = delete;

  // The one user of the benchmarks: alice, not an admin, with bearer token `token`.
  static std::vector<api::ApiToken> aliceToken(const std::string& token) {
    return {{.user = "alice", .token_sha256 = staging::sha256Hex(token), .admin = false}};
  }

  // Starts serving on a free loopback port with every limit at its default and one user,
  // alice, whose bearer token is `token`. Errors: ApiServer::start's.
  Result<std::unique_ptr<api::ApiServer>> start(const std::string& token) {
    api::ApiDependencies deps{service_, store_, launcher_, metrics_, api::readLog,        {},
                              {},       {},     {},        {},       api::readResumeStep, {},
                              {}};
    return api::ApiServer::start(std::move(deps), api::HttpServerOptions{}, aliceToken(token));
  }

 private:
  pipeline::SiteContext site_;
  catalog::ArtifactVerifier verifier_;
  launch::OpenSslRandomSource random_;
  staging::PosixStagingFs fs_;
  SystemClock clock_;
  pipeline::AttemptLauncher launcher_;
  control::JobService service_;
  api::Metrics metrics_;
  store::JobStore& store_;
};

}  // namespace tuneplane::bench
