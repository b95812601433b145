// Bounded child processes: output, exit codes and the environment come back; a child past
// its limit is killed with everything it started, and the test is told, naming it.
#include "support/subprocess.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "support/wait.h"

namespace tuneplane::test {
namespace {

namespace fs = std::filesystem;

// True once process `pid` is gone, or a zombie waiting for its new parent to reap it
// (bounded wait: 2 s).
bool endsSoon(const std::string& pid) {
  const auto alive = [&pid] {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string id, name, state;
    return static_cast<bool>(stat >> id >> name >> state) && state != "Z";
  };
  return waitUntil([&] { return !alive(); }, std::chrono::seconds(2),
                   std::chrono::milliseconds(10));
}

// Shell words that save the last background job's pid in `file`, renamed into place: a test
// that waits for the file to exist never reads one the shell has created but not yet written
// (which a test that drops the child at once then found empty).
std::string savePidIn(const fs::path& file) {
  const std::string temp = file.string() + ".tmp";
  return "echo $! >'" + temp + "' && mv '" + temp + "' '" + file.string() + "'";
}

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
  // The background sleep went with its group.
  EXPECT_TRUE(endsSoon(background)) << "the background child " << background << " still runs";
}

TEST_F(SubprocessTest, AChildProcessRunsBesideTheTestUntilSignalledAndKeepsItsOutput) {
  // The trap is set before either line is written: the test signals as soon as it sees
  // "started", and a TERM that came before the trap would end the shell with 143.
  auto child =
      ChildProcess::start({"/bin/sh", "-c",
                           "trap 'echo got TERM; exit 3' TERM; echo to-err >&2; echo started; "
                           "while :; do sleep 0.05; done"},
                          {.scratch = dir_}, "server");
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(std::filesystem::exists(dir_ / "server.out"));
  EXPECT_TRUE(waitUntil([&] { return !child->out().empty(); }, std::chrono::seconds(4),
                        std::chrono::milliseconds(10)))
      << "it never said \"started\"";
  EXPECT_TRUE(child->running());
  child->signal(SIGTERM);
  EXPECT_EQ(child->waitExit(std::chrono::seconds(20)), 3);
  EXPECT_FALSE(child->running());
  EXPECT_EQ(child->out(), "started\ngot TERM\n");
  EXPECT_EQ(child->err(), "to-err\n");
  // A second start under the same name appends (one log across a server's restarts).
  auto again = ChildProcess::start({"/bin/sh", "-c", "echo again"}, {.scratch = dir_}, "server");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->waitExit(std::chrono::seconds(20)), 0);
  EXPECT_EQ(again->out(), "started\ngot TERM\nagain\n");
}

TEST_F(SubprocessTest, AChildProcessIsKilledWithItsGroupWhenDropped) {
  const fs::path pid_file = dir_ / "grandchild.pid";
  pid_t pid = 0;
  {
    auto child =
        ChildProcess::start({"/bin/sh", "-c", "sleep 300 & " + savePidIn(pid_file) + "; wait"},
                            {.scratch = dir_}, "dropped");
    ASSERT_NE(child, nullptr);
    pid = child->pid();
    EXPECT_TRUE(waitUntil([&] { return fs::exists(pid_file); }, std::chrono::seconds(4),
                          std::chrono::milliseconds(10)))
        << "the child never saved its grandchild's pid";
  }
  EXPECT_NE(::kill(pid, 0), 0);  // reaped: no such process any more
  std::string grandchild;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_FALSE(grandchild.empty());
  EXPECT_TRUE(endsSoon(grandchild)) << "the grandchild " << grandchild << " still runs";
}

TEST_F(SubprocessTest, APolledChildRunsWhereToldAndWhatItLeftRunningEndsWithIt) {
  const fs::path work = dir_ / "work";
  fs::create_directories(work);
  EXPECT_EQ(runProcess({"pwd"}, {.scratch = dir_, .cwd = work}).out, work.string() + "\n");
  const fs::path pid_file = dir_ / "left.pid";
  const fs::path go = dir_ / "go";
  auto child =
      ChildProcess::start({"/bin/sh", "-c",
                           "pwd; sleep 300 & echo $! >'" + pid_file.string() + "'; while [ ! -e '" +
                               go.string() + "' ]; do sleep 0.02; done; exit 5"},
                          {.scratch = dir_, .cwd = work}, "polled");
  ASSERT_NE(child, nullptr);
  // Still running: no exit code, and no failure (the caller decides).
  EXPECT_EQ(child->exitWithin(std::chrono::milliseconds(0)), std::nullopt);
  EXPECT_EQ(child->exitWithin(std::chrono::milliseconds(50)), std::nullopt);
  std::ofstream(go).put('\n');
  EXPECT_EQ(child->exitWithin(std::chrono::seconds(20)), 5);
  EXPECT_EQ(child->out(), work.string() + "\n");
  std::string left;
  std::ifstream(pid_file) >> left;
  ASSERT_FALSE(left.empty());
  EXPECT_TRUE(endsSoon(left)) << "what it left running (" << left << ") outlived it";
  // Started afresh under the same name, its output is its own.
  auto again = ChildProcess::start({"/bin/sh", "-c", "echo again"}, {.scratch = dir_}, "polled",
                                   ChildProcess::Output::kTruncate);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->exitWithin(std::chrono::seconds(20)), 0);
  EXPECT_EQ(again->out(), "again\n");
}

TEST_F(SubprocessTest, AChildProcessEndedOnDemandTakesItsGroupWithIt) {
  const fs::path pid_file = dir_ / "grandchild.pid";
  auto child =
      ChildProcess::start({"/bin/sh", "-c", "sleep 300 & " + savePidIn(pid_file) + "; wait"},
                          {.scratch = dir_}, "ended");
  ASSERT_NE(child, nullptr);
  EXPECT_TRUE(waitUntil([&] { return fs::exists(pid_file); }, std::chrono::seconds(4),
                        std::chrono::milliseconds(10)))
      << "the child never saved its grandchild's pid";
  child->end();
  EXPECT_FALSE(child->running());
  EXPECT_EQ(child->exitWithin(std::chrono::milliseconds(0)), 128 + SIGKILL);
  std::string grandchild;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_FALSE(grandchild.empty());
  EXPECT_TRUE(endsSoon(grandchild)) << "the grandchild " << grandchild << " still runs";
}

TEST_F(SubprocessTest, AServersFirstLineIsWaitedForAndNothingIsWhenItExitsFirst) {
  auto server = ChildProcess::start({"/bin/sh", "-c", "sleep 0.1; echo http://here; sleep 300"},
                                    {.scratch = dir_}, "server");
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->firstLine(std::chrono::seconds(20)), "http://here");
  EXPECT_TRUE(server->running());
  auto quitter = ChildProcess::start({"/bin/sh", "-c", "printf 'no newline'; exit 3"},
                                     {.scratch = dir_}, "quitter");
  ASSERT_NE(quitter, nullptr);
  EXPECT_EQ(quitter->firstLine(std::chrono::seconds(20)), "");
  EXPECT_EQ(quitter->exitWithin(std::chrono::milliseconds(0)), 3);
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
