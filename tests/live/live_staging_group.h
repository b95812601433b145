// The group through which the live suite, run as root, stages for jobs that Slurm runs as the
// live user (the site's `staging.group`, issue 11): TUNEPLANE_LIVE_STAGING_GROUP, else the
// live user's primary group. One answer for every live test that writes a site or stages.
// Thread-safety: reads the environment and the group database (getgrgid: not reentrant).
#pragma once

#include <grp.h>

#include <string>

#include "live_config.h"
#include "staging/os_users.h"

namespace tuneplane::live {

// "" when neither is known on this host (no such user, or its group has no entry).
inline std::string stagingGroup(const std::string& live_user) {
  if (auto named = env("TUNEPLANE_LIVE_STAGING_GROUP")) return *named;
  staging::PosixOsUsers users;
  auto user = users.userByName(live_user);
  if (!user || !*user) return "";
  const struct group* primary = ::getgrgid((*user)->gid);
  return primary != nullptr ? primary->gr_name : "";
}

}  // namespace tuneplane::live
