// The live suite: SlurmRestClient against a real slurmrestd (or the simulator) named by
// TUNEPLANE_LIVE_* variables (a real test cluster's; docs/developers.md, "Commands"). Skipped when
// they are not set. The client is the one serve makes (slurm/client_factory.h) for the identity
// TUNEPLANE_LIVE_IDENTITY names (live_identity.h): a job's own requests go as its user
// (SlurmClient::as: the live user in per_user mode), what is no one job's as the service. Real jobs
// are submitted, polled and cancelled, so this suite waits on real time (bounded deadlines); it is
// not part of the hermetic default run's assertions.
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "live_config.h"
#include "live_identity.h"
#include "slurm/client_factory.h"
#include "slurm/job_key.h"
#include "slurm/rest_client.h"
#include "support/wait.h"

namespace tuneplane::slurm {
namespace {

using nlohmann::json;

using live::Live;
using live::liveConfig;

class LiveSlurm : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = liveConfig();
    if (!config) {
      GTEST_SKIP() << live::kSkipReason;
    }
    live_ = *config;
    live::configureIdentity(live_, live::Staging::kNone, identity_);
    if (IsSkipped() || HasFatalFailure()) return;
    auto factory = SlurmClientFactory::fromSite(identity_.slurmSite(live_));
    ASSERT_TRUE(factory.has_value()) << factory.error().describe();
    auto client = factory->make();
    ASSERT_TRUE(client.has_value()) << client.error().describe();
    client_ = std::move(*client);
    // The version is chosen once, as serve chooses it at start; the user's view speaks it.
    auto negotiated = client_->negotiate();
    ASSERT_TRUE(negotiated.has_value()) << negotiated.error().describe();
    jobs_ = &client_->as(identity_.runAs(live_));
  }

  json component(const std::string& name, const std::string& partition) const {
    return {{"name", name},
            {"partition", partition},
            {"current_working_directory", live_.shared_dir},
            {"environment", {"PATH=" + live_.slurm_bin + ":/usr/bin:/bin"}},
            {"standard_output", live_.shared_dir + "/tp-live-%j.out"},
            {"requeue", false},
            {"time_limit", {{"set", true}, {"number", 5}}},
            {"minimum_nodes", 1},
            {"cpus_per_task", 1},
            {"memory_per_node", {{"set", true}, {"number", 100}}}};
  }

  // Polls GET /job/{sluid} until `done` holds for the first record, or the deadline passes.
  template <typename Pred>
  std::vector<JobRecord> pollUntil(const std::string& sluid, Pred done, int seconds = 120) {
    std::vector<JobRecord> last;
    const bool reached = tuneplane::test::waitUntil(
        [&] {
          auto jobs = jobs_->getJob(sluid);
          if (!jobs || jobs->empty()) return false;
          last = *jobs;
          return static_cast<bool>(done(last));
        },
        std::chrono::seconds(seconds), std::chrono::milliseconds(250));
    if (!reached) ADD_FAILURE() << "deadline passed polling " << sluid;
    return last;
  }

  Live live_;
  live::LiveIdentity identity_;
  std::unique_ptr<SlurmRestClient> client_;  // the service: ping, listings, the state poll
  SlurmClient* jobs_ = nullptr;              // as the jobs' user: submit, reads, cancel
};

TEST_F(LiveSlurm, PingAnswersWithAResponder) {
  auto ping = client_->ping();
  ASSERT_TRUE(ping.has_value()) << ping.error().describe();
  EXPECT_TRUE(ping->anyResponding());
  // auto speaks the newest version the release serves: v0.0.44 on 25.11, v0.0.45 on 26.05.
  ASSERT_NE(client_->api(), nullptr);
  EXPECT_EQ(client_->api()->name, live::expectedApiVersion(live_, ping->release))
      << "Slurm " << ping->release;
  EXPECT_EQ(ping->data_parser, "data_parser/" + std::string(client_->api()->name));
}

// The key a record is followed by: its SLUID where the version's paths take one, else
// "<SLUID>@<numeric id>" (slurm/job_key.h); either way the SLUID Slurm reported is in it.
TEST_F(LiveSlurm, JobKeysFollowTheVersionsPaths) {
  json body = {{"script", "#!/bin/bash\ntrue\n"}, {"job", component("tp-live-key", "cpu")}};
  auto receipt = jobs_->submit(body);
  ASSERT_TRUE(receipt.has_value()) << receipt.error().describe();
  auto first = jobs_->getJob(std::to_string(receipt->job_id));
  ASSERT_TRUE(first.has_value()) << first.error().describe();
  const auto key = parseJobKey(first->front().sluid);
  ASSERT_TRUE(key) << first->front().sluid;
  EXPECT_TRUE(looksLikeSluid(key->sluid)) << first->front().sluid;
  EXPECT_EQ(key->numeric_form, client_->api()->addressing == JobAddressing::kByNumericId);
  if (key->numeric_form) {
    EXPECT_EQ(key->job_id, receipt->job_id);
  }
  // Read again by the key: the same job, the same key.
  auto again = jobs_->getJob(first->front().sluid);
  ASSERT_TRUE(again.has_value()) << again.error().describe();
  EXPECT_EQ(again->front().sluid, first->front().sluid);
}

