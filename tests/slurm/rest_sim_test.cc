// SlurmRestClient against the in-process simulator (port 0): its injected faults produce the
// client's error classes end to end — a dropped submit response is an unknown outcome, 5xx
// are retried for reads only, expired tokens are refreshed once, latency beyond the timeout
// is an unknown outcome.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "slurm/rest_client.h"

namespace tuneplane::slurm {
namespace {

namespace fs = std::filesystem;

class SimClient : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tp-rest-sim-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "key") << "0123456789abcdef0123456789abcdef";
    sim::SimulatorOptions options;
    options.jwt_key_file = (dir_ / "key").string();
    options.state_dir = (dir_ / "state").string();
    options.epilog = std::chrono::milliseconds(100);
    auto started = sim::Simulator::start(options);
    ASSERT_TRUE(started.has_value()) << started.error().describe();
    sim_ = std::move(*started);
    client_ = makeClient(std::chrono::milliseconds(5000));
  }
  void TearDown() override {
    client_.reset();
    sim_.reset();
    fs::remove_all(dir_);
  }

  std::unique_ptr<SlurmRestClient> makeClient(std::chrono::milliseconds timeout) {
    RestClientOptions options;
    options.http.base_url = sim_->baseUrl();
    options.http.request_timeout = timeout;
    options.user = "tpuser";
    options.random = [] { return 0.0; };
    options.sleep = [this](std::chrono::milliseconds d) { sleeps_.push_back(d); };
    auto tokens = std::make_unique<MintingTokenProvider>(
        "tpuser", "0123456789abcdef0123456789abcdef", std::chrono::seconds(600), systemUnixClock());
    minting_ = tokens.get();
    auto client = SlurmRestClient::create(std::move(options), std::move(tokens));
    EXPECT_TRUE(client.has_value());
    return std::move(*client);
  }

  nlohmann::json body() const {
    return {{"script", "#!/bin/bash\nsleep 30\n"},
            {"job",
             {{"name", "tp-sim"},
              {"partition", "cpu"},
              {"current_working_directory", dir_.string()},
              {"environment", {"PATH=/usr/bin:/bin"}},
              {"requeue", false}}}};
  }

  fs::path dir_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<SlurmRestClient> client_;
  MintingTokenProvider* minting_ = nullptr;
  std::vector<std::chrono::milliseconds> sleeps_;
};

TEST_F(SimClient, SubmitGetByIdThenSluidAndCancel) {
  auto receipt = client_->submit(body());
  ASSERT_TRUE(receipt.has_value()) << receipt.error().describe();
  auto jobs = client_->getJob(std::to_string(receipt->job_id));
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  std::string sluid = jobs->front().sluid;
  ASSERT_EQ(sluid.size(), 14u);
  auto by_sluid = client_->getJob(sluid);
  ASSERT_TRUE(by_sluid.has_value());
  EXPECT_EQ(by_sluid->front().job_id, receipt->job_id);
  EXPECT_TRUE(client_->cancel(sluid, std::nullopt).has_value());
}

TEST_F(SimClient, TheControllerConfigIsReadOnV0045AndNotAskedForOnV0044) {
  auto config = client_->controllerConfig();
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  EXPECT_EQ(config->preempt_type, "preempt/none");  // the simulator preempts nothing itself
  EXPECT_EQ(config->preempt_mode, (std::vector<std::string>{"DISABLED"}));
  EXPECT_TRUE(config->preempt_parameters.empty());

  // A v0.0.44 client says so without a request (asked, this v0.0.45-only server would answer
  // 404 text, a rejection).
  RestClientOptions options;
  options.http.base_url = sim_->baseUrl();
  options.api_version = "v0.0.44";
  auto v44 = SlurmRestClient::create(
      std::move(options),
      std::make_unique<MintingTokenProvider>("tpuser", "0123456789abcdef0123456789abcdef",
                                             std::chrono::seconds(600), systemUnixClock()));
  ASSERT_TRUE(v44.has_value());
  auto none = (*v44)->controllerConfig();
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().error.code, kErrConfUnavailable);
  EXPECT_EQ(none.error().transport, TransportClass::kNotSent);
  EXPECT_EQ(none.error().http_status, 0);
  EXPECT_NE(none.error().error.message.find("v0.0.44 has no GET /conf"), std::string::npos)
      << none.error().describe();
}

