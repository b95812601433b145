// The tokens sent to slurmrestd for each identity a client acts as (slurm.identity per_user:
// every job's requests go as its Unix user). The mechanism follows the site's credential:
//   token_file    the token of SlurmUser (or root) is sent for every user, and the request's
//                 X-SLURM-USER-NAME names the user: slurmrestd's proxy mode. A token of any
//                 other user is refused (HTTP 511, error 1007: transcript 19_identity).
//   jwt_key_file  a token is minted for each user (sun=<user>) from the key, cached and
//                 renewed per user (MintingTokenProvider), so no request does key work.
// Both powers are total: whoever holds a SlurmUser token or the signing key can act as any
// user (docs/operators.md says so). Thread-safety: every method, from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "catalog/site_config.h"
#include "common/result.h"
#include "slurm/token_provider.h"

namespace tuneplane::slurm {

enum class IdentityMechanism {
  kProxyHeader,  // token_file: SlurmUser's token + X-SLURM-USER-NAME
  kMintedToken,  // jwt_key_file: a token minted for each user
};
const char* toString(IdentityMechanism mechanism);  // "proxy_header", "minted_token"

class IdentityTokens {
 public:
  // From the site's credential (token_file or jwt_key_file, read now). Errors: "slurm.config"
  // as makeTokenProvider's.
  static Result<std::shared_ptr<IdentityTokens>> fromSite(const catalog::SlurmSite& site,
                                                          UnixClock clock = systemUnixClock());

  IdentityMechanism mechanism() const { return mechanism_; }
  // The service's own token source (slurm.user's): every identity's in proxy mode.
  TokenProvider& service() { return *service_; }
  // The token source for requests as `user` ("" or the service's user: service()). The
  // reference lives as long as this object.
  TokenProvider& forUser(const std::string& user);

 private:
  IdentityTokens(IdentityMechanism mechanism, catalog::SlurmSite site,
                 std::unique_ptr<TokenProvider> service, std::string key, UnixClock clock);

  const IdentityMechanism mechanism_;
  const catalog::SlurmSite site_;
  std::unique_ptr<TokenProvider> service_;
  const std::string key_;  // kMintedToken: the HS256 key; never logged
  UnixClock clock_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<TokenProvider>> minted_;  // per user, made once
};

// A TokenProvider that asks another one (owned elsewhere, outliving this): the clients of one
// process share their token sources, so a token is minted or read once per identity, not
// once per connection. Thread-safety: as the source's.
class BorrowedTokenProvider final : public TokenProvider {
 public:
  // `owner`, when given, is kept alive with this provider (the object `source` lives in).
  explicit BorrowedTokenProvider(TokenProvider& source, std::shared_ptr<const void> owner = nullptr)
      : source_(source), owner_(std::move(owner)) {}
  // TokenProvider:
  Result<std::string> token() override { return source_.token(); }
  void invalidate() override { source_.invalidate(); }
  std::optional<int64_t> expiresAt() override { return source_.expiresAt(); }

 private:
  TokenProvider& source_;
  std::shared_ptr<const void> owner_;
};

}  // namespace tuneplane::slurm
