// `tuneplane serve` as a process: it starts from a site file with a server: section, answers
// on the port it chose, and stops on SIGTERM with exit 0. Waits are bounded; a child that
// does not stop is killed and the test fails.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <chrono>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "../control/site_fixture.h"
#include "../sim/sim_test_support.h"
#include "api/authenticator.h"
#include "staging/stager.h"
#include "support/test_paths.h"

namespace tuneplane::api::testing {
namespace {

using namespace std::chrono_literals;

using control::testing::readFile;
using control::testing::SiteDir;
using staging::sha256Hex;  // what the site file's token_sha256 holds

const std::string kBinary = (test::binaryDir() / "src/cli/tuneplane").string();

class ServeCommandTest : public sim::testing::SimFixture {
 protected:
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    sim_.reset();
  }

  // Starts `tuneplane serve`; stderr goes to a file the test reads.
  void startServe(const SiteDir& site, const std::vector<std::string>& extra) {
    stderr_path_ = site.dir() + "/serve.err";
    std::vector<std::string> args = {kBinary,     "serve",    "--site",
                                     site.site(), "--listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      const int err = ::open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(err, 2);
      ::dup2(null, 1);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(kBinary.c_str(), argv.data());
      ::_exit(127);
    }
  }

  // The port from "listening on http://127.0.0.1:PORT"; 0 if it never said.
  int waitForPort() {
    int port = 0;
    sim::testing::eventually(
        [&] {
          std::smatch m;
          const std::string text = readFile(stderr_path_);
          if (std::regex_search(text, m,
                                std::regex("listening on http://127\\.0\\.0\\.1:([0-9]+)"))) {
            port = std::stoi(m[1]);
          }
          return port != 0;
        },
        20s);
    return port;
  }

  // The exit status, or -1 if the child did not end within `limit`.
  int waitForExit(std::chrono::milliseconds limit) {
    int status = 0;
    const bool ended =
        sim::testing::eventually([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, limit);
    if (!ended) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  pid_t pid_ = -1;
  std::string stderr_path_;
};

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
  std::vector<std::string> none;
  pid_ = -1;
  const std::string err = site.dir() + "/serve.err";
  stderr_path_ = err;
  pid_ = ::fork();
  ASSERT_GE(pid_, 0);
  if (pid_ == 0) {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    const std::string site_file = site.site();
    ::execl(kBinary.c_str(), kBinary.c_str(), "serve", "--site", site_file.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  EXPECT_EQ(waitForExit(20s), 2);
  EXPECT_NE(readFile(err).find("server.listen"), std::string::npos) << readFile(err);
}

}  // namespace
}  // namespace tuneplane::api::testing
