// Doctor's judgement of whom Slurm runs the jobs as (slurm.identity), pure over facts:
//   slurm/identity       shared: every job runs as slurm.user. per_user: which mechanism acts
//                        as the users (a SlurmUser token with X-SLURM-USER-NAME, or tokens
//                        minted from the key) — and that both can act as ANY user.
//   slurm/user/<name>    per_user, one per Unix user the tokens map to: slurmrestd accepts a
//                        request as the user (a token that is not SlurmUser's, or a user no
//                        host knows, is refused), and slurmdbd knows the user and its
//                        associations (the accounts its jobs may be charged to) — or says
//                        that accounting is not available (no /slurmdb/ routes).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/site_config.h"
#include "doctor/check.h"
#include "slurm/identity_tokens.h"
#include "slurm/rest_error.h"

namespace tuneplane::doctor {

struct UserIdentityFacts {
  std::string user;
  slurm::IdentityMechanism mechanism = slurm::IdentityMechanism::kProxyHeader;
  bool asked = false;                       // false: no client to ask with
  std::optional<slurm::SlurmError> acting;  // the refusal of a request as the user
  // slurmdbd (GET /slurmdb/<version>/user/<name>, /associations/?user=<name>).
  enum class Accounting {
    kNotAsked,     // no client, or the request as the user already failed
    kUnavailable,  // no /slurmdb/ routes (404): a site without slurmdbd
    kKnown,        // the user exists; `accounts` are its associations
    kUnknownUser,  // slurmdbd has no such user
    kError,        // another failure (`accounting_error`)
  };
  Accounting accounting = Accounting::kNotAsked;
  std::vector<std::string> accounts;
  std::string accounting_error;
};

CheckResult checkIdentity(const catalog::SiteConfig& site,
                          std::optional<slurm::IdentityMechanism> mechanism);
CheckResult checkUserIdentity(const UserIdentityFacts& facts);

}  // namespace tuneplane::doctor
