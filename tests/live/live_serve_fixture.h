// The live suite's `tuneplane serve` fixture: serve (a process of its own) with a site whose
// slurmrestd is TUNEPLANE_LIVE_SLURMRESTD and whose staging root lies in
// TUNEPLANE_LIVE_SHARED_DIR, and the `tuneplane` CLI against it. Skipped unless
// TUNEPLANE_LIVE_* is set. Whom serve acts as in Slurm, and how it stages for the live user's
// jobs, is live_identity.h's (TUNEPLANE_LIVE_IDENTITY: shared or per_user). LiveServe is shared by
// live_serve_test.cc and live_replicas_test.cc; LiveServeRun, what it holds and undoes, also by
// site_init_live_test.cc (its own site).
#pragma once

#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "live_config.h"
#include "live_identity.h"
#include "live_site.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "support/os_user.h"
#include "support/serve_harness.h"

namespace tuneplane::live {

using nlohmann::json;
inline constexpr const char* kToken = "live-serve-token-b7e2c9";
// A bound on a job's run on the real cluster and on a failover (not a timing assertion).
inline constexpr std::chrono::milliseconds kLiveLimit = std::chrono::seconds(180);

// What a live test that runs serve holds, and what it undoes when it ends: the job it left
// running in Slurm cancelled, serve stopped (cleanly: exit 0), its directory removed.
//
// TUNEPLANE_LIVE_IDENTITY=per_user runs the same tests with slurm.identity per_user (issue 44;
// live_identity.h): serve as root (slurm.user) through SlurmUser's token, the caller's token
// mapped to TUNEPLANE_LIVE_USER (server.tokens[].unix_user), whose jobs then run as themselves,
// and the one-time step per user done (makeUserStagingDir). Such a test builds its site from
// site() and identityLines() and calls userStep() once the site is made.
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

  // live_ from TUNEPLANE_LIVE_*, and identity_ (live_identity.h: per_user, or shared with the
  // staging group when this process is root). Skips the test without TUNEPLANE_LIVE_* (or
  // without a token file when `token_file_needed`) and as configureIdentity says; fails it
  // when the group is unknown. The caller returns when the test was skipped or failed.
  void configure(bool token_file_needed = false) {
    auto config = liveConfig();
    if (!config) GTEST_SKIP() << kSkipReason;
    live_ = *config;
    if (token_file_needed && !live_.token_file) {
      GTEST_SKIP() << "this test needs TUNEPLANE_LIVE_TOKEN_FILE";
    }
    configureIdentity(live_, Staging::kForTheLiveUser, identity_);
    per_user_ = identity_.per_user;
  }
  // The site's staging: section (identity_.group, "" when none is needed) and serve's server:
  // section, whose one caller is this process's user with kToken (per_user: mapped to the
  // live user).
  std::string stagingAndServerSections() const {
    return identity_.stagingSection() +
           "server:\n  poll_interval: 1s\n  tokens:\n    - user: " + test::currentUser() +
           "\n      token_sha256: " + staging::sha256Hex(kToken) + "\n" +
           (per_user_ ? "      unix_user: " + live_.user + "\n" : "");
  }
  // The cluster as the site file sees it: per_user, serve as root with SlurmUser's token.
  Live site() const { return identity_.site(live_); }
  // More lines of the site's slurm: section.
  std::string identityLines() const { return identity_.slurmLines(); }
  // per_user: the one-time step for the live user, in dir_'s staging root.
  void userStep() {
    if (!per_user_) return;
    const Status made = makeUserStagingDir(dir_ + "/staging", live_.user);
    ASSERT_TRUE(made) << made.error().describe();
  }

  Live live_;
  LiveIdentity identity_;
  bool per_user_ = false;  // identity_.per_user
  std::string dir_, id_;
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
