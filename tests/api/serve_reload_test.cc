// `tuneplane serve` as a process, for what an operator does to a running one: SIGHUP after a
// user and a runtime were added (they work, no restart, a job keeps being tracked to its
// end); SIGHUP with a broken registry (refused, logged, the old one in force); a credential
// file others can read (serve refuses to start, naming the fix, unless the site accepts it);
// $STATE_DIRECTORY as the database's default home. Waits are bounded.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "serve_fixture.h"
#include "staging/stager.h"

namespace tuneplane::api::testing {
namespace {

using namespace std::chrono_literals;
using pipeline::testing::cpuSpec;  // self-contained in any unity batch
using staging::sha256Hex;

constexpr const char* kAlice = "serve-reload-alice";
constexpr const char* kCarol = "serve-reload-carol";

class ServeReloadTest : public ServeProcessFixture {
 protected:
  void start(SiteDir& site) {
    startServe(site, {"--db", site.dir() + "/tp.db"});
    port_ = waitForPort();
    ASSERT_GT(port_, 0) << readFile(stderr_path_);
    http_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    http_->set_read_timeout(10, 0);
  }
  int status(const std::string& method, const std::string& path, const std::string& token,
             const std::string& body = "") {
    const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + token}};
    auto res = method == "GET" ? http_->Get(path.c_str(), auth)
                               : http_->Post(path.c_str(), auth, body, "application/yaml");
    return res ? res->status : 0;
  }
  static std::string siteServer() {
    return "server:\n  poll_interval: 200ms\n  tokens:\n    - {user: alice, token_sha256: " +
           sha256Hex(kAlice) + "}\n";
  }
  bool logSays(const std::string& text) {
    return tuneplane::test::waitUntil(
        [&] { return readFile(stderr_path_).find(text) != std::string::npos; }, 20s);
  }

