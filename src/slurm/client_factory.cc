// See client_factory.h.
#include "slurm/client_factory.h"

#include <algorithm>

#include "slurm/slurm_api.h"

namespace tuneplane::slurm {

SlurmClientFactory::SlurmClientFactory(catalog::SlurmSite site,
                                       std::shared_ptr<IdentityTokens> identities)
    : site_(std::move(site)), api_version_(site_.api_version), identities_(std::move(identities)) {}

Result<SlurmClientFactory> SlurmClientFactory::fromSite(const catalog::SlurmSite& site,
                                                        UnixClock clock) {
  if (!isKnownApiVersion(site.api_version)) {
    return fail("slurm.config", "slurm.api_version",
                "TunePlane speaks REST API " + slurmApiNames() +
                    " (or auto, the newest the server serves), not '" + site.api_version + "'");
  }
  auto identities = IdentityTokens::fromSite(site, std::move(clock));
  if (!identities) return fail(identities.error());
  return SlurmClientFactory(site, std::move(*identities));
}

Result<std::unique_ptr<SlurmRestClient>> SlurmClientFactory::make(const ClientRole& role) const {
  RestClientOptions options = restClientOptionsFromSite(site_);
  options.api_version = api_version_;
  if (role.max_attempts) options.retry.max_attempts = *role.max_attempts;
  if (role.timeout_cap) {
    options.http.connect_timeout = std::min(options.http.connect_timeout, *role.timeout_cap);
    options.http.request_timeout = std::min(options.http.request_timeout, *role.timeout_cap);
  }
  if (site_.identity == catalog::IdentityMode::kPerUser) options.identities = identities_;
  return SlurmRestClient::create(std::move(options), std::make_unique<BorrowedTokenProvider>(
                                                         identities_->service(), identities_));
}

}  // namespace tuneplane::slurm
