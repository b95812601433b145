// See credential_gate.h.
#include "cli/credential_gate.h"

#include "doctor/credential_checks.h"
#include "doctor/host_probe.h"
#include "staging/os_users.h"

namespace tuneplane::cli {

std::vector<doctor::SecretFile> serverSecrets(const api::ServerConfig& config) {
  std::vector<doctor::SecretFile> files;
  if (config.http.tls) files.push_back({"server.tls.key", config.http.tls->key});
  if (config.db_password_file) {
    files.push_back({"server.db_password_file", *config.db_password_file});
  }
  return files;
}

Errors credentialRefusals(const pipeline::SiteContext& site, const api::ServerConfig& config,
                          std::vector<std::string>& warnings) {
  doctor::PosixHostProbe host;
  staging::PosixOsUsers users;
  Errors refusals;
  for (const auto& file : doctor::credentialFiles(site.site, serverSecrets(config))) {
    const doctor::CheckResult check =
        doctor::checkCredential(doctor::gatherCredentialFacts(site.site, file, host, users, {}));
    if (check.status == doctor::CheckStatus::kFail) {
      refusals.push_back(
          {"serve.exposed_credential", file.field, check.message + "; fix: " + check.fix});
    } else if (check.status == doctor::CheckStatus::kWarn) {
      warnings.push_back(check.message);
    }
  }
  return refusals;
}

}  // namespace tuneplane::cli
