// serve and the Slurm REST API version (issue 40): `auto` is negotiated once at start with
// what the simulator serves, and shown by /v1/capabilities and the doctor route; on a server
// that speaks only v0.0.44 (the simulator acting as Slurm 25.11.7) jobs still run to their end,
// and doctor warns of what degrades; one that speaks none of TunePlane's refuses the start.
#include "daemon_fixture.h"
#include "support/wait.h"

namespace tuneplane::server::testing {
namespace {

using namespace std::chrono_literals;

class DaemonApiVersionTest : public DaemonFixture {
 protected:
  void startAsRoot() {
    DaemonOptions options;
    options.tokens = {{.user = "alice", .token_sha256 = sha256Hex(kAliceToken), .admin = false},
                      {.user = "root", .token_sha256 = sha256Hex(kRootToken), .admin = true}};
    startDaemon(std::move(options));
  }
  json check(const json& report, const std::string& name) {
    for (const auto& c : report["checks"]) {
      if (c["name"] == name) return c;
    }
    return json();
  }
};

TEST_F(DaemonApiVersionTest, AutoOn2605IsV0045AndCapabilitiesSaySo) {
  startAsRoot();
  if (HasFatalFailure()) return;
  const json c = getJson("/v1/capabilities", kAliceToken);
  EXPECT_EQ(c["slurm_api_version"], "v0.0.45");
  EXPECT_EQ(c["slurm_api"]["configured"], "auto");
  EXPECT_EQ(c["slurm_api"]["negotiated"], true);
  EXPECT_EQ(c["slurm_api"]["offered"], json::array({"v0.0.45"}));
  EXPECT_EQ(c["slurm_api"]["release"], "26.05.3");
  EXPECT_TRUE(c["slurm_api"]["degradations"].empty());
}

class DaemonOn2511Test : public DaemonApiVersionTest {
 protected:
  void tune(sim::SimulatorOptions& o) override {
    o.api_versions = {"v0.0.44"};
    sim::testing::SimFixture::api_ = "/slurm/v0.0.44";
  }
};

TEST_F(DaemonOn2511Test, AutoPicksV0044RunsJobsAndDoctorSaysWhatDegrades) {
  startAsRoot();
  if (HasFatalFailure()) return;
  const json c = getJson("/v1/capabilities", kAliceToken);
  EXPECT_EQ(c["slurm_api_version"], "v0.0.44");
  EXPECT_EQ(c["slurm_api"]["release"], "25.11.7");
  ASSERT_EQ(c["slurm_api"]["degradations"].size(), 3u);
  EXPECT_NE(c["slurm_api"]["degradations"][0]["what"].get<std::string>().find("no SLUID"),
            std::string::npos);

  caller_ = kAliceToken;
  const std::string id = submit(cpuSpec("echo on 25.11"));
  ASSERT_TRUE(waitForPhase(id, "Succeeded"));
  const json job = getJson("/v1/jobs/" + id);
  const std::string key = job["attempts"][0]["components"][0]["sluid"];
  EXPECT_NE(key.find('@'), std::string::npos) << key;  // "<SLUID>@<numeric id>"
  bool said = false;
  const json events = getJson("/v1/jobs/" + id + "/events");
  for (const auto& e : events["items"]) {
    said |= e["reason"].get<std::string>().find("by its numeric id") != std::string::npos;
  }
  EXPECT_TRUE(said) << events.dump();

  auto res = api_->Get("/v1/doctor", as(kRootToken));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json api = check(json::parse(res->body), "api_version");
  EXPECT_EQ(api["status"], "warn") << api.dump();
  EXPECT_NE(api["message"].get<std::string>().find("v0.0.44 TunePlane degrades"), std::string::npos)
      << api["message"];
  EXPECT_EQ(check(json::parse(res->body), "slurmctld")["status"], "ok");
  EXPECT_EQ(check(json::parse(res->body), "token")["status"], "ok");
}

TEST_F(DaemonOn2511Test, AVersionTheServerDoesNotServeIsNotNegotiatedAway) {
  // v0.0.45 by name on a 25.11 server: serve starts (a version set by name is taken as set),
  // and doctor fails the check with what the server serves.
  site_ = std::make_unique<SiteDir>(sim_->baseUrl());
  site_->addSlurmYaml("  api_version: v0.0.45\n");
  context_ = site_->context();
  auto opened = store::SqliteJobStore::open(store::SqliteJobStore::kInMemory);
  ASSERT_TRUE(opened);
  store_ = std::move(*opened);
  DaemonOptions options;
  options.tokens = {{.user = "root", .token_sha256 = sha256Hex(kRootToken), .admin = true}};
  auto started = Daemon::start(context_, *store_, std::move(options));
  ASSERT_TRUE(started) << started.error().describe();
  daemon_ = std::move(*started);
  api_ = checkedClient(daemon_->port());
  auto res = api_->Get("/v1/doctor", as(kRootToken));
  ASSERT_TRUE(res);
  const json api = check(json::parse(res->body), "api_version");
  EXPECT_EQ(api["status"], "fail") << api.dump();
  EXPECT_NE(api["message"].get<std::string>().find("has no v0.0.45 routes"), std::string::npos)
      << api["message"];
}

TEST_F(DaemonApiVersionTest, AServerThatSpeaksNoneOfTunePlanesRefusesTheStart) {
  // A slurmrestd of Slurm 24.05 (v0.0.40, v0.0.41): its OpenAPI document lists those.
  httplib::Server old;
  old.Get("/openapi/v3", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(json{{"openapi", "3.0.3"},
                         {"info", {{"x-slurm", {{"release", "24.05.8"}}}}},
                         {"paths",
                          {{"/slurm/v0.0.40/job/submit", json::object()},
                           {"/slurm/v0.0.41/job/submit", json::object()}}}}
                        .dump(),
                    "application/json");
  });
  const int port = old.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { old.listen_after_bind(); });
  // Not ASSERT: the thread must be joined below whatever happens.
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return old.is_running(); }, 10s, 1ms))
      << "the old slurmrestd's accept loop did not start";
  site_ = std::make_unique<SiteDir>("http://127.0.0.1:" + std::to_string(port));
  context_ = site_->context();
  auto opened = store::SqliteJobStore::open(store::SqliteJobStore::kInMemory);
  ASSERT_TRUE(opened);
  store_ = std::move(*opened);
  auto started = Daemon::start(context_, *store_, DaemonOptions{});
  old.stop();
  serving.join();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code, "slurm.no_common_api");
  EXPECT_EQ(started.error().field, "slurm.api_version");
  EXPECT_NE(started.error().message.find("serves REST API v0.0.40, v0.0.41"), std::string::npos)
      << started.error().message;
}

}  // namespace
}  // namespace tuneplane::server::testing
