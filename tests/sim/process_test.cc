// The simulator's batch step launcher (sim/process.h) at its boundary: a real fork and exec.
#include "sim/process.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/wait.h"

namespace tuneplane::sim {
namespace {

namespace fs = std::filesystem;

class LaunchBatchStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tp-process-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Reaps `pid` (bounded: 10 s).
  static std::optional<ProcessExit> waitFor(pid_t pid) {
    std::optional<ProcessExit> done;
    if (test::waitUntil(
            [&] {
              done = pollProcess(pid);
              return done.has_value();
            },
            std::chrono::seconds(10), std::chrono::milliseconds(10))) {
      return done;
    }
    signalProcessGroup(pid, SIGKILL);
    return std::nullopt;
  }
  // `script` run in the test's directory, its output in <dir>/out.
  LaunchSpec specFor(const std::string& script) const {
    LaunchSpec spec;
    spec.script_path = script;
    std::ifstream text(script);
    std::getline(text, spec.first_line);  // what the simulator passes from the text it wrote
    spec.cwd = dir_;
    spec.environment = {"PATH=/usr/bin:/bin"};
    spec.stdout_path = spec.stderr_path = dir_ + "/out";
    return spec;
  }
  std::string dir_;
};

// What a threaded simulator meets when it starts many jobs at once: a child that another
// thread forked while this script was being written still holds its write descriptor, and
// exec answers ETXTBSY. The step waits for the writer instead of ending the job with 26.
TEST_F(LaunchBatchStepTest, AScriptStillOpenForWritingElsewhereRunsOnceTheWriterClosesIt) {
  const std::string script = dir_ + "/script";
  std::ofstream(script) << "#!/bin/sh\necho ran\n";
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  const int writer = ::open(script.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  const LaunchSpec spec = specFor(script);
  auto pid = launchBatchStep(spec);
  ASSERT_TRUE(pid) << pid.error().describe();
  // The writer holds the script open while the step starts: until the step has ended, or for
  // 100 ms at most (an exec that met ETXTBSY and waits for the writer does not end by then).
  std::optional<ProcessExit> early;
  test::waitUntil(
      [&] {
        early = pollProcess(*pid);
        return early.has_value();
      },
      std::chrono::milliseconds(100), std::chrono::milliseconds(5));
  ::close(writer);
  const auto exit = early ? early : waitFor(*pid);
  ASSERT_TRUE(exit) << "the step did not end within 10 s";
  EXPECT_FALSE(exit->signaled);
  EXPECT_EQ(exit->code, 0) << "26 is ETXTBSY: the exec was not tried again";
  std::stringstream out;
  out << std::ifstream(dir_ + "/out").rdbuf();
  EXPECT_EQ(out.str(), "ran\n");
}

// Any other exec failure still ends the step at once with errno as its status.
TEST_F(LaunchBatchStepTest, AScriptWithoutAnInterpreterLineEndsWithEnoexec) {
  const std::string script = dir_ + "/script";
  std::ofstream(script) << "echo no shebang\n";
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  const LaunchSpec spec = specFor(script);
  auto pid = launchBatchStep(spec);
  ASSERT_TRUE(pid) << pid.error().describe();
  const auto exit = waitFor(*pid);
  ASSERT_TRUE(exit);
  EXPECT_FALSE(exit->signaled);
  EXPECT_EQ(exit->code, ENOEXEC);
}

}  // namespace
}  // namespace tuneplane::sim
