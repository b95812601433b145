// The Ray node launcher (ray_programs.h) run for real with python3, in front of a fake
// `ray` that records each start and fails the first N: a head whose port was taken before
// Ray bound it is started again with other ports, at most three starts in all; a worker, or
// a head whose ports the site pins, is started once.
#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "slurm/ray_programs.h"
#include "slurm/script_renderer.h"
#include "stubs/test_shell.h"

namespace tuneplane::slurm {
namespace {

namespace fs = std::filesystem;
namespace sh = shell_test;
using ::testing::HasSubstr;

// Records its arguments as one line per start; the first $FAILS starts exit 1 at once. A
// start that succeeds reports an address in --temp-dir, as `ray start --head` does, and
// keeps running a little while (Ray blocks).
constexpr const char* kFakeRay = R"(#!/bin/bash
starts=$(wc -l <"$TP_FAKE_DIR/starts" 2>/dev/null || echo 0)
printf '%s\n' "$*" >>"$TP_FAKE_DIR/starts"
if ((starts < ${FAILS:-0})); then echo "fake ray: a port is taken" >&2; exit 1; fi
for arg; do case $arg in --temp-dir=*) temp=${arg#--temp-dir=} ;; esac; done
if [[ -n ${temp-} ]]; then echo 10.1.2.3:6379 >"$temp/ray_current_cluster"; fi
sleep 0.5
)";

class RayNodeProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    sh::writeFile(dir_.path() / "program.py", kRayNodeProgram);
    sh::writeFile(dir_.path() / "ray", kFakeRay);
    fs::permissions(dir_.path() / "ray", fs::perms::owner_all);
  }

  // Runs `python3 program.py ROLE [FLAG...] -- ./ray start --block` with the first `fails`
  // starts failing.
  sh::RunResult run(const std::string& role_and_flags, int fails) {
    const std::string dir = shellQuote(dir_.path().string());
    return sh::runShell("cd " + dir + " && TP_FAKE_DIR=" + dir + " FAILS=" + std::to_string(fails) +
                            " python3 program.py " + role_and_flags + " -- ./ray start --block",
                        dir_.path());
  }

  std::vector<std::string> starts() const {
    std::vector<std::string> lines;
    std::istringstream in(sh::readFile(dir_.path() / "starts"));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  static int occurrences(const std::string& text, const std::string& what) {
    int count = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
      ++count;
    }
    return count;
  }

  // The ports a start was given for the launcher's flags, in order.
  static std::vector<std::string> ports(const std::string& start) {
    std::vector<std::string> found;
    std::istringstream words(start);
    for (std::string word; words >> word;) {
      const auto eq = word.find('=');
      if (word.rfind("--dashboard", 0) == 0 && eq != std::string::npos) {
        found.push_back(word.substr(eq + 1));
      }
    }
    return found;
  }

  sh::TempDir dir_;
};

constexpr const char* kHeadFlags = "head --dashboard-port --dashboard-agent-listen-port";

TEST_F(RayNodeProgram, AHeadThatExitsBeforeItsAddressIsStartedAgainWithNewPorts) {
  const auto result = run(kHeadFlags, 2);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "10.1.2.3:6379\n");
  EXPECT_EQ(occurrences(result.err, "starting it again with other ports"), 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("the Ray head exited with code 1 before it reported"));
  const auto lines = starts();
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& line : lines) {
    const auto given = ports(line);
    ASSERT_EQ(given.size(), 2u) << line;
    EXPECT_NE(given[0], given[1]) << "the ports of one start all differ: " << line;
    EXPECT_THAT(line, HasSubstr("--temp-dir="));
  }
}

TEST_F(RayNodeProgram, AHeadThatNeverStartsStopsAfterThreeStartsWithRaysCode) {
  const auto result = run(kHeadFlags, 9);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(starts().size(), 3u);
  EXPECT_EQ(occurrences(result.err, "starting it again with other ports"), 2) << result.err;
}

TEST_F(RayNodeProgram, AWorkerIsStartedOnce) {
  const auto result = run("worker --dashboard-agent-listen-port", 9);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(starts().size(), 1u);
  EXPECT_THAT(result.err, Not(HasSubstr("starting it again")));
}

TEST_F(RayNodeProgram, AHeadWithEveryPortPinnedIsStartedOnce) {
  // Without launcher flags a new start would bind the very same ports again.
  const auto result = run("head", 9);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(starts().size(), 1u);
}

}  // namespace
}  // namespace tuneplane::slurm
