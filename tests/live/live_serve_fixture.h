// The live suite's `tuneplane serve` fixture: serve (a process of its own) with a site whose
// slurmrestd is TUNEPLANE_LIVE_SLURMRESTD and whose staging root lies in
// TUNEPLANE_LIVE_SHARED_DIR, and the `tuneplane` CLI against it. Skipped unless
// TUNEPLANE_LIVE_* is set. Run as root, serve stages through `staging.group`
// (live_staging_group.h) for jobs that Slurm runs as the live user; run as the live user, it
// needs no group. LiveServe is shared by live_serve_test.cc and live_replicas_test.cc;
// LiveServeRun, what it holds and undoes, also by site_init_live_test.cc (its own site).
#pragma once

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "live_config.h"
#include "live_site.h"
#include "live_staging_group.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "support/os_user.h"
#include "support/serve_harness.h"

namespace tuneplane::live {

using nlohmann::json;
inline constexpr const char* kToken = "live-serve-token-b7e2c9";
// A bound on a job's run on the real cluster and on a failover (not a timing assertion).
inline constexpr std::chrono::milliseconds kLiveLimit = std::chrono::seconds(180);

// slurm.identity per_user's one-time step for `user` (docs/operators.md), as root:
// `staging_root`/users/<user>, owned by root (serve's user, slurm.user) and the user's group,
// 02750. False when the user is unknown or the step fails.
inline bool makeUserStagingDir(const std::string& staging_root, const std::string& user) {
  const std::string users_dir = staging_root + "/users";
  std::error_code ec;
  std::filesystem::create_directories(users_dir, ec);
  ::chmod(users_dir.c_str(), 0755);
  const std::string mine = users_dir + "/" + user;
  ::mkdir(mine.c_str(), 0750);
  const passwd* pw = ::getpwnam(user.c_str());
  return pw != nullptr && ::chown(mine.c_str(), 0, pw->pw_gid) == 0 &&
         ::chmod(mine.c_str(), 02750) == 0;
}

// What a live test that runs serve holds, and what it undoes when it ends: the job it left
// running in Slurm cancelled, serve stopped (cleanly: exit 0), its directory removed.
//
// TUNEPLANE_LIVE_IDENTITY=per_user runs the same tests with slurm.identity per_user (issue 44):
// serve as root (slurm.user) through SlurmUser's token (TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE), the
// caller's token mapped to TUNEPLANE_LIVE_USER (server.tokens[].unix_user), whose jobs then run
// as themselves, and the one-time step per user done (makeUserStagingDir). Such a test builds
// its site from site() and identityLines() and calls userStep() once the site is made.
class LiveServeRun : public ::testing::Test {
 protected:
  void TearDown() override {
    if (cli_ && !id_.empty()) {
      const json job = cli_->job(id_);
      if (job.is_object() && job.value("phase", "") != "Succeeded")
        (void)cli_->run({"cancel", id_});
    }
    if (serve_) {
      EXPECT_EQ(serve_->stop(), 0) << serve_->process().err();
    }
    if (!dir_.empty()) staging::PosixStagingFs().removeTree(dir_);
  }

  // live_ from TUNEPLANE_LIVE_*, and group_: the staging group (live_staging_group.h) when
  // this process is root and serve stages for the live user, "" when this process is the live
  // user. Skips the test without TUNEPLANE_LIVE_* (or without a token file when
  // `token_file_needed`) and when this process is neither root nor the live user; fails it
  // when the group is unknown. The caller returns when the test was skipped or failed.
  void configure(bool token_file_needed = false) {
    auto config = liveConfig();
    if (!config) GTEST_SKIP() << kSkipReason;
    live_ = *config;
    if (token_file_needed && !live_.token_file) {
      GTEST_SKIP() << "this test needs TUNEPLANE_LIVE_TOKEN_FILE";
    }
    per_user_ = env("TUNEPLANE_LIVE_IDENTITY").value_or("shared") == "per_user";
    if (per_user_) {
      if (::geteuid() != 0) GTEST_SKIP() << "per_user: serve runs as root (slurm.user)";
      slurm_user_token_ = env("TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE");
      if (!slurm_user_token_) {
        GTEST_SKIP() << "per_user needs TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE (SlurmUser's token)";
      }
      return;  // no staging group: users/<name> holds the user's attempts
    }
    if (::geteuid() == 0 && live_.user != "root") {
      group_ = stagingGroup(live_.user);
      ASSERT_FALSE(group_.empty()) << "no group for " << live_.user << " on this host";
    } else if (test::currentUser() != live_.user) {
      GTEST_SKIP() << "serve must run as root or as TUNEPLANE_LIVE_USER (" << live_.user << ")";
    }
  }
  // The site's staging: section for group_ ("" when none is needed) and serve's server:
  // section, whose one caller is this process's user with kToken.
  std::string stagingAndServerSections() const {
    return (group_.empty() ? "" : "staging:\n  group: " + group_ + "\n") +
           "server:\n  poll_interval: 1s\n  tokens:\n    - user: " + test::currentUser() +
           "\n      token_sha256: " + staging::sha256Hex(kToken) + "\n" +
           (per_user_ ? "      unix_user: " + live_.user + "\n" : "");
  }
  // The cluster as the site file sees it: per_user, serve as root with SlurmUser's token.
  Live site() const {
    if (!per_user_) return live_;
    Live as_slurm_user = live_;
    as_slurm_user.user = "root";
    as_slurm_user.token_file = slurm_user_token_;
    as_slurm_user.key_file.reset();
    return as_slurm_user;
  }
  // More lines of the site's slurm: section.
  std::string identityLines() const { return per_user_ ? "  identity: per_user\n" : ""; }
  // per_user: the one-time step for the live user, in dir_'s staging root.
  void userStep() {
    if (!per_user_) return;
    ASSERT_TRUE(makeUserStagingDir(dir_ + "/staging", live_.user)) << live_.user;
  }

  Live live_;
  bool per_user_ = false;
  std::optional<std::string> slurm_user_token_;
  std::string group_, dir_, id_;
  std::unique_ptr<test::ServeProcess> serve_;
  std::unique_ptr<test::CliRunner> cli_;
};

class LiveServe : public LiveServeRun {
 protected:
  void SetUp() override {
    configure();
    if (IsSkipped() || HasFatalFailure()) return;
    auto dir = makeLiveSite(site(), "tp-live-serve-", live_.url, identityLines(),
                            stagingAndServerSections() + serverExtra());
    ASSERT_TRUE(dir) << "cannot make a directory in " << live_.shared_dir;
    dir_ = *dir;
    userStep();
    if (HasFatalFailure()) return;
    serve_ = test::ServeProcess::start(dir_ + "/site.yaml", db(), dir_);
    ASSERT_NE(serve_, nullptr);
    cli_ = std::make_unique<test::CliRunner>(serve_->url(), kToken, dir_);
  }

  // The database serve is given (--db), and more lines for the site's server: section.
  virtual std::string db() const { return dir_ + "/tuneplane.db"; }
  virtual std::string serverExtra() const { return ""; }
};

}  // namespace tuneplane::live
