// ServeProcessFixture: `tuneplane serve` as a child process of a test, beside the in-process
// slurmrestd simulator: started from a SiteDir's site file, its stderr in a file the test
// reads, its port taken from its "listening on" line. Every wait is bounded; a child that
// outlives the test is killed (SIGKILL) in TearDown.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include "../control/site_fixture.h"
#include "../sim/sim_test_support.h"
#include "support/test_paths.h"

namespace tuneplane::api::testing {

using namespace std::chrono_literals;
using control::testing::readFile;
using control::testing::SiteDir;

inline const std::string kBinary = (test::binaryDir() / "src/cli/tuneplane").string();

class ServeProcessFixture : public sim::testing::SimFixture {
 protected:
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    sim_.reset();
  }

  // Starts `tuneplane serve`; stderr goes to a file the test reads.
  // `listen`: the --listen flag's value ("": none, the site file's server.listen decides).
  void startServe(const SiteDir& site, const std::vector<std::string>& extra,
                  const std::string& listen = "127.0.0.1:0") {
    stderr_path_ = site.dir() + "/serve.err";
    std::vector<std::string> args = {kBinary, "serve", "--site", site.site()};
    if (!listen.empty()) args.insert(args.end(), {"--listen", listen});
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
                                std::regex("listening on https?://127\\.0\\.0\\.1:([0-9]+)"))) {
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

}  // namespace tuneplane::api::testing