TEST_F(SimClient, DroppedSubmitResponseIsOutcomeUnknownAndTheJobExists) {
  sim_->dropNextSubmitResponses(1);
  auto receipt = client_->submit(body());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().transport, TransportClass::kUnknown);
  EXPECT_EQ(receipt.error().error.code, "slurm.outcome_unknown");
  auto states = client_->listJobStates({});
  ASSERT_TRUE(states.has_value()) << states.error().describe();
  EXPECT_EQ(states->size(), 1u);  // created once, never resubmitted
}

// The fault campaign's seed 777 (issue 21): libcurl silently sends a request again on a fresh
// connection when a kept-alive one closes before any answer — a POST too. A dropped submit
// answer then made a second Slurm job with the same token, and TunePlane knew only the
// second. A request that changes something never goes out on a reused connection.
TEST_F(SimClient, ADroppedSubmitAnswerOnAKeptAliveConnectionIsNotSentAgain) {
  ASSERT_TRUE(client_->ping().has_value());  // the connection the submit would reuse
  ASSERT_TRUE(client_->submit(body()).has_value());
  sim_->dropNextSubmitResponses(1);
  auto receipt = client_->submit(body());
  ASSERT_FALSE(receipt.has_value()) << "answered: Slurm job " << receipt->job_id;
  EXPECT_EQ(receipt.error().transport, TransportClass::kUnknown);
  auto states = client_->listJobStates({});
  ASSERT_TRUE(states.has_value()) << states.error().describe();
  EXPECT_EQ(states->size(), 2u);  // the first submit and the dropped one: none sent twice
}

// The same answer lost to a TCP reset (a proxy or host that crashed) instead of a close: the
// job exists once, the submit is "unknown", never sent again.
TEST_F(SimClient, ASubmitWhoseConnectionIsResetIsOutcomeUnknownAndNotSentAgain) {
  ASSERT_TRUE(client_->ping().has_value());  // a kept-alive connection for the submit
  sim_->resetNextSubmitConnections(1);
  auto receipt = client_->submit(body());
  ASSERT_FALSE(receipt.has_value()) << "answered: Slurm job " << receipt->job_id;
  EXPECT_EQ(receipt.error().transport, TransportClass::kUnknown);
  // libcurl's words: an RST, not a close.
  EXPECT_NE(receipt.error().describe().find("reset by peer"), std::string::npos)
      << receipt.error().describe();
  EXPECT_EQ(receipt.error().error.code, "slurm.outcome_unknown");
  auto states = client_->listJobStates({});
  ASSERT_TRUE(states.has_value()) << states.error().describe();
  EXPECT_EQ(states->size(), 1u);
}

TEST_F(SimClient, ServerErrorsAreRetriedForReadsButNotForSubmit) {
  sim_->failNextRequests(2, 503);
  auto ping = client_->ping();
  ASSERT_TRUE(ping.has_value()) << ping.error().describe();
  EXPECT_EQ(sleeps_.size(), 2u);
  sim_->failNextRequests(1, 500);
  auto receipt = client_->submit(body());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().http_status, 500);
  EXPECT_EQ(receipt.error().transport, TransportClass::kRejected);
}

TEST_F(SimClient, ExpiredTokensAreRefreshedOnce) {
  ASSERT_TRUE(client_->ping().has_value());
  int minted = minting_->mintCount();
  sim_->expireTokens();
  // Tokens are minted per second; the new one must be issued after the expiry instant.
  sleep(1);
  auto jobs = client_->listJobs(std::nullopt);
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  EXPECT_EQ(minting_->mintCount(), minted + 1);
}

TEST_F(SimClient, LatencyBeyondTheTimeoutIsOutcomeUnknown) {
  sim_->setLatency(std::chrono::milliseconds(1500));
  auto impatient = makeClient(std::chrono::milliseconds(300));
  auto receipt = impatient->submit(body());
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().transport, TransportClass::kUnknown);
  sim_->setLatency(std::chrono::milliseconds(0));
}

}  // namespace
}  // namespace tuneplane::slurm
