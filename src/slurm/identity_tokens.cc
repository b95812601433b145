// See identity_tokens.h.
#include "slurm/identity_tokens.h"

namespace tuneplane::slurm {

const char* toString(IdentityMechanism mechanism) {
  switch (mechanism) {
    case IdentityMechanism::kProxyHeader:
      return "proxy_header";
    case IdentityMechanism::kMintedToken:
      return "minted_token";
  }
  return "?";
}

IdentityTokens::IdentityTokens(IdentityMechanism mechanism, catalog::SlurmSite site,
                               std::unique_ptr<TokenProvider> service, std::string key,
                               UnixClock clock)
    : mechanism_(mechanism),
      site_(std::move(site)),
      service_(std::move(service)),
      key_(std::move(key)),
      clock_(std::move(clock)) {}

Result<std::shared_ptr<IdentityTokens>> IdentityTokens::fromSite(const catalog::SlurmSite& site,
                                                                 UnixClock clock) {
  auto service = makeTokenProvider(site, clock);
  if (!service) return fail(service.error());
  const bool minted = !(site.token_file && !site.token_file->empty());
  std::string key;
  if (minted) {
    auto read = readJwtKey(site);  // the service's provider has its own copy: one read each
    if (!read) return fail(read.error());
    key = std::move(*read);
  }
  return std::shared_ptr<IdentityTokens>(
      new IdentityTokens(minted ? IdentityMechanism::kMintedToken : IdentityMechanism::kProxyHeader,
                         site, std::move(*service), std::move(key), std::move(clock)));
}

TokenProvider& IdentityTokens::forUser(const std::string& user) {
  if (user.empty() || user == site_.user || mechanism_ == IdentityMechanism::kProxyHeader) {
    return *service_;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = minted_[user];
  if (!slot) {
    slot = std::make_unique<MintingTokenProvider>(user, key_, site_.token_lifespan, clock_);
  }
  return *slot;
}

}  // namespace tuneplane::slurm