TEST_F(LiveSlurm, PartitionsAndNodesDecode) {
  auto parts = client_->listPartitions();
  ASSERT_TRUE(parts.has_value()) << parts.error().describe();
  EXPECT_FALSE(parts->empty());
  auto nodes = client_->listNodes();
  ASSERT_TRUE(nodes.has_value()) << nodes.error().describe();
  EXPECT_FALSE(nodes->empty());
}

TEST_F(LiveSlurm, SubmitPollThroughCompletingToCompleted) {
  json body = {{"script", "#!/bin/bash\nsleep 2\necho done\n"},
               {"job", component("tp-live-single", "cpu")}};
  auto receipt = jobs_->submit(body);
  ASSERT_TRUE(receipt.has_value()) << receipt.error().describe();
  auto first = jobs_->getJob(std::to_string(receipt->job_id));
  ASSERT_TRUE(first.has_value()) << first.error().describe();
  // Slurm's record is the live user's: slurm.user's in shared mode, its own in per_user.
  EXPECT_EQ(first->front().user_name, live_.user);
  std::string sluid = first->front().sluid;
  ASSERT_TRUE(parseJobKey(sluid).has_value()) << sluid;
  bool saw_completing = false;
  auto final = pollUntil(sluid, [&](const std::vector<JobRecord>& jobs) {
    if (jobs.front().hasStateFlag("COMPLETING")) saw_completing = true;
    return jobs.front().job_state == std::vector<std::string>{"COMPLETED"};
  });
  ASSERT_FALSE(final.empty());
  EXPECT_EQ(final.front().exit_code.return_code.value(), 0);
  EXPECT_TRUE(saw_completing) << "the epilog's COMPLETING was never observed";
  auto states = client_->listJobStates({receipt->job_id});
  ASSERT_TRUE(states.has_value()) << states.error().describe();
  ASSERT_EQ(states->size(), 1u);
  EXPECT_EQ(states->front().numericId(), receipt->job_id);
}

TEST_F(LiveSlurm, CancelRunningJobBySluidThenCancelAgainIsAlreadyCompleting) {
  json body = {{"script", "#!/bin/bash\nsleep 120\n"}, {"job", component("tp-live-cancel", "cpu")}};
  auto receipt = jobs_->submit(body);
  ASSERT_TRUE(receipt.has_value()) << receipt.error().describe();
  auto first = jobs_->getJob(std::to_string(receipt->job_id));
  ASSERT_TRUE(first.has_value());
  std::string sluid = first->front().sluid;
  pollUntil(sluid, [](const auto& jobs) { return jobs.front().baseState() == "RUNNING"; });
  auto cancelled = jobs_->cancel(sluid, std::nullopt);
  ASSERT_TRUE(cancelled.has_value()) << cancelled.error().describe();
  pollUntil(sluid, [](const auto& jobs) {
    return jobs.front().job_state == std::vector<std::string>{"CANCELLED"};
  });
  auto again = jobs_->cancel(sluid, std::nullopt);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().error.code, "slurm.already_completing");
}

TEST_F(LiveSlurm, HetJobHasOneRecordPerComponentWithOwnSluids) {
  json body = {{"script", "#!/bin/bash\nsleep 1\n"},
               {"jobs", {component("tp-live-het", "cpu"), component("tp-live-het", "cpu")}}};
  auto receipt = jobs_->submit(body);
  ASSERT_TRUE(receipt.has_value()) << receipt.error().describe();
  auto jobs = jobs_->getJob(std::to_string(receipt->job_id));
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].het_job_offset.value(), 0);
  EXPECT_EQ((*jobs)[1].het_job_offset.value(), 1);
  EXPECT_EQ((*jobs)[1].het_job_id.value(), static_cast<int64_t>(receipt->job_id));
  EXPECT_NE((*jobs)[0].sluid, (*jobs)[1].sluid);
  auto by_sluid = jobs_->getJob((*jobs)[0].sluid);
  ASSERT_TRUE(by_sluid.has_value());
  EXPECT_EQ(by_sluid->size(), 2u);
  (void)jobs_->cancel((*jobs)[0].sluid, std::nullopt);
}

TEST_F(LiveSlurm, UnknownSluidIsJobNotFound) {
  auto jobs = jobs_->getJob("sCC1M8VPG9ZZZZ");
  ASSERT_FALSE(jobs.has_value());
  EXPECT_EQ(jobs.error().error.code, "slurm.job_not_found");
  auto cancel = jobs_->cancel("sCC1M8VPG9ZZZZ", std::nullopt);
  ASSERT_FALSE(cancel.has_value());
  EXPECT_EQ(cancel.error().error.code, "slurm.job_not_found");
}

}  // namespace
}  // namespace tuneplane::slurm