  int port_ = 0;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(ServeReloadTest, SighupPutsANewUserAndRuntimeInForceWithoutARestart) {
  SiteDir site(sim_->baseUrl(), false, "", siteServer());
  start(site);
  auto submitted = http_->Post("/v1/jobs", {{"Authorization", std::string("Bearer ") + kAlice}},
                               cpuSpec("sleep 2; echo done"), "application/yaml");
  ASSERT_TRUE(submitted && submitted->status == 201) << (submitted ? submitted->body : "");
  const std::string id = nlohmann::json::parse(submitted->body)["id"];
  EXPECT_EQ(status("GET", "/v1/whoami", kCarol), 401);

  // carol's token, and custom-demo again as custom-again.
  pipeline::testing::writeFile(
      site.site(),
      readFile(site.site()) + "    - {user: carol, token_sha256: " + sha256Hex(kCarol) + "}\n");
  const std::string registry = site.dir() + "/runtimes.yaml";
  std::string text = readFile(registry);
  std::string again = text.substr(0, text.find("  - id: custom-tampered"));
  again = again.substr(again.find("  - id: custom-demo"));
  again.replace(again.find("custom-demo"), 11, "custom-again");
  pipeline::testing::writeFile(registry, text + again);
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  ASSERT_TRUE(logSays("serve: reloaded: ")) << readFile(stderr_path_);
  EXPECT_EQ(status("GET", "/v1/whoami", kCarol), 200);
  EXPECT_EQ(status("POST", "/v1/validate", kCarol, cpuSpec("echo x", "", "h", "", "custom-again")),
            200);

  // A broken registry: refused, logged with its reason, the one in force stays.
  pipeline::testing::writeFile(registry, "runtimes: {not: a list}\n");
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  ASSERT_TRUE(
      logSays("serve: reload refused: the tokens, runtime registry and TLS files in "
              "force stay as they were"))
      << readFile(stderr_path_);
  EXPECT_TRUE(logSays("registry.")) << readFile(stderr_path_);
  EXPECT_EQ(status("POST", "/v1/validate", kCarol, cpuSpec("echo x", "", "h", "", "custom-again")),
            200);
  // The job submitted before the reloads was tracked throughout.
  EXPECT_TRUE(tuneplane::test::waitUntil(
      [&] {
        auto res = http_->Get(("/v1/jobs/" + id).c_str(),
                              {{"Authorization", std::string("Bearer ") + kAlice}});
        return res &&
               nlohmann::json::parse(res->body, nullptr, false).value("phase", "") == "Succeeded";
      },
      60s));
  ASSERT_EQ(::kill(pid_, SIGTERM), 0);
  EXPECT_EQ(waitForExit(20s), 0) << readFile(stderr_path_);
}

TEST_F(ServeReloadTest, ACredentialOthersCanReadStopsServeUnlessTheSiteAcceptsIt) {
  SiteDir site(sim_->baseUrl(), false, "", siteServer());
  std::filesystem::permissions(site.keyFile(), std::filesystem::perms::others_read,
                               std::filesystem::perm_options::add);
  startServe(site, {"--db", site.dir() + "/tp.db"});
  EXPECT_EQ(waitForExit(20s), 2) << readFile(stderr_path_);
  const std::string refused = readFile(stderr_path_);
  EXPECT_NE(refused.find("serve.exposed_credential"), std::string::npos) << refused;
  EXPECT_NE(refused.find("slurm.jwt_key_file"), std::string::npos) << refused;
  EXPECT_NE(refused.find("chmod 0600 " + site.keyFile()), std::string::npos) << refused;

  site.addSlurmYaml("  accept_exposed_credentials: true\n");
  start(site);
  EXPECT_NE(readFile(stderr_path_).find("accepted: slurm.accept_exposed_credentials is true"),
            std::string::npos)
      << readFile(stderr_path_);
  ASSERT_EQ(::kill(pid_, SIGTERM), 0);
  EXPECT_EQ(waitForExit(20s), 0);
}

// The simulated cluster's one node is this very host, as on a site that runs serve on a
// compute node.
class ServeOnANodeTest : public ServeReloadTest {
 protected:
  void tune(sim::SimulatorOptions& options) override {
    char host[256] = {};
    ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
    std::string name(host);
    name = name.substr(0, name.find('.'));
    const std::string cluster = dir_.path() + "/cluster.yaml";
    std::ofstream(cluster) << "nodes:\n  - {name: " << name << ", cpus: 4, memory_mb: 4096}\n"
                           << "partitions:\n  - {name: cpu, nodes: [" << name
                           << "], default: true}\n  - {name: gpu, nodes: [" << name << "]}\n";
    options.cluster_file = cluster;
  }
};

// Issue 45, item 3: the rule "this host is also a compute node" is doctor's and serve's alike:
// serve asks slurmrestd for the nodes at start, as doctor does, and refuses the signing key
// its jobs could read here.
TEST_F(ServeOnANodeTest, ServeRefusesToStartWithAKeyThatDoctorCallsExposedOnANode) {
  SiteDir site(sim_->baseUrl(), false, "", siteServer());
  startServe(site, {"--db", site.dir() + "/tp.db"});
  EXPECT_EQ(waitForExit(30s), 2) << readFile(stderr_path_);
  const std::string refused = readFile(stderr_path_);
  EXPECT_NE(refused.find("serve.exposed_credential"), std::string::npos) << refused;
  EXPECT_NE(refused.find("slurm.jwt_key_file"), std::string::npos) << refused;
  EXPECT_NE(refused.find("this host is also compute node"), std::string::npos) << refused;
  // Doctor says the same of the same file.
  const test::ProcessResult doctor = test::runProcess(
      {kBinary, "doctor", "--site", site.site(), "-o", "json"}, {.scratch = site.dir()});
  EXPECT_NE(doctor.out.find("this host is also compute node"), std::string::npos) << doctor.out;
}

TEST_F(ServeReloadTest, TheDatabaseDefaultsToSystemdsStateDirectory) {
  SiteDir site(sim_->baseUrl(), false, "", "server:\n  poll_interval: 200ms\n");
  const std::string state = site.dir() + "/state";
  std::filesystem::create_directories(state);
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.push_back("STATE_DIRECTORY=" + state);
  serve_ = test::ChildProcess::start(
      {kBinary, "serve", "--site", site.site(), "--listen", "127.0.0.1:0"},
      test::ProcessOptions{.scratch = site.dir(), .env = env}, "serve");
  ASSERT_NE(serve_, nullptr);
  pid_ = serve_->pid();
  stderr_path_ = site.dir() + "/serve.err";
  ASSERT_GT(waitForPort(), 0) << readFile(stderr_path_);
  EXPECT_TRUE(std::filesystem::exists(state + "/tuneplane.db"));
  EXPECT_FALSE(std::filesystem::exists(site.dir() + "/tuneplane.db"));
  // serve warns that nobody can use it yet, naming the command that fixes it.
  EXPECT_NE(readFile(stderr_path_).find("tuneplane token add USER --site " + site.site()),
            std::string::npos)
      << readFile(stderr_path_);
  ASSERT_EQ(::kill(pid_, SIGTERM), 0);
  EXPECT_EQ(waitForExit(20s), 0);
}

TEST_F(ServeReloadTest, AMissingRegistryNamesTheNextStep) {
  SiteDir site(sim_->baseUrl(), false, "", siteServer());
  std::filesystem::remove(site.dir() + "/runtimes.yaml");
  startServe(site, {"--db", site.dir() + "/tp.db"});
  EXPECT_EQ(waitForExit(20s), 2) << readFile(stderr_path_);
  const std::string log = readFile(stderr_path_);
  EXPECT_NE(log.find("runtimes.yaml"), std::string::npos) << log;
  EXPECT_NE(log.find("tuneplane site init"), std::string::npos) << log;
}

}  // namespace
}  // namespace tuneplane::api::testing
