// What SIGHUP does (server/site_reload.h), on a running Daemon: a token added and a runtime
// added take effect without a restart while a job keeps being tracked to its end; a broken
// registry, or a token and a broken registry together, change nothing and say why.
#include <filesystem>

#include "daemon_fixture.h"
#include "server/site_reload.h"

namespace tuneplane::server::testing {
namespace {

constexpr const char* kCarolToken = "carol-secret-token-0004";

class DaemonReloadTest : public DaemonFixture {
 protected:
  void SetUp() override {
    DaemonFixture::SetUp();
    if (HasFatalFailure()) return;
    DaemonOptions options;
    options.tokens = {{.user = "alice", .token_sha256 = sha256Hex(kAliceToken)}};
    startDaemon(std::move(options));
    // The site file as serve read it at start: alice's token in server.tokens.
    appendToSite("server:\n  tokens:\n    - {user: alice, token_sha256: " + sha256Hex(kAliceToken) +
                 "}\n");
    running_ = *api::loadServerConfig(site_->site());
  }

  void appendToSite(const std::string& yaml) {
    pipeline::testing::writeFile(site_->site(), pipeline::testing::readFile(site_->site()) + yaml);
  }
  void addCarol() {
    const std::string site = pipeline::testing::readFile(site_->site());
    const std::string carol = "    - {user: carol, token_sha256: " + sha256Hex(kCarolToken) + "}\n";
    pipeline::testing::writeFile(site_->site(), site + carol);
  }
  std::string registryPath() const { return site_->dir() + "/runtimes.yaml"; }
  // A second runtime, custom-second: the same image under another id.
  void addRuntime() {
    const std::string text = pipeline::testing::readFile(registryPath());
    const auto at = text.find("  - id: custom-demo");
    const auto end = text.find("  - id:", at + 1);
    std::string second = text.substr(at, end - at);
    second.replace(second.find("custom-demo"), 11, "custom-second");
    pipeline::testing::writeFile(registryPath(), text + second);
  }

  Checked<SiteReload> read() {
    return readSiteReload(site_->site(), pipeline::SiteEnvironment{}, {}, running_);
  }
  int whoami(const std::string& token) {
    auto res = api_->Get("/v1/whoami", as(token));
    return res ? res->status : 0;
  }
  int validate(const std::string& runtime) {
    auto res = api_->Post("/v1/validate", as(kAliceToken),
                          cpuSpec("echo x", "", "hello", "", runtime), "application/yaml");
    return res ? res->status : 0;
  }

  api::ServerConfig running_;
};

TEST_F(DaemonReloadTest, ATokenAndARuntimeAddedTakeEffectWhileAJobIsTracked) {
  const std::string id = submit(cpuSpec("sleep 2; echo done"));
  ASSERT_TRUE(waitForPhase(id, "Running"));
  EXPECT_EQ(whoami(kCarolToken), 401);
  EXPECT_EQ(validate("custom-second"), 422);

  addCarol();
  addRuntime();
  auto next = read();
  ASSERT_TRUE(next) << next.error().front().describe();
  EXPECT_TRUE(next->restart_needed.empty());
  auto applied = daemon_->reload(std::move(*next));
  ASSERT_TRUE(applied) << applied.error().describe();
  EXPECT_NE(applied->find("2 API tokens (were 1)"), std::string::npos) << *applied;
  EXPECT_NE(applied->find("runtimes from " + registryPath()), std::string::npos) << *applied;

  EXPECT_EQ(whoami(kCarolToken), 200);
  EXPECT_EQ(whoami(kAliceToken), 200);
  EXPECT_EQ(validate("custom-second"), 200);
  caller_ = kCarolToken;
  const std::string carols = submit(cpuSpec("echo carol", "", "carols", "", "custom-second"));
  // The job that was running before the reload, and one after it, both end Succeeded.
  caller_ = kAliceToken;
  EXPECT_TRUE(waitForPhase(id, "Succeeded"));
  caller_ = kCarolToken;
  EXPECT_TRUE(waitForPhase(carols, "Succeeded"));
}

TEST_F(DaemonReloadTest, ABrokenRegistryLeavesTheOldOneAndTheOldTokensInForce) {
  addCarol();  // a good change beside the broken one: all or none
  pipeline::testing::writeFile(registryPath(),
                               "runtimes:\n  - id: custom-demo\n    sha256: not-hex\n");
  auto next = read();
  ASSERT_FALSE(next);
  std::string why;
  for (const auto& e : next.error()) why += e.describe() + "\n";
  EXPECT_NE(why.find("registry."), std::string::npos) << why;
  EXPECT_NE(why.find("runtimes[0]"), std::string::npos) << why;
  // Nothing was applied: carol is still unknown, custom-demo still validates.
  EXPECT_EQ(whoami(kCarolToken), 401);
  EXPECT_EQ(validate("custom-demo"), 200);
}

TEST_F(DaemonReloadTest, ABrokenSiteFileIsRefusedWhole) {
  addRuntime();
  appendToSite("  listen: [not, an, address]\n");
  auto next = read();
  ASSERT_FALSE(next);
  EXPECT_EQ(next.error().front().code, "server.wrong_type") << next.error().front().describe();
  EXPECT_EQ(validate("custom-second"), 422);  // the new runtime was not applied either
}

TEST_F(DaemonReloadTest, ASettingOnlyARestartAppliesIsNamedAndTheRestApplied) {
  addCarol();
  appendToSite("  max_connections: 7\n");
  auto next = read();
  ASSERT_TRUE(next) << next.error().front().describe();
  EXPECT_EQ(next->restart_needed, std::vector<std::string>{"server.max_connections"});
  auto applied = daemon_->reload(std::move(*next));
  ASSERT_TRUE(applied);
  EXPECT_NE(applied->find("applied only by a restart: server.max_connections"), std::string::npos)
      << *applied;
  EXPECT_EQ(whoami(kCarolToken), 200);
}

}  // namespace
}  // namespace tuneplane::server::testing
