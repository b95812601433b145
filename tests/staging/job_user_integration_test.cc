// The stager running as one user (root, this test) and the job writing as another (the
// host's unprivileged `nobody`, in a forked child that drops to it with setgroups, setgid and
// setuid), with the real user database (PosixOsUsers) and the real filesystem. Needs root to
// switch users; skipped with the reason otherwise.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sample_request.h"
#include "staging/job_access.h"
#include "staging/os_users.h"
#include "staging/stager.h"
#include "staging/staging_paths.h"
#include "support/subprocess.h"

namespace tuneplane::staging {
namespace {

// What the job (as `nobody`) could do in its attempt; one bit per try.
enum JobWrote : int {
  kWroteLog = 1,         // created and wrote logs/main.out
  kWroteOutput = 2,      // created output/result.txt
  kWroteAttemptDir = 4,  // created a file in the attempt dir itself (must not)
  kChangedScript = 8,    // opened job.sh for writing (must not)
};

bool createAndWrite(const std::string& path, const char* text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const auto n = static_cast<ssize_t>(std::strlen(text));
  const bool ok = ::write(fd, text, static_cast<std::size_t>(n)) == n;
  return ::close(fd) == 0 && ok;
}

class JobUserIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root: the test stages as root and writes the logs as `nobody` "
                      "(setuid); run the suite as root to cover it";
    }
    auto nobody = users_.userByName("nobody");
    ASSERT_TRUE(nobody) << nobody.error().describe();
    if (!*nobody) GTEST_SKIP() << "this host has no user `nobody` to run the job as";
    job_ = **nobody;
    ASSERT_NE(job_.uid, 0u);
    struct group* primary = ::getgrgid(job_.gid);
    if (primary == nullptr) GTEST_SKIP() << "`nobody`'s primary group has no name here";
    job_group_ = primary->gr_name;

    char tmpl[] = "/tmp/tp-jobuser-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);  // the staging root must let the job through
    auto dir = attemptDir(root_, "hello-0a1b2c3d", 1);
    ASSERT_TRUE(dir);
    attempt_ = *dir;
    request_ = testing::sampleRequest(attempt_);
    site_.slurm.user = job_.name;
    site_.staging_root = root_;
  }
  void TearDown() override {
    if (!root_.empty()) PosixStagingFs().removeTree(root_);
  }

  Result<StagedAttempt> stage(const JobAccess& access) {
    return stageAttempt(request_, "#!/bin/bash\necho hi\n", {{"script", "x"}}, access, fs_);
  }

  // Becomes `nobody` in a child process and tries each write; the JobWrote bits, or -1.
  int writeAsJob() const {
    const auto bits = test::runInChild(
        [&] {
          if (::setgroups(0, nullptr) != 0 || ::setgid(job_.gid) != 0 || ::setuid(job_.uid) != 0) {
            return 100;
          }
          int wrote = 0;
          if (createAndWrite(attempt_ + "/logs/main.out", "hello from the job\n"))
            wrote |= kWroteLog;
          if (createAndWrite(attempt_ + "/output/result.txt", "42\n")) wrote |= kWroteOutput;
          if (createAndWrite(attempt_ + "/planted", "x")) wrote |= kWroteAttemptDir;
          if (::open((attempt_ + "/job.sh").c_str(), O_WRONLY | O_CLOEXEC) >= 0)
            wrote |= kChangedScript;
          return wrote;
        },
        "writing the attempt as " + job_.name);
    return bits.value_or(-1);
  }

  PosixOsUsers users_;
  PosixStagingFs fs_;
  OsUser job_;
  std::string job_group_;
  std::string root_;
  std::string attempt_;
  launch::LaunchRequest request_;
  catalog::SiteConfig site_;
};

TEST_F(JobUserIntegration, WithoutAGroupRootIsRefusedBeforeAnythingIsStaged) {
  auto access = resolveJobAccess(site_, users_);
  ASSERT_FALSE(access);
  EXPECT_EQ(access.error().code, "staging.job_user_mismatch");
  EXPECT_NE(access.error().message.find("'root'"), std::string::npos);
  EXPECT_NE(access.error().message.find("'" + job_.name + "'"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(root_ + "/jobs"));
}

TEST_F(JobUserIntegration, ThroughTheSharedGroupTheJobWritesItsLogAndOutputButNothingElse) {
  site_.staging.group = job_group_;
  auto access = resolveJobAccess(site_, users_);
  ASSERT_TRUE(access) << access.error().describe();
  ASSERT_EQ(access->mode, JobAccessMode::kSharedGroup);
  auto staged = stage(*access);
  ASSERT_TRUE(staged) << staged.error().describe();

  EXPECT_EQ(writeAsJob(), kWroteLog | kWroteOutput);
  std::ifstream log(attempt_ + "/logs/main.out");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_EQ(text.str(), "hello from the job\n");
  // setgid: what the job creates stays in the shared group, owned by the job user.
  struct stat st {};
  ASSERT_EQ(::stat((attempt_ + "/logs/main.out").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, job_.uid);
  EXPECT_EQ(st.st_gid, access->group->gid);
}

// The failure this rule exists for: staged by root as if root ran the job, `nobody` cannot
// open its log. Shows the test above would catch a stager that forgot the group.
TEST_F(JobUserIntegration, StagedWithoutTheRuleTheJobCannotWriteItsLog) {
  JobAccess wrong;  // what the stager did before: same user, 0755, owned by root
  wrong.job_user = wrong.process_user = OsUser{"root", 0, 0};
  auto staged = stage(wrong);
  ASSERT_TRUE(staged) << staged.error().describe();
  EXPECT_EQ(writeAsJob(), 0);
}

TEST_F(JobUserIntegration, AStagingRootTheJobCannotEnterIsRefused) {
  ASSERT_EQ(::chmod(root_.c_str(), 0700), 0);
  site_.staging.group = job_group_;
  auto access = resolveJobAccess(site_, users_);
  ASSERT_TRUE(access) << access.error().describe();
  auto reached = checkJobCanReach(root_, *access, fs_);
  ASSERT_FALSE(reached);
  EXPECT_EQ(reached.error().code, "staging.not_traversable");
  auto staged = stage(*access);
  ASSERT_FALSE(staged);
  EXPECT_EQ(staged.error().code, "staging.not_traversable");
}

}  // namespace
}  // namespace tuneplane::staging
