// See credential_gate.h.
#include "cli/credential_gate.h"

#include "doctor/credential_checks.h"
#include "doctor/host_probe.h"
#include "slurm/client_factory.h"
#include "staging/os_users.h"

namespace tuneplane::cli {
namespace {

// As doctor: one attempt and one retry, so a start is not held by the reconciler's patience.
constexpr int kNodeListAttempts = 2;

}  // namespace

std::vector<doctor::SecretFile> serverSecrets(const api::ServerConfig& config) {
  std::vector<doctor::SecretFile> files;
  if (config.http.tls) files.push_back({"server.tls.key", config.http.tls->key});
  if (config.db_password_file) {
    files.push_back({"server.db_password_file", *config.db_password_file});
  }
  return files;
}

Result<std::vector<std::string>> clusterNodeNames(const catalog::SiteConfig& site) {
  auto factory = slurm::SlurmClientFactory::fromSite(site.slurm);
  if (!factory) return fail(factory.error());
  auto client = factory->make({.max_attempts = kNodeListAttempts, .timeout_cap = std::nullopt});
  if (!client) return fail(client.error());
  auto nodes = (*client)->listNodes();
  if (!nodes) return fail(nodes.error().error);
  std::vector<std::string> names;
  names.reserve(nodes->size());
  for (const auto& node : *nodes) names.push_back(node.name);
  return names;
}

Errors credentialRefusals(const pipeline::SiteContext& site, const api::ServerConfig& config,
                          const std::vector<std::string>& nodes,
                          std::vector<std::string>& warnings) {
  doctor::PosixHostProbe host;
  staging::PosixOsUsers users;
  Errors refusals;
  for (const doctor::CheckResult& check :
       doctor::credentialChecks(site.site, serverSecrets(config), host, users, nodes)) {
    const std::string field = check.details.value("field", check.name);
    if (check.status == doctor::CheckStatus::kFail) {
      refusals.push_back(
          {"serve.exposed_credential", field, check.message + "; fix: " + check.fix});
    } else if (check.status == doctor::CheckStatus::kWarn) {
      warnings.push_back(check.message);
    }
  }
  return refusals;
}

}  // namespace tuneplane::cli
