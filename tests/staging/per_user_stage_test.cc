// A per_user job staged into a real directory (stager.h, job_access.h): every directory of
// its tree made by mkdir inside users/<U> — inheriting U's group and the setgid bit, never
// chmod-ed or chgrp-ed — logs/ output/ checkpoints/ 02770, files 0440, the attempt 0550. Root
// may set any bit, so the same stage also runs in a child that dropped to nobody: there the
// kernel clears setgid on a chmod by a process outside the group, and the tree must still
// come out right (the real behaviour serve meets, with no root and no CAP_CHOWN).
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "recording_staging_fs.h"
#include "sample_request.h"
#include "staging/stager.h"
#include "staging/staging_paths.h"

namespace tuneplane::staging::per_user_stage_test {
namespace {

using testing::RecordingStagingFs;

constexpr uid_t kAlice = 4242;  // the job's user: known to no database, only to the rule
constexpr gid_t kAliceGroup = 4343;
constexpr uid_t kNobody = 65534;

struct Owned {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
  bool operator==(const Owned&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Owned& o) {
  return out << "uid " << o.uid << " gid " << o.gid << " mode " << testing::octal(o.mode);
}

Owned ownedOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return {st.st_uid, st.st_gid, static_cast<mode_t>(st.st_mode & 07777)};
}

class PerUserStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-per-user-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((root_ + "/users").c_str(), 0755), 0);
    auto dir = attemptDir(root_, "hello-0a1b2c3d", 2, "alice");
    ASSERT_TRUE(dir);
    attempt_dir_ = *dir;
    request_ = testing::sampleRequest(attempt_dir_);
    job_dir_ = *jobDir(root_, "hello-0a1b2c3d", "alice");
  }
  void TearDown() override { PosixStagingFs().removeTree(root_); }

  // users/alice as the one-time step leaves it, owned by `serve`.
  void makeUserDir(uid_t serve, mode_t mode = kUserDirMode) {
    const std::string dir = *userDir(root_, "alice");
    ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
    ASSERT_EQ(::chown(dir.c_str(), serve, kAliceGroup), 0);
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
  }

  JobAccess aliceAccess(OsUser serve) const {
    JobAccess access;
    access.mode = JobAccessMode::kPerUser;
    access.run_as = "alice";
    access.job_user = OsUser{"alice", kAlice, kAliceGroup};
    access.job_groups = {kAliceGroup};
    access.process_user = std::move(serve);
    access.group = OsGroup{"alice", kAliceGroup};
    return access;
  }

  // Every directory and file of the job's tree, owned by `serve`, in alice's group.
  void expectTheTree(uid_t serve) {
    const auto expect = [&](const std::string& path, mode_t mode) {
      EXPECT_EQ(ownedOf(path), (Owned{serve, kAliceGroup, mode})) << path;
    };
    for (const std::string& dir : {job_dir_.substr(0, job_dir_.rfind('/')), job_dir_,
                                   job_dir_ + "/attempts", job_dir_ + "/fence"}) {
      expect(dir, 02750);
    }
    expect(job_dir_ + "/fence/2", 0440);
    expect(request_.checkpoint_dir, 02770);
    expect(attempt_dir_, 0550);
    expect(attemptFile(attempt_dir_, kLogsDir), 02770);
    expect(attemptFile(attempt_dir_, kOutputDir), 02770);
    for (std::string_view file : {kLaunchFile, kScriptFile, kSubmitFile, kManifestFile,
                                  std::string_view("llamafactory.yaml")}) {
      expect(attemptFile(attempt_dir_, file), 0440);
    }
  }

  std::string root_;
  std::string job_dir_;
  std::string attempt_dir_;
  launch::LaunchRequest request_;
  std::string script_ = "#!/bin/bash\necho hello\n";
  nlohmann::json body_ = {{"script", script_}};
};

TEST_F(PerUserStageTest, EveryDirectoryIsMadeByMkdirInheritingTheUsersGroupAndSetgid) {
  makeUserDir(::geteuid());
  RecordingStagingFs recording;
  auto staged = stageAttempt(request_, script_, body_,
                             aliceAccess(OsUser{"me", ::geteuid(), ::getegid()}), recording);
  ASSERT_TRUE(staged) << staged.error().describe();
  expectTheTree(::geteuid());
  // No chgrp at all, and the only chmod is the seal of the attempt: a chmod of what the job
  // writes, by serve outside alice's group, would clear its setgid bit.
  std::vector<std::string> owners;
  for (const std::string& call : recording.calls) {
    if (call.starts_with("chmod") || call.starts_with("chgrp")) owners.push_back(call);
  }
  ASSERT_EQ(owners.size(), 1u) << ::testing::PrintToString(owners);
  EXPECT_TRUE(owners[0].starts_with("chmod 0550 .2.staging-")) << owners[0];
  const auto made = [&](const std::string& call) {
    return std::find(recording.calls.begin(), recording.calls.end(), call) != recording.calls.end();
  };
  EXPECT_TRUE(made("mkdir-inheriting 2770 checkpoints"));
  EXPECT_TRUE(made("mkdir-inheriting 2770 logs"));
  EXPECT_TRUE(made("mkdir-inheriting 2770 output"));
  EXPECT_TRUE(made("mkdir-p-inheriting 2750 fence"));
}

TEST_F(PerUserStageTest, ANonRootServeOutsideTheGroupGetsTheSameTree) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
  makeUserDir(kNobody);
  // Stage as nobody, not in alice's group, with the usual umask: what serve meets.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string message;
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
        ::setresuid(kNobody, kNobody, kNobody) != 0) {
      message = "could not become nobody";
    } else {
      ::umask(022);
      PosixStagingFs fs;
      auto staged = stageAttempt(request_, script_, body_,
                                 aliceAccess(OsUser{"nobody", kNobody, kNobody}), fs);
      if (!staged) message = staged.error().describe();
    }
    if (!message.empty()) (void)!::write(pipe_fds[1], message.data(), message.size());
    ::_exit(message.empty() ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) message.append(buf, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << message;
  expectTheTree(kNobody);
}

TEST_F(PerUserStageTest, AUserDirectoryWithoutSetgidIsAnErrorNotATreeTheJobCannotUse) {
  makeUserDir(::geteuid(), 0750);
  PosixStagingFs fs;
  auto staged = stageAttempt(request_, script_, body_,
                             aliceAccess(OsUser{"me", ::geteuid(), ::getegid()}), fs);
  ASSERT_FALSE(staged);
  EXPECT_EQ(staged.error().code, "staging.io");
  EXPECT_NE(staged.error().message.find("is not setgid"), std::string::npos)
      << staged.error().message;
  EXPECT_FALSE(fs.exists(attempt_dir_));
}

TEST_F(PerUserStageTest, TheUmaskTakesNothingFromAnInheritingDirectory) {
  makeUserDir(::geteuid());
  PosixStagingFs fs;
  const std::string dir = *userDir(root_, "alice") + "/writable";
  const mode_t before = ::umask(0077);
  Status made = fs.makeInheritingDir(dir, kPerUserWritableDirMode);
  ::umask(before);
  ASSERT_TRUE(made) << made.error().describe();
  EXPECT_EQ(ownedOf(dir), (Owned{::geteuid(), kAliceGroup, 02770}));
}

}  // namespace
}  // namespace tuneplane::staging::per_user_stage_test
