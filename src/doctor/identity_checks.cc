// See identity_checks.h.
#include "doctor/identity_checks.h"

#include <fmt/format.h>

namespace tuneplane::doctor {

using nlohmann::json;

CheckResult checkIdentity(const catalog::SiteConfig& site,
                          std::optional<slurm::IdentityMechanism> mechanism) {
  const std::string name = "slurm/identity";
  json details = {{"mode", catalog::toString(site.slurm.identity)}};
  if (site.slurm.identity == catalog::IdentityMode::kShared) {
    return okCheck(name,
                   fmt::format("every job runs as {} (slurm.identity: shared): Slurm's "
                               "accounting sees one user; per_user runs each job as its user",
                               site.slurm.user),
                   details);
  }
  if (!mechanism) {
    return failCheck(name, "slurm.identity is per_user but the site's credential cannot be read",
                     "fix slurm.token_file or slurm.jwt_key_file (see slurm/token)", details);
  }
  details["mechanism"] = slurm::toString(*mechanism);
  const std::string how =
      *mechanism == slurm::IdentityMechanism::kProxyHeader
          ? "the token in slurm.token_file (it must be SlurmUser's or root's) with "
            "X-SLURM-USER-NAME naming the user"
          : "a token minted for each user from slurm.jwt_key_file";
  return okCheck(name,
                 "every job runs as its user (slurm.identity: per_user), through " + how +
                     "; whoever holds that credential can act as any Slurm user",
                 details);
}

CheckResult checkUserIdentity(const UserIdentityFacts& f) {
  const std::string name = "slurm/user/" + f.user;
  json details = {{"user", f.user}, {"mechanism", slurm::toString(f.mechanism)}};
  if (!f.asked) return skipCheck(name, "slurmrestd could not be asked (see slurm/slurmrestd)");
  if (f.acting) {
    details["error"] = f.acting->describe();
    const bool proxy = f.mechanism == slurm::IdentityMechanism::kProxyHeader;
    return failCheck(
        name, fmt::format("slurmrestd refused a request as {}: {}", f.user, f.acting->describe()),
        proxy ? "slurm.token_file must hold a token of SlurmUser or root (`scontrol token "
                "username=<SlurmUser>`), and " +
                    f.user + " must be a user the cluster's hosts know"
              : "the cluster's hosts must know " + f.user +
                    " (the same user name and uid on serve's host, slurmctld's and the nodes)",
        details);
  }
  switch (f.accounting) {
    case UserIdentityFacts::Accounting::kKnown: {
      details["accounts"] = f.accounts;
      if (f.accounts.empty()) {
        return failCheck(name,
                         f.user +
                             " is known to slurmdbd but has no association: Slurm refuses "
                             "every job of theirs where associations are enforced",
                         "`sacctmgr add user " + f.user + " account=<account>`", details);
      }
      std::string accounts;
      for (const auto& a : f.accounts) accounts += (accounts.empty() ? "" : ", ") + a;
      return okCheck(
          name, fmt::format("Slurm acts as {}; slurmdbd associates them with {}", f.user, accounts),
          details);
    }
    case UserIdentityFacts::Accounting::kUnknownUser:
      return failCheck(name, "slurmdbd does not know " + f.user,
                       "`sacctmgr add user " + f.user + " account=<account>`", details);
    case UserIdentityFacts::Accounting::kUnavailable:
      return okCheck(name,
                     "Slurm acts as " + f.user +
                         "; accounting is not available (slurmrestd serves no /slurmdb/), so "
                         "associations are not checked",
                     details);
    case UserIdentityFacts::Accounting::kError:
      details["accounting_error"] = f.accounting_error;
      return warnCheck(
          name, "Slurm acts as " + f.user + "; slurmdbd could not be asked: " + f.accounting_error,
          "check slurmdbd and slurmrestd's openapi/slurmdbd plugin", details);
    case UserIdentityFacts::Accounting::kNotAsked:
      break;
  }
  return okCheck(name, "Slurm acts as " + f.user, details);
}

}  // namespace tuneplane::doctor
