// ApiFixture: an ApiServer on loopback port 0 over SqliteJobStore in memory and a hermetic
// site (tests/pipeline/site_fixture.h) whose slurmrestd is unreachable — the route tests never
// talk to Slurm; the control loop is not running, so jobs stay where the API put them.
// Three callers: alice and bob (users) and root (admin). The access log is captured. Every
// answer the fixture's client receives is checked against docs/openapi.json.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../pipeline/site_fixture.h"
#include "api/api_server.h"
#include "catalog/artifact_verifier.h"
#include "control/job_service.h"
#include "launch/attempt_identity.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "store/sqlite_job_store.h"
#include "support/openapi_validator.h"

namespace tuneplane::api::testing {

using nlohmann::json;
using pipeline::testing::cpuSpec;
using pipeline::testing::SiteDir;

using staging::sha256Hex;  // what the site file's token_sha256 holds

inline constexpr const char* kAliceToken = "alice-secret-token-0001";
inline constexpr const char* kBobToken = "bob-secret-token-0002";
inline constexpr const char* kRootToken = "root-secret-token-0003";

// A client of the API on loopback `port` (30 s at most for an answer) that checks every
// answer it receives against docs/openapi.json.
inline std::unique_ptr<httplib::Client> checkedClient(int port) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
  client->set_read_timeout(30, 0);
  test::validateAnswersOf(*client);
  return client;
}

class ApiFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::SqliteJobStore::open(store::SqliteJobStore::kInMemory);
    ASSERT_TRUE(opened) << opened.error().describe();
    store_ = std::move(*opened);
    launcher_ = std::make_unique<pipeline::AttemptLauncher>(context_, verifier_, random_, fs_);
    service_ = std::make_unique<control::JobService>(*store_, *launcher_, clock_);
    startServer();
  }

  virtual void tune(ApiDependencies& deps, HttpServerOptions& options) {
    (void)deps;
    (void)options;
  }

  void startServer() {
    ApiDependencies deps{*service_, *store_, *launcher_, metrics_,       readLog, {}, {},
                         {},        {},      {},         readResumeStep, {},      {}};
    deps.job_submitted = [this] { ++wakes_; };
    deps.access_log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      access_.push_back(line);
    };
    HttpServerOptions options;
    tokens_ = {{.user = "alice", .token_sha256 = sha256Hex(kAliceToken), .admin = false},
               {.user = "bob", .token_sha256 = sha256Hex(kBobToken), .admin = false},
               {.user = "root", .token_sha256 = sha256Hex(kRootToken), .admin = true}};
    options.max_body_bytes = 64 * 1024;
    options.threads = 4;
    tune(deps, options);
    auto started = ApiServer::start(std::move(deps), std::move(options), tokens_);
    ASSERT_TRUE(started) << started.error().describe();
    server_ = std::move(*started);
    http_ = checkedClient(server_->port());
  }

  void TearDown() override {
    server_.reset();  // joins the workers: every request is counted
    // Every route a test used is in route_templates.h's fixed set, so no request it made was
    // counted as route="other".
    EXPECT_EQ(metrics_.render().find("route=\"other\""), std::string::npos)
        << "a route missing from api/route_templates.h";
  }

  static httplib::Headers bearer(const std::string& token) {
    if (token.empty()) return {};
    return {{"Authorization", "Bearer " + token}};
  }
  httplib::Result get(const std::string& path, const std::string& token = kAliceToken) {
    return http_->Get(path.c_str(), bearer(token));
  }
  httplib::Result post(const std::string& path, const std::string& body,
                       const std::string& token = kAliceToken,
                       const std::string& type = "application/yaml") {
    return http_->Post(path.c_str(), bearer(token), body, type.c_str());
  }
  static json body(const httplib::Result& res) {
    return res ? json::parse(res->body, nullptr, false) : json();
  }
  // The first error's code of an error answer.
  static std::string code(const httplib::Result& res) {
    const json b = body(res);
    if (!b.contains("errors") || b["errors"].empty()) return "<no errors>";
    return b["errors"][0].value("code", "");
  }
  // Submits a CPU job as `token`'s user; returns its id.
  std::string submitJob(const std::string& token = kAliceToken, const std::string& name = "hello") {
    auto res = post("/v1/jobs", cpuSpec("echo hello", "", name), token);
    EXPECT_TRUE(res && res->status == 201) << (res ? res->body : "no answer");
    return body(res).value("id", "");
  }
  // Attempt 1 of job `id` in `phase`, staged at `staging_dir`, with no component row.
  static store::AttemptRecord firstAttempt(const std::string& id, phase::AttemptPhase phase,
                                           const std::string& staging_dir) {
    store::AttemptRecord attempt;
    attempt.job_id = id;
    attempt.number = 1;
    attempt.phase = phase;
    attempt.submit_token = "tp-00112233445566778899aabbccddeeff";
    attempt.staging_dir = staging_dir;
    return attempt;
  }
  // Stores `attempt`, its job moved to `job_phase`, in one commit as the reconciler's.
  void commitAttempt(const store::AttemptRecord& attempt, phase::JobPhase job_phase) {
    auto view = store_->getJob(attempt.job_id);
    ASSERT_TRUE(view && *view) << "no job " << attempt.job_id;
    store::JobRecord job = (*view)->job;
    job.phase = job_phase;
    ASSERT_TRUE(store_->commit(store::Change{job, {attempt}, {}}));
  }
  // Gives job `id` a running attempt 1 with one component "main" staged at `staging_dir`, as
  // the reconciler would.
  void addRunningAttempt(const std::string& id, const std::string& staging_dir) {
    store::AttemptRecord attempt = firstAttempt(id, phase::AttemptPhase::kRunning, staging_dir);
    attempt.components.push_back({0, "main", 7, "sX", {"RUNNING"}, "None", {}, {}, "cpu1", 0, 0});
    commitAttempt(attempt, phase::JobPhase::kRunning);
  }
  std::vector<std::string> accessLines() {
    std::lock_guard<std::mutex> lock(mu_);
    return access_;
  }

  SiteDir site_{"http://127.0.0.1:9", /*use_token_file=*/true};
  pipeline::SiteContext context_ = site_.context();
  catalog::ArtifactVerifier verifier_;
  launch::OpenSslRandomSource random_;
  staging::PosixStagingFs fs_;
  FakeClock clock_;
  Metrics metrics_;
  std::unique_ptr<store::SqliteJobStore> store_;
  std::unique_ptr<pipeline::AttemptLauncher> launcher_;
  std::unique_ptr<control::JobService> service_;
  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<httplib::Client> http_;
  std::atomic<int> wakes_{0};
  std::vector<ApiToken> tokens_;  // the users startServer() starts with (tests may add some)
  std::mutex mu_;
  std::vector<std::string> access_;
};

}  // namespace tuneplane::api::testing
