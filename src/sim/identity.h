// Who a request acts as, as slurmrestd and slurmctld decide it (transcript 19_identity): the
// token's user (`sun`), or the user X-SLURM-USER-NAME names — which only SlurmUser and root
// may do (proxy mode); and that user's Unix identity (uid, gid, group), which the job records
// carry and without which slurmctld refuses the request (error 6010). The simulator's user
// database is the cluster file's `users:` list first, then the host's (getpwnam): a real
// cluster's users exist on its hosts, a test's need not exist on the machine it runs on.
// Pure except lookupUnixUser (the host's database, thread-safe).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tuneplane::sim {

struct UnixUser {
  std::string name;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string group;  // the primary group's name
};

// The user a request acts as: `header_user` (X-SLURM-USER-NAME) when given and either the
// token's own user or allowed to act for others; the token's user when no header names one.
// nullopt: the token may not act for that user (slurmrestd answers 511, error 1007).
std::optional<std::string> actingUser(const std::string& token_user, const std::string& header_user,
                                      const std::string& slurm_user);

// SlurmUser and root: may act for any user, cancel any job.
bool isOperator(const std::string& user, const std::string& slurm_user);

// `name` in `listed` (the cluster file's users), else in the host's user database (its
// primary group's name from the group database, the uid's decimal when it has none).
// nullopt: nobody knows the user (slurmctld: "Rejecting authentication of user nobody").
std::optional<UnixUser> lookupUnixUser(const std::vector<UnixUser>& listed,
                                       const std::string& name);

}  // namespace tuneplane::sim
