// campaign/fault_shim.cc preloaded into real programs (the shell, coreutils, python3), as the
// campaign preloads it into serve: what it refuses while the staging root is "full", what it
// leaves alone, and the clocks it steps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "campaign/host_faults.h"
#include "support/subprocess.h"

namespace tuneplane::campaign {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class FaultShim : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tp-shim-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fs::create_directories(root() + "/attempts");
    fs::create_directories(dir_ + "/elsewhere");
    host_ = std::make_unique<HostFaults>(dir_ + "/control");
  }
  void TearDown() override {
    host_.reset();
    fs::remove_all(dir_);
  }

  std::string root() const { return dir_ + "/staging"; }
  void setFull(bool full) { host_->setFull(full); }

  test::ProcessResult shell(const std::string& command) const {
    return test::runShell(
        command,
        {.scratch = dir_, .env = test::environmentWith(env()), .limit = std::chrono::seconds(30)});
  }

  std::vector<std::string> env() const {
    std::vector<std::string> entries = host_->environment(root());
    entries.push_back("ROOT=" + root());
    entries.push_back("ELSEWHERE=" + dir_ + "/elsewhere");
    return entries;
  }

  std::string dir_;
  std::unique_ptr<HostFaults> host_;
};

TEST_F(FaultShim, AFullStagingRootRefusesCreatingWritingAndSyncingThereOnly) {
  setFull(true);
  for (const std::string& command : {
           std::string("echo x > \"$ROOT/attempts/file\""),
           std::string("mkdir \"$ROOT/attempts/dir\""),
           std::string("mktemp -d \"$ROOT/attempts/.1.staging-XXXXXX\""),
           std::string("cd \"$ROOT/attempts\" && echo x > relative"),
           std::string("python3 -c 'import os, sys; os.mkdir(sys.argv[1])' \"$ROOT/p\""),
       }) {
    SCOPED_TRACE(command);
    const auto run = shell(command);
    EXPECT_NE(run.exit_code, 0);
    EXPECT_THAT(run.err, HasSubstr("No space left on device"));
  }
  EXPECT_TRUE(fs::is_empty(root() + "/attempts"));
  // What exists needs no room: mkdir says it exists (and -p passes), as a full disk's does.
  const auto existing = shell("mkdir \"$ROOT/attempts\"; mkdir -p \"$ROOT/attempts\" && echo p");
  EXPECT_THAT(existing.err, HasSubstr("File exists"));
  EXPECT_EQ(existing.out, "p\n");
  // A file opened before the filesystem filled refuses its writes and its fsync.
  setFull(false);
  const auto open_before = shell(
      "python3 - <<'EOF'\n"
      "import os\n"
      "fd = os.open(os.environ['ROOT'] + '/opened', os.O_WRONLY | os.O_CREAT, 0o600)\n"
      "open(os.environ['TUNEPLANE_FAULT_SHIM_CONTROL'], 'r+b').write(b'\\x01')\n"
      "for what, call in (('write', lambda: os.write(fd, b'x')),\n"
      "                   ('fsync', lambda: os.fsync(fd))):\n"
      "    try:\n"
      "        call()\n"
      "        print(what, 'passed')\n"
      "    except OSError as e:\n"
      "        print(what, e.strerror)\n"
      "EOF");
  EXPECT_EQ(open_before.out, "write No space left on device\nfsync No space left on device\n")
      << open_before.err;
  // Elsewhere (the store, the logs) nothing is refused.
  const auto elsewhere = shell("echo y > \"$ELSEWHERE/file\" && mkdir \"$ELSEWHERE/dir\"");
  EXPECT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
  // And once there is room again, the staging root takes writes.
  setFull(false);
  const auto room = shell("echo x > \"$ROOT/attempts/file\" && mkdir \"$ROOT/attempts/dir\"");
  EXPECT_EQ(room.exit_code, 0) << room.err;
}

TEST_F(FaultShim, TheWallClockStepsForwardAndTheMonotonicClockDoesNot) {
  const char* probe = "python3 -c 'import time; print(int(time.time()), int(time.monotonic()))'";
  const auto before = shell(probe);
  host_->stepClock(std::chrono::minutes(90));
  const auto after = shell(std::string(probe) + "; date +%s");
  ASSERT_EQ(before.exit_code, 0) << before.err;
  ASSERT_EQ(after.exit_code, 0) << after.err;
  long long wall_before = 0, mono_before = 0, wall_after = 0, mono_after = 0, date_after = 0;
  ASSERT_EQ(std::sscanf(before.out.c_str(), "%lld %lld", &wall_before, &mono_before), 2);
  ASSERT_EQ(std::sscanf(after.out.c_str(), "%lld %lld %lld", &wall_after, &mono_after, &date_after),
            3);
  // 90 minutes ahead, give or take the seconds the two runs are apart (bounded, not timed).
  EXPECT_GE(wall_after - wall_before, 5400);
  EXPECT_LT(wall_after - wall_before, 5400 + 120);
  EXPECT_LT(mono_after - mono_before, 120);
  EXPECT_GE(date_after, wall_after);
  EXPECT_LT(date_after - wall_after, 120);
}

}  // namespace
}  // namespace tuneplane::campaign
