// Live: an attempt staged by root for a job that the cluster runs as TUNEPLANE_LIVE_USER.
// Either the job completes and its log is read back (through staging.group), or the submit
// is refused before anything is staged (no group) — never a silent FAILED with an empty
// logs/ (issue 11). Skipped unless TUNEPLANE_LIVE_* is set and the suite runs as root.
// Env: TUNEPLANE_LIVE_STAGING_GROUP (default: the live user's primary group). Against the
// simulator (which runs jobs as its own user) it checks the staging and the log path only.
#include <gtest/gtest.h>
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
#include "live_config.h"
#include "live_staging_group.h"
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
    site_.slurm.url = live_.url;
    site_.slurm.user = live_.user;
    site_.slurm.token_file = live_.token_file;
    site_.slurm.jwt_key_file = live_.key_file;
    site_.slurm.token_lifespan = std::chrono::seconds(600);
    site_.staging_root = live_.shared_dir + "/tp-live-staging";
    std::filesystem::create_directories(site_.staging_root);
    ASSERT_EQ(::chmod(site_.staging_root.c_str(), 0755), 0);
    auto client = slurm::SlurmRestClient::fromSite(site_.slurm);
    ASSERT_TRUE(client.has_value()) << client.error().describe();
    client_ = std::move(*client);
  }

  std::string group() { return live::stagingGroup(live_.user); }

  // A one-component CPU request for a fresh attempt under the staging root.
  launch::LaunchRequest request() {
    launch::OpenSslRandomSource random;
    auto identity = launch::newAttemptIdentity("tp-live-jobuser", 1, random);
    EXPECT_TRUE(identity);
    auto dir = staging::attemptDir(site_.staging_root, identity->job_id, 1);
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
    return r;
  }

  // Polls the job until its state has no flag and is not PENDING/RUNNING, or 3 minutes pass.
  std::vector<std::string> finalState(const std::string& sluid) {
    std::vector<std::string> last;
    const bool ended = tuneplane::test::waitUntil(
        [&] {
          auto jobs = client_->getJob(sluid);
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
  catalog::SiteConfig site_;
  PosixOsUsers users_;
  PosixStagingFs fs_;
  std::unique_ptr<slurm::SlurmRestClient> client_;
};

TEST_F(LiveJobUser, WithoutAGroupRootIsRefusedBeforeStagingOrSubmitting) {
  auto access = resolveJobAccess(site_, users_);
  ASSERT_FALSE(access) << "root staged for " << live_.user << " without staging.group";
  EXPECT_TRUE(access.error().code == "staging.job_user_mismatch" ||
              access.error().code == "staging.unknown_job_user")
      << access.error().describe();
}

TEST_F(LiveJobUser, ThroughTheStagingGroupTheJobCompletesWithItsLog) {
  site_.staging.group = group();
  ASSERT_FALSE(site_.staging.group->empty()) << "no group for " << live_.user;
  auto access = resolveJobAccess(site_, users_);
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

  auto receipt = client_->submit(body);
  ASSERT_TRUE(receipt) << receipt.error().describe();
  auto first = client_->getJob(std::to_string(receipt->job_id));
  ASSERT_TRUE(first && !first->empty());
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
