// The files API under slurm.identity per_user (output_files.h): the area of a job run as its
// own user is found under users/<run_as>/, walked from the root with O_NOFOLLOW like the
// rest, and a file is served only when its owner may read it — it belongs to the job's user
// or to TunePlane's and has the owner's read bit — else files.not_readable. The shared
// layout keeps serving as before. Owners other than this process need root (CI runs as
// root); those cases are skipped otherwise.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../catalog/temp_dir.h"
#include "attempt/error_codes.h"
#include "attempt/output_files.h"
#include "support/test_files.h"

namespace tuneplane::attempt::per_user_output_files_test {
namespace {

namespace fs = std::filesystem;
using tuneplane::testing::TempDir;

// A user every Debian host has: the job's user in these tests.
constexpr const char* kJobUser = "nobody";
constexpr uid_t kStranger = 4242;  // neither the job's user nor this process

TEST(PerUserAreaTest, TheAreaIsUnderTheUsersDirectoryAndRecordsItsOwner) {
  auto output = areaOf("/srv/stage/users/alice/jobs/j-1a2b3c4d/attempts/2", "j-1a2b3c4d",
                       OutputArea::kOutput, "alice");
  ASSERT_TRUE(output) << output.error().describe();
  EXPECT_EQ(output->root, "/srv/stage");
  EXPECT_EQ(output->components, (std::vector<std::string>{"users", "alice", "jobs", "j-1a2b3c4d",
                                                          "attempts", "2", "output"}));
  EXPECT_EQ(output->owner, "alice");
  auto checkpoints = areaOf("/srv/stage/users/alice/jobs/j-1a2b3c4d/attempts/2", "j-1a2b3c4d",
                            OutputArea::kCheckpoints, "alice");
  ASSERT_TRUE(checkpoints);
  EXPECT_EQ(checkpoints->components,
            (std::vector<std::string>{"users", "alice", "jobs", "j-1a2b3c4d", "checkpoints"}));
  // Another user's directory, or the shared layout, for a job run as alice: refused.
  for (const char* bad :
       {"/srv/stage/users/bob/jobs/j-1a2b3c4d/attempts/2", "/srv/stage/jobs/j-1a2b3c4d/attempts/2",
        "/srv/stage/x/alice/jobs/j-1a2b3c4d/attempts/2"}) {
    EXPECT_FALSE(areaOf(bad, "j-1a2b3c4d", OutputArea::kOutput, "alice")) << bad;
  }
  // A shared job keeps no owner.
  auto shared = areaOf("/srv/stage/jobs/j-1a2b3c4d/attempts/2", "j-1a2b3c4d", OutputArea::kOutput);
  ASSERT_TRUE(shared);
  EXPECT_TRUE(shared->owner.empty());
}

class PerUserOutputFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const passwd* pw = ::getpwnam(kJobUser);
    if (pw == nullptr) GTEST_SKIP() << "no user " << kJobUser << " on this host";
    job_uid_ = pw->pw_uid;
    attempt_dir_ = tmp_.path() + "/users/" + kJobUser + "/jobs/job-1a2b3c4d/attempts/1";
    output_ = attempt_dir_ + "/output";
    fs::create_directories(output_);
    auto area = areaOf(attempt_dir_, "job-1a2b3c4d", OutputArea::kOutput, kJobUser);
    ASSERT_TRUE(area) << area.error().describe();
    area_ = *area;
  }

  // A file of the output area with this owner and mode.
  void plant(const std::string& name, uid_t uid, mode_t mode) {
    const std::string path = output_ + "/" + name;
    test::writeFile(path, "weights");
    ASSERT_EQ(::chown(path.c_str(), uid, static_cast<gid_t>(-1)), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
  }
  Result<OutputFile> open(const std::string& name) { return openOutputFile(area_, {name}); }

  TempDir tmp_;
  uid_t job_uid_ = 0;
  std::string attempt_dir_;
  std::string output_;
  AreaLocation area_;
};

TEST_F(PerUserOutputFilesTest, TheJobUsersAndTunePlanesReadableFilesAreServed) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to the job's user needs root";
  plant("by-the-job.bin", job_uid_, 0644);
  plant("staged.txt", ::geteuid(), 0440);
  for (const char* name : {"by-the-job.bin", "staged.txt"}) {
    auto file = open(name);
    ASSERT_TRUE(file) << name << ": " << file.error().describe();
    EXPECT_EQ(file->size, 7u);
  }
}

TEST_F(PerUserOutputFilesTest, AFileOfAnotherUserIsNotServed) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  plant("planted.bin", kStranger, 0644);
  auto file = open("planted.bin");
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code, codes::kFilesNotReadable);
  EXPECT_NE(file.error().message.find("belongs to uid 4242"), std::string::npos)
      << file.error().message;
  EXPECT_EQ(file.error().message.find(tmp_.path()), std::string::npos);  // no server path
}

TEST_F(PerUserOutputFilesTest, AFileItsOwnerMayNotReadIsNotServed) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to the job's user needs root";
  plant("write-only.bin", job_uid_, 0244);
  auto file = open("write-only.bin");
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code, codes::kFilesNotReadable);
  EXPECT_NE(file.error().message.find("its owner may not read it (mode 0244)"), std::string::npos)
      << file.error().message;
  EXPECT_NE(file.error().message.find("output/write-only.bin"), std::string::npos);
}

TEST_F(PerUserOutputFilesTest, TheSharedLayoutServesAsBefore) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  const std::string dir = tmp_.path() + "/jobs/job-1a2b3c4d/attempts/1";
  fs::create_directories(dir + "/output");
  const std::string path = dir + "/output/planted.bin";
  test::writeFile(path, "weights");
  ASSERT_EQ(::chown(path.c_str(), kStranger, static_cast<gid_t>(-1)), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0200), 0);
  auto area = areaOf(dir, "job-1a2b3c4d", OutputArea::kOutput);
  ASSERT_TRUE(area);
  EXPECT_TRUE(openOutputFile(*area, {"planted.bin"}));
}

}  // namespace
}  // namespace tuneplane::attempt::per_user_output_files_test
