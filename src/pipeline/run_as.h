// Who a new job runs as (slurm.identity; docs/operators.md, "Every user as themselves"). In
// shared mode every job runs as slurm.user and a job's run_as is "". In per_user mode it is
// the submitting principal's Unix user (server.tokens[].unix_user, else its name), checked
// here before the job is accepted, so that no job is ever run as someone else: the name must
// be a Unix user name, known to this host's user database (the cluster's, on a site that
// runs serve beside it), and not root. Pure over the OsUsers seam.
#pragma once

#include <string>

#include "catalog/site_config.h"
#include "common/result.h"
#include "staging/os_users.h"

namespace tuneplane::pipeline {

namespace codes {
inline constexpr const char* kNoUnixUser = "api.no_unix_user";            // none given
inline constexpr const char* kUnknownUnixUser = "api.unknown_unix_user";  // not on this host
inline constexpr const char* kRootUnixUser = "api.root_unix_user";        // uid 0
}  // namespace codes

// The run_as a job of `principal` (mapped to `unix_user`) is stored with: "" in shared mode,
// else `unix_user` once checked. Errors (field "unix_user"): the codes above, each naming the
// TunePlane user, the Unix user and what the operator does about it; "staging.user_lookup_
// failed" when the user database did not answer.
Result<std::string> runAsFor(const catalog::SiteConfig& site, const std::string& principal,
                             const std::string& unix_user, staging::OsUsers& users);

}  // namespace tuneplane::pipeline
