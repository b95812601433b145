// ServeProcessFixture: `tuneplane serve` as a child process of a test, beside the in-process
// slurmrestd simulator: started from a SiteDir's site file, its stderr in a file the test
// reads, its port taken from its "listening on" line. Every wait is bounded; a child that
// outlives the test is killed with its process group in TearDown (test::ChildProcess).
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "../pipeline/site_fixture.h"
#include "../sim/sim_test_support.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::api::testing {

using namespace std::chrono_literals;
using pipeline::testing::readFile;
using pipeline::testing::SiteDir;

inline const std::string kBinary = (test::binaryDir() / "src/cli/tuneplane").string();

class ServeProcessFixture : public sim::testing::SimFixture {
 protected:
  void TearDown() override {
    serve_.reset();  // kills serve's process group if it still runs
    sim_.reset();
  }

  // Starts `tuneplane serve` as a test::ChildProcess; its stderr is <site dir>/serve.err.
  // `listen`: the --listen flag's value ("": none, the site file's server.listen decides).
  void startServe(const SiteDir& site, const std::vector<std::string>& extra,
                  const std::string& listen = "127.0.0.1:0") {
    std::vector<std::string> args = {kBinary, "serve", "--site", site.site()};
    if (!listen.empty()) args.insert(args.end(), {"--listen", listen});
    args.insert(args.end(), extra.begin(), extra.end());
    serve_ = test::ChildProcess::start(args, test::ProcessOptions{.scratch = site.dir()}, "serve");
    ASSERT_NE(serve_, nullptr);
    pid_ = serve_->pid();
    stderr_path_ = site.dir() + "/serve.err";
  }

  // The port from "listening on http://127.0.0.1:PORT"; 0 if it never said.
  int waitForPort() {
    int port = 0;
    tuneplane::test::waitUntil(
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

  // The exit status, or -1 if the child did not end within `limit` (then it is killed and
  // the test fails naming it).
  int waitForExit(std::chrono::milliseconds limit) {
    const std::optional<int> code = serve_->waitExit(limit);
    return code ? *code : -1;
  }

  std::unique_ptr<test::ChildProcess> serve_;
  pid_t pid_ = -1;
  std::string stderr_path_;
};

}  // namespace tuneplane::api::testing
