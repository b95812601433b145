// Live: an attempt staged by root for a job that the cluster runs as TUNEPLANE_LIVE_USER.
// Either the job completes and its log is read back, or the submit is refused before
// anything is staged — never a silent FAILED with an empty logs/ (issue 11). In shared mode
// (live_identity.h) root stages through staging.group and the job is slurm.user's; with
// TUNEPLANE_LIVE_IDENTITY=per_user root stages in users/<live user> (made by the one-time step)
// and submits as the live user through SlurmUser's token (SlurmClient::as), as serve does.
// Skipped unless TUNEPLANE_LIVE_* is set and the suite runs as root.
// Env: TUNEPLANE_LIVE_STAGING_GROUP (default: the live user's primary group). Against the
// simulator (which runs jobs as its own user) it checks the staging and the log path only.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "attempt/log_tail.h"
#include "launch/attempt_identity.h"
#include "launch/launch_request.h"
#include "live_config.h"
#include "live_identity.h"
#include "live_staging_group.h"
#include "slurm/client_factory.h"
#include "slurm/rest_client.h"
#include "slurm/submit_body.h"
#include "staging/job_access.h"
#include "staging/os_users.h"
#include "staging/stager.h"
#include "staging/staging_paths.h"
#include "support/wait.h"

namespace tuneplane::staging {
namespace {

using nlohmann::json;

class LiveJobUser : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = live::liveConfig();
    if (!config) GTEST_SKIP() << live::kSkipReason;
    if (::geteuid() != 0) {
      GTEST_SKIP() << "stages as root for a job run as TUNEPLANE_LIVE_USER: run the live suite "
                      "as root to cover it";
    }
    live_ = *config;
    if (live_.user == "root") GTEST_SKIP() << "TUNEPLANE_LIVE_USER is root: nothing to cross";
    // The staging group is each test's to set (or not): it is what they are about.
    live::configureIdentity(live_, live::Staging::kNone, identity_);
    if (IsSkipped() || HasFatalFailure()) return;
    site_.slurm = identity_.slurmSite(live_);
    std::string root = live_.shared_dir + "/tp-live-staging-XXXXXX";
    ASSERT_NE(::mkdtemp(root.data()), nullptr) << "cannot make a directory in " << live_.shared_dir;
    ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
    site_.staging_root = root;
    auto factory = slurm::SlurmClientFactory::fromSite(site_.slurm);
    ASSERT_TRUE(factory.has_value()) << factory.error().describe();
    auto client = factory->make();
    ASSERT_TRUE(client.has_value()) << client.error().describe();
    client_ = std::move(*client);
    jobs_ = &client_->as(identity_.runAs(live_));
  }
  void TearDown() override {
    if (!site_.staging_root.empty()) fs_.removeTree(site_.staging_root);
  }

  // The rule a stage of the live user's job applies, as serve decides it: shared, the site's
  // (resolveJobAccess: through staging.group when set); per_user, the job's user's under the
  // site's (decideUserAccess: users/<user>, which the one-time step makes).
  Result<JobAccess> jobAccess() {
    if (!identity_.per_user) return resolveJobAccess(site_, users_);
    auto site_access = decideJobAccess(site_, users_, fs_);
    if (!site_access) return fail(site_access.error().toError());
    auto access = decideUserAccess(*site_access, site_.staging_root, live_.user, users_, fs_);
    if (!access) return fail(access.error().toError());
    return *access;
  }

  std::string group() { return live::stagingGroup(live_.user); }

  // A one-component CPU request for a fresh attempt under the staging root.
  launch::LaunchRequest request() {
    launch::OpenSslRandomSource random;
    auto identity = launch::newAttemptIdentity("tp-live-jobuser", 1, random);
    EXPECT_TRUE(identity);
    auto dir = staging::attemptDir(site_.staging_root, identity->job_id, 1, identity_.runAs(live_));
    EXPECT_TRUE(dir);
    const std::string attempt_dir = *dir;
    launch::LaunchRequest r;
    r.job_name = "tp-live-jobuser";
    r.identity = *identity;
    launch::Component c;
    c.pool_name = "main";
    c.partition = "cpu";
    c.cpus_per_node = 1;
    c.memory_mb = 100;
    c.time_limit = std::chrono::minutes(5);
    r.components = {c};
    r.scheduler_environment = {{"PATH", live_.slurm_bin + ":/usr/bin:/bin"}};
    r.attempt_dir = attempt_dir;
    r.logs_dir = attempt_dir + "/logs";
    r.output_dir = attempt_dir + "/output";
    if (identity_.per_user) r.job_umask = launch::kPerUserJobUmask;  // as the assembler sets it
    return r;
  }

