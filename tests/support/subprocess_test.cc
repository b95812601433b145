// Bounded child processes: output, exit codes and the environment come back; a child past
// its limit is killed with everything it started, and the test is told, naming it.
#include "support/subprocess.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace tuneplane::test {
namespace {

namespace fs = std::filesystem;

class SubprocessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tp-subprocess-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SubprocessTest, ReturnsOutputExitCodeAndTakesTheEnvironmentGiven) {
  const auto r = runShell("echo out; echo err >&2; echo \"$ONLY\"; exit 7",
                          {.scratch = dir_, .env = std::vector<std::string>{"ONLY=this"}});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "out\nthis\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(runProcess({"true"}, {.scratch = dir_}).exit_code, 0);  // found on PATH
  EXPECT_EQ(runShell("kill -TERM $$", {.scratch = dir_}).exit_code, 128 + SIGTERM);
}

TEST_F(SubprocessTest, AChildPastItsLimitIsKilledWithWhatItStartedAndReported) {
  const fs::path pid_file = dir_ / "background.pid";
  ProcessResult r;
  EXPECT_NONFATAL_FAILURE(r = runShell("sleep 300 & echo $! >'" + pid_file.string() + "'; wait",
                                       {.scratch = dir_, .limit = std::chrono::milliseconds(1000)}),
                          "still running after 1000 ms; killed");
  EXPECT_TRUE(r.timed_out);
  std::string background;
  std::ifstream(pid_file) >> background;
  ASSERT_FALSE(background.empty());
  // The background sleep went with its group: gone, or a zombie waiting for its new parent
  // to reap it (bounded wait).
  const auto alive = [&background] {
    std::ifstream stat("/proc/" + background + "/stat");
    std::string pid, name, state;
    return static_cast<bool>(stat >> pid >> name >> state) && state != "Z";
  };
  for (int i = 0; i < 200 && alive(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(alive()) << "the background child " << background << " still runs";
}

TEST_F(SubprocessTest, AMissingProgramIsAFailureNotAHang) {
  ProcessResult r;
  EXPECT_NONFATAL_FAILURE(r = runProcess({(dir_ / "no-such-program").string()}, {.scratch = dir_}),
                          "cannot start");
  EXPECT_EQ(r.exit_code, -1);
}

TEST(RunInChildTest, TheChildsResultComesBackAndItsMemoryIsItsOwn) {
  int touched = 0;
  EXPECT_EQ(runInChild(
                [&touched] {
                  touched = 1;
                  return 42;
                },
                "returning 42"),
            42);
  EXPECT_EQ(touched, 0);  // a forked copy, not a thread
  EXPECT_EQ(runInChild([] { return ::raise(SIGTERM); }, "killed by SIGTERM"), 128 + SIGTERM);
}

TEST(RunInChildTest, AChildThatBlocksIsKilledAtItsLimitAndReported) {
  std::optional<int> result = 0;
  EXPECT_NONFATAL_FAILURE(result = runInChild(
                              [] {
                                ::pause();  // blocks until a signal: the hang under test
                                return 0;
                              },
                              "a blocked child", std::chrono::milliseconds(300)),
                          "a blocked child: still running after 300 ms; killed");
  EXPECT_EQ(result, std::nullopt);
}

}  // namespace
}  // namespace tuneplane::test
