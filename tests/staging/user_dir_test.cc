// makeUserDir (user_dir.h): root's one-time step per user of slurm.identity per_user, on a
// real directory — the owner, group and mode it leaves, an existing directory put right, and
// a symlink refused. Needs root (CI runs as root); skipped otherwise.
#include "staging/user_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "staging/staging_fs.h"

namespace tuneplane::staging::user_dir_test {
namespace {

constexpr uid_t kServe = 65534;
constexpr gid_t kAliceGroup = 4343;

JobAccess alice() {
  JobAccess access;
  access.mode = JobAccessMode::kPerUser;
  access.run_as = "alice";
  access.job_user = OsUser{"alice", 4242, kAliceGroup};
  access.process_user = OsUser{"nobody", kServe, kServe};
  access.group = OsGroup{"alice", kAliceGroup};
  return access;
}

struct Stat {
  uid_t uid;
  gid_t gid;
  mode_t mode;
  bool directory;
};

Stat statOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return {st.st_uid, st.st_gid, static_cast<mode_t>(st.st_mode & 07777), S_ISDIR(st.st_mode)};
}

class UserDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the one-time step is root's";
    char tmpl[] = "/tmp/tp-user-dir-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    if (!root_.empty()) PosixStagingFs().removeTree(root_);
  }

  std::string root_;
};

TEST_F(UserDirTest, MakesTheDirectoryOwnedByServeInTheUsersGroupMode2750) {
  const mode_t before = ::umask(0077);  // root's umask takes nothing from either directory
  Status made = makeUserDir(alice(), root_);
  ::umask(before);
  ASSERT_TRUE(made) << made.error().describe();
  const Stat users = statOf(root_ + "/users");
  EXPECT_TRUE(users.directory);
  EXPECT_EQ(users.uid, 0u);
  EXPECT_EQ(users.mode, 0755u);
  const Stat dir = statOf(root_ + "/users/alice");
  EXPECT_TRUE(dir.directory);
  EXPECT_EQ(dir.uid, kServe);
  EXPECT_EQ(dir.gid, kAliceGroup);
  EXPECT_EQ(dir.mode, 02750u);
  // Again: nothing to do, and nothing changes.
  ASSERT_TRUE(makeUserDir(alice(), root_));
  EXPECT_EQ(statOf(root_ + "/users/alice").mode, 02750u);
}

TEST_F(UserDirTest, PutsAnExistingDirectoryRightAndKeepsWhatItHolds) {
  std::filesystem::create_directories(root_ + "/users/alice/jobs");
  ASSERT_EQ(::chmod((root_ + "/users/alice").c_str(), 0777), 0);
  std::ofstream(root_ + "/users/alice/jobs/kept") << "x";
  ASSERT_TRUE(makeUserDir(alice(), root_));
  const Stat dir = statOf(root_ + "/users/alice");
  EXPECT_EQ(dir.uid, kServe);
  EXPECT_EQ(dir.gid, kAliceGroup);
  EXPECT_EQ(dir.mode, 02750u);
  EXPECT_TRUE(std::filesystem::exists(root_ + "/users/alice/jobs/kept"));
}

TEST_F(UserDirTest, ASymlinkInItsPlaceIsRefusedAndItsTargetLeftAlone) {
  ASSERT_EQ(::mkdir((root_ + "/users").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root_ + "/elsewhere").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((root_ + "/elsewhere").c_str(), (root_ + "/users/alice").c_str()), 0);
  Status made = makeUserDir(alice(), root_);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, "staging.io");
  EXPECT_NE(made.error().message.find("is not a directory"), std::string::npos)
      << made.error().message;
  const Stat target = statOf(root_ + "/elsewhere");
  EXPECT_EQ(target.uid, 0u);
  EXPECT_EQ(target.mode, 0700u);
}

}  // namespace
}  // namespace tuneplane::staging::user_dir_test
