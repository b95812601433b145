// SlurmClientFactory: every SlurmRestClient of a process, made from the site in one place —
// an identity and a role in, a client out. The site's URL, TLS files, timeouts and REST API
// version pass through here once; the token sources are made once and shared by every client
// (identity_tokens.h: the service's, and one per user the clients act as), so a token is read
// or minted once per identity, not once per connection. Each client has its own connection.
// Thread-safety: make() and setApiVersion() from one thread (start-up); the clients are
// thread-safe as SlurmRestClient says.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "catalog/site_config.h"
#include "common/result.h"
#include "slurm/identity_tokens.h"
#include "slurm/rest_client.h"

namespace tuneplane::slurm {

// What a client is for: how often a read is tried and how long a request may take.
struct ClientRole {
  std::optional<int> max_attempts;  // first try included; unset: RetryPolicy's default
  std::optional<std::chrono::milliseconds> timeout_cap;  // caps connect and request timeouts
};

class SlurmClientFactory {
 public:
  // Reads the site's credential now. Errors: "slurm.config" (the API version is not one
  // TunePlane speaks, or the credential cannot be read).
  static Result<SlurmClientFactory> fromSite(const catalog::SlurmSite& site,
                                             UnixClock clock = systemUnixClock());

  // A client with its own connection, speaking the version set last (else the site's).
  // In slurm.identity per_user its as(user) acts as the user. Errors: "slurm.config".
  Result<std::unique_ptr<SlurmRestClient>> make(const ClientRole& role = {}) const;
  // The version every client made from now on speaks (after one negotiated it at start).
  void setApiVersion(std::string version) { api_version_ = std::move(version); }

  IdentityMechanism mechanism() const { return identities_->mechanism(); }
  const std::shared_ptr<IdentityTokens>& identities() const { return identities_; }

 private:
  SlurmClientFactory(catalog::SlurmSite site, std::shared_ptr<IdentityTokens> identities);

  catalog::SlurmSite site_;
  std::string api_version_;
  std::shared_ptr<IdentityTokens> identities_;
};

}  // namespace tuneplane::slurm
