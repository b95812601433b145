// `tuneplane serve` as a process: it starts from a site file with a server: section, answers
// on the port it chose, and stops on SIGTERM with exit 0. Waits are bounded; a child that
// does not stop is killed and the test fails.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "api/authenticator.h"
#include "serve_fixture.h"
#include "staging/stager.h"
#include "support/openapi_validator.h"

namespace tuneplane::api::testing {
namespace {
using staging::sha256Hex;  // what the site file's token_sha256 holds

using ServeCommandTest = ServeProcessFixture;

TEST_F(ServeCommandTest, ServesFromTheSiteFileAndStopsOnSigtermWithExitZero) {
  const std::string token = "serve-test-token";
  SiteDir site(sim_->baseUrl(), false, "",
               "server:\n  poll_interval: 200ms\n  tokens:\n    - user: alice\n"
               "      token_sha256: " +
                   sha256Hex(token) + "\n");
  startServe(site, {"--db", site.dir() + "/tp.db"});
  const int port = waitForPort();
  ASSERT_GT(port, 0) << readFile(stderr_path_);
  httplib::Client http("127.0.0.1", port);
  http.set_read_timeout(10, 0);
  test::validateAnswersOf(http);
  auto who = http.Get("/v1/whoami", {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(who);
  EXPECT_EQ(who->status, 200);
  EXPECT_EQ(http.Get("/healthz")->status, 200);
  ASSERT_EQ(::kill(pid_, SIGTERM), 0);
  EXPECT_EQ(waitForExit(20s), 0) << readFile(stderr_path_);
  const std::string log = readFile(stderr_path_);
  EXPECT_NE(log.find("SIGTERM"), std::string::npos);
  EXPECT_EQ(log.find(token), std::string::npos);  // the token is never logged
  EXPECT_TRUE(std::filesystem::exists(site.dir() + "/tp.db"));
}

TEST_F(ServeCommandTest, LogsJsonLinesByDefaultAndTextOnRequest) {
  for (const std::string format : {"", "text"}) {
    SiteDir site(sim_->baseUrl(), false, "", "server:\n  poll_interval: 200ms\n");
    std::vector<std::string> extra = {"--db", site.dir() + "/tp.db"};
    if (!format.empty()) extra.insert(extra.end(), {"--log-format", format});
    startServe(site, extra);
    ASSERT_GT(waitForPort(), 0) << readFile(stderr_path_);
    ASSERT_EQ(::kill(pid_, SIGTERM), 0);
    ASSERT_EQ(waitForExit(20s), 0) << readFile(stderr_path_);
    std::istringstream lines(readFile(stderr_path_));
    int count = 0;
    for (std::string line; std::getline(lines, line); ++count) {
      const auto parsed = nlohmann::json::parse(line, nullptr, false);
      if (format.empty()) {
        ASSERT_TRUE(parsed.is_object()) << "not a JSON object: " << line;
        EXPECT_TRUE(parsed.contains("time") && parsed.contains("level") && parsed.contains("msg"))
            << line;
      } else {
        EXPECT_TRUE(parsed.is_discarded()) << "text was asked for: " << line;
      }
    }
    EXPECT_GE(count, 3) << format;  // listening, the signal, stopped
  }
}

TEST_F(ServeCommandTest, ABadServerSectionExitsTwoNamingTheField) {
  SiteDir site(sim_->baseUrl(), false, "", "server:\n  listen: nowhere\n");
  startServe(site, {}, "");
  const std::string err = stderr_path_;
  EXPECT_EQ(waitForExit(20s), 2);
  EXPECT_NE(readFile(err).find("server.listen"), std::string::npos) << readFile(err);
}

}  // namespace
}  // namespace tuneplane::api::testing
