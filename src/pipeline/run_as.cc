// See run_as.h.
#include "pipeline/run_as.h"

#include "common/text_checks.h"

namespace tuneplane::pipeline {

Result<std::string> runAsFor(const catalog::SiteConfig& site, const std::string& principal,
                             const std::string& unix_user, staging::OsUsers& users) {
  if (site.slurm.identity == catalog::IdentityMode::kShared) return std::string();
  if (unix_user.empty() || !isUnixUserName(unix_user)) {
    return fail(codes::kNoUnixUser, "unix_user",
                "this site runs every job as its user (slurm.identity: per_user), and " +
                    principal + " maps to no Unix user: give the token a unix_user " +
                    "(`tuneplane token add " + principal + " --unix-user NAME`)");
  }
  auto found = users.userByName(unix_user);
  if (!found) return fail(found.error());
  if (!*found) {
    return fail(codes::kUnknownUnixUser, "unix_user",
                principal + "'s jobs run as the Unix user '" + unix_user +
                    "', which this host does not know: create the user (on serve's host and "
                    "the nodes, as for any Slurm user) or map " +
                    principal + " to another (`tuneplane token add " + principal +
                    " --unix-user NAME`)");
  }
  if ((*found)->uid == 0) {
    return fail(codes::kRootUnixUser, "unix_user",
                principal + " maps to '" + unix_user +
                    "' (uid 0): TunePlane never runs a job as root; map it to a user of its own");
  }
  return unix_user;
}

}  // namespace tuneplane::pipeline
