// Whom the live suite acts as in Slurm (issue 44): TUNEPLANE_LIVE_IDENTITY, shared (the
// default) or per_user. One answer for every live test that writes a site or talks to
// slurmrestd: those that start `tuneplane serve` (live_serve_fixture.h) and those that run the
// Slurm client, the stager or the reconciler in this process.
//
//   shared    slurm.user is TUNEPLANE_LIVE_USER, with the cluster's credential for it; run
//             as root, the suite stages for that user through staging.group
//             (live_staging_group.h); run as the live user, it needs no group.
//   per_user  slurm.identity per_user, as serve runs it: slurm.user root (this process) with
//             SlurmUser's token (TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE), the caller mapped to
//             TUNEPLANE_LIVE_USER; each job is the live user's (store::JobRecord::run_as), asked
//             of Slurm through SlurmClient::as(user) of a client from SlurmClientFactory, and
//             staged in <staging_root>/users/<user>, made once as root (makeUserStagingDir).
//
// Thread-safety: reads the environment and the user database (not reentrant).
#pragma once

#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "catalog/site_config.h"
#include "common/result.h"
#include "live_config.h"
#include "live_staging_group.h"
#include "staging/job_access.h"
#include "staging/os_users.h"
#include "staging/user_dir.h"
#include "support/os_user.h"

namespace tuneplane::live {

// What a test that stages files asks of its identity in shared mode (configureIdentity).
enum class Staging {
  kNone,            // nothing staged for a job: any user may run the test
  kForTheLiveUser,  // files staged for jobs the live user runs: root (through the group) or
                    // the live user itself
};

struct LiveIdentity {
  bool per_user = false;
  std::optional<std::string> slurm_user_token;  // per_user: SlurmUser's token file
  std::string group;  // shared, run as root: the site's staging.group; else ""

  // The cluster as the site sees it: `live` in shared mode; per_user: slurm.user root (serve's
  // user, which owns users/<name>) with SlurmUser's token and no key.
  Live site(const Live& live) const {
    if (!per_user) return live;
    Live as_slurm_user = live;
    as_slurm_user.user = "root";
    as_slurm_user.token_file = slurm_user_token;
    as_slurm_user.key_file.reset();
    return as_slurm_user;
  }
  // More lines of a site file's slurm: section.
  std::string slurmLines() const { return per_user ? "  identity: per_user\n" : ""; }
  // A site file's staging: section; "" when none is needed.
  std::string stagingSection() const {
    return group.empty() ? "" : "staging:\n  group: " + group + "\n";
  }
  // The Unix user the live caller is mapped to (server.tokens[].unix_user; JobService::submit's
  // unix_user), which a job runs as in per_user mode and SlurmClient::as takes: the live user
  // in per_user, "" in shared (every job runs as slurm.user, which is the live user).
  std::string runAs(const Live& live) const { return per_user ? live.user : ""; }
  // The site's slurm: section for a test that builds it in code (the same as site() writes).
  catalog::SlurmSite slurmSite(const Live& live) const {
    const Live as = site(live);
    catalog::SlurmSite s;
    s.url = as.url;
    s.user = as.user;
    s.identity = per_user ? catalog::IdentityMode::kPerUser : catalog::IdentityMode::kShared;
    s.token_file = as.token_file;
    s.jwt_key_file = as.key_file;
    s.token_lifespan = std::chrono::seconds(600);
    s.api_version = as.api_version;
    return s;
  }
};

// `out` from TUNEPLANE_LIVE_IDENTITY. per_user skips the test (GTEST_SKIP) unless this process
// is root and TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE is set. shared with kForTheLiveUser: as root
// (and another live user) the group is the live user's staging group, and the test fails when
// there is none; as the live user no group; as anyone else the test is skipped. The caller
// returns when the test was skipped or failed (IsSkipped(), HasFatalFailure()).
inline void configureIdentity(const Live& live, Staging staging, LiveIdentity& out) {
  out = LiveIdentity{};
  out.per_user = env("TUNEPLANE_LIVE_IDENTITY").value_or("shared") == "per_user";
  if (out.per_user) {
    if (::geteuid() != 0) GTEST_SKIP() << "per_user: the suite acts as root (slurm.user)";
    out.slurm_user_token = env("TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE");
    if (!out.slurm_user_token) {
      GTEST_SKIP() << "per_user needs TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE (SlurmUser's token)";
    }
    return;  // no staging group: users/<name> holds the user's attempts
  }
  if (staging == Staging::kNone) return;
  if (::geteuid() == 0 && live.user != "root") {
    out.group = stagingGroup(live.user);
    ASSERT_FALSE(out.group.empty()) << "no group for " << live.user << " on this host";
  } else if (test::currentUser() != live.user) {
    GTEST_SKIP() << "run the live suite as root or as TUNEPLANE_LIVE_USER (" << live.user
                 << "): the job's user must be able to write what TunePlane stages";
  }
}

// slurm.identity per_user's one-time step for `user` (docs/operators.md), as root and as
// `tuneplane token add` does it (staging/user_dir.h): `staging_root`/users/<user>, owned by
// this process's user (root: serve's, slurm.user) and the user's primary group, 02750.
// Errors: staging::resolveUserAccess's refusals, makeUserDir's.
inline Status makeUserStagingDir(const std::string& staging_root, const std::string& user) {
  staging::OsUsers& users = staging::posixOsUsers();
  auto me = staging::effectiveUser(users);
  if (!me) return fail(me.error());
  auto access = staging::resolveUserAccess(*me, user, users);
  if (!access) return fail(access.error().toError());
  return staging::makeUserDir(*access, staging_root);
}

}  // namespace tuneplane::live