  // Polls the job until its state has no flag and is not PENDING/RUNNING, or 3 minutes pass.
  std::vector<std::string> finalState(const std::string& sluid) {
    std::vector<std::string> last;
    const bool ended = tuneplane::test::waitUntil(
        [&] {
          auto jobs = jobs_->getJob(sluid);
          if (!jobs || jobs->empty()) return false;
          last = jobs->front().job_state;
          const std::string base = jobs->front().baseState();
          return last.size() == 1 && base != "PENDING" && base != "RUNNING";
        },
        std::chrono::minutes(3), std::chrono::milliseconds(500));
    if (!ended) ADD_FAILURE() << "deadline passed polling " << sluid;
    return last;
  }

  live::Live live_;
  live::LiveIdentity identity_;
  catalog::SiteConfig site_;
  PosixOsUsers users_;
  PosixStagingFs fs_;
  std::unique_ptr<slurm::SlurmRestClient> client_;
  slurm::SlurmClient* jobs_ = nullptr;  // as the job's user (per_user: the live user)
};

// shared: no staging.group; per_user: no users/<live user> (the one-time step not run).
TEST_F(LiveJobUser, WithoutAGroupOrUserDirRootIsRefusedBeforeStagingOrSubmitting) {
  auto access = jobAccess();
  ASSERT_FALSE(access) << "root staged for " << live_.user << " without "
                       << (identity_.per_user ? "users/" + live_.user : "staging.group");
  if (identity_.per_user) {
    EXPECT_EQ(access.error().code, "staging.user_dir_missing") << access.error().describe();
    return;
  }
  EXPECT_TRUE(access.error().code == "staging.job_user_mismatch" ||
              access.error().code == "staging.unknown_job_user")
      << access.error().describe();
}

// shared: through staging.group; per_user: through users/<live user> and the user's group.
TEST_F(LiveJobUser, ThroughTheStagingGroupOrUserDirTheJobCompletesWithItsLog) {
  if (identity_.per_user) {
    const Status made = live::makeUserStagingDir(site_.staging_root, live_.user);
    ASSERT_TRUE(made) << made.error().describe();
  } else {
    site_.staging.group = group();
    ASSERT_FALSE(site_.staging.group->empty()) << "no group for " << live_.user;
  }
  auto access = jobAccess();
  if (!access) {
    // Refused before anything was staged or submitted: the other acceptable outcome.
    GTEST_SKIP() << "refused before submit: " << access.error().describe();
  }
  const launch::LaunchRequest r = request();
  const std::string& dir = r.attempt_dir;
  const std::string script =
      "#!/bin/bash\necho \"hello from $(id -un)\"\necho 42 > '" + r.output_dir + "/result.txt'\n";
  const json body = slurm::buildSubmitBody(r, script);
  auto staged = stageAttempt(r, script, body, *access, fs_);
  ASSERT_TRUE(staged) << staged.error().describe();

  auto receipt = jobs_->submit(body);
  ASSERT_TRUE(receipt) << receipt.error().describe();
  auto first = jobs_->getJob(std::to_string(receipt->job_id));
  ASSERT_TRUE(first && !first->empty());
  EXPECT_EQ(first->front().user_name, live_.user);  // Slurm's record: the job's user
  const auto state = finalState(first->front().sluid);

  auto log = attempt::readLogTail(dir, "main", attempt::LogStream::kStdout,
                                  attempt::JobState::kRanAndEnded);
  ASSERT_TRUE(log) << log.error().describe();
  ASSERT_FALSE(log->missing) << "ended " << ::testing::PrintToString(state) << ": " << log->reason;
  EXPECT_EQ(state, std::vector<std::string>{"COMPLETED"});
  // The log's owner is who really ran the job: the live user on a real cluster (the
  // simulator runs jobs as itself).
  struct stat st {};
  ASSERT_EQ(::stat((r.logs_dir + "/main.out").c_str(), &st), 0);
  auto owner = users_.userById(st.st_uid);
  ASSERT_TRUE(owner && *owner);
  RecordProperty("job_ran_as", (*owner)->name);
  EXPECT_EQ(log->text, "hello from " + (*owner)->name + "\n");
  std::ifstream result(r.output_dir + "/result.txt");
  std::stringstream text;
  text << result.rdbuf();
  EXPECT_EQ(text.str(), "42\n");
}

}  // namespace
}  // namespace tuneplane::staging
