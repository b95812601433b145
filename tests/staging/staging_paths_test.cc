// The staging layout's path builders: the layout itself, and that no id can traverse.
#include "staging/staging_paths.h"

#include <gtest/gtest.h>

#include <string>

namespace tuneplane::staging {
namespace {

TEST(StagingPathsTest, AttemptDirFollowsTheLayout) {
  auto dir = attemptDir("/shared/tp", "hello-0a1b2c3d", 3);
  ASSERT_TRUE(dir) << dir.error().describe();
  EXPECT_EQ(*dir, "/shared/tp/jobs/hello-0a1b2c3d/attempts/3");
  EXPECT_EQ(attemptFile(*dir, kLaunchFile),
            "/shared/tp/jobs/hello-0a1b2c3d/attempts/3/launch.json");
  EXPECT_EQ(attemptFile(*dir, kLogsDir), "/shared/tp/jobs/hello-0a1b2c3d/attempts/3/logs");
  auto job = jobDir("/shared/tp", "hello-0a1b2c3d");
  ASSERT_TRUE(job);
  EXPECT_EQ(*job, "/shared/tp/jobs/hello-0a1b2c3d");
  // The job's checkpoints live beside its attempts, shared by them all.
  auto checkpoints = checkpointDir("/shared/tp", "hello-0a1b2c3d");
  ASSERT_TRUE(checkpoints);
  EXPECT_EQ(*checkpoints, "/shared/tp/jobs/hello-0a1b2c3d/checkpoints");
  EXPECT_FALSE(checkpointDir("/shared/tp", "../etc-0a1b2c3d"));
  EXPECT_FALSE(checkpointDir("shared", "hello-0a1b2c3d"));
}

TEST(StagingPathsTest, APerUserJobLivesUnderItsUsersDirectory) {
  auto user = userDir("/shared/tp", "alice");
  ASSERT_TRUE(user) << user.error().describe();
  EXPECT_EQ(*user, "/shared/tp/users/alice");
  EXPECT_EQ(*jobDir("/shared/tp", "hello-0a1b2c3d", "alice"),
            "/shared/tp/users/alice/jobs/hello-0a1b2c3d");
  EXPECT_EQ(*checkpointDir("/shared/tp", "hello-0a1b2c3d", "alice"),
            "/shared/tp/users/alice/jobs/hello-0a1b2c3d/checkpoints");
  EXPECT_EQ(*attemptDir("/shared/tp", "hello-0a1b2c3d", 2, "alice"),
            "/shared/tp/users/alice/jobs/hello-0a1b2c3d/attempts/2");
  EXPECT_EQ(*attemptDir("/", "hello-0a1b2c3d", 1, "alice"),
            "/users/alice/jobs/hello-0a1b2c3d/attempts/1");
  // "" is the shared layout.
  EXPECT_EQ(*attemptDir("/shared/tp", "hello-0a1b2c3d", 2, ""),
            "/shared/tp/jobs/hello-0a1b2c3d/attempts/2");
}

TEST(StagingPathsTest, AUserNameThatIsNotOneCannotTraverse) {
  for (const char* user : {"..", ".", "a/b", "Alice", "-x", "alice\n", "0day"}) {
    auto dir = attemptDir("/shared/tp", "hello-0a1b2c3d", 1, user);
    ASSERT_FALSE(dir) << user;
    EXPECT_EQ(dir.error().code, "staging.invalid_user") << user;
  }
  auto root = userDir("relative", "alice");
  ASSERT_FALSE(root);
  EXPECT_EQ(root.error().code, "staging.invalid_root");
}

TEST(StagingPathsTest, RootDirectoryAsStagingRoot) {
  auto dir = attemptDir("/", "hello-0a1b2c3d", 1);
  ASSERT_TRUE(dir);
  EXPECT_EQ(*dir, "/jobs/hello-0a1b2c3d/attempts/1");
}

TEST(StagingPathsTest, TempPrefixIsAHiddenSiblingOfTheAttempt) {
  EXPECT_EQ(stagingTempPrefix("/s/jobs/j-0a1b2c3d/attempts/3"),
            "/s/jobs/j-0a1b2c3d/attempts/.3.staging-");
  EXPECT_EQ(parentDir("/s/jobs/j-0a1b2c3d/attempts/3"), "/s/jobs/j-0a1b2c3d/attempts");
  EXPECT_EQ(parentDir("/s"), "/");
}

struct BadId {
  const char* job_id;
  const char* why;
};

class StagingPathsBadJobIdTest : public ::testing::TestWithParam<BadId> {};

TEST_P(StagingPathsBadJobIdTest, IsRefused) {
  auto dir = attemptDir("/shared/tp", GetParam().job_id, 1);
  ASSERT_FALSE(dir) << GetParam().why << " gave " << *dir;
  EXPECT_EQ(dir.error().code, "staging.invalid_job_id");
  EXPECT_EQ(dir.error().field, "job_id");
}

INSTANTIATE_TEST_SUITE_P(
    Table, StagingPathsBadJobIdTest,
    ::testing::Values(BadId{"", "empty"}, BadId{"..", "parent"}, BadId{".", "self"},
                      BadId{"../etc-0a1b2c3d", "traversal prefix"}, BadId{"a/b-0a1b2c3d", "slash"},
                      BadId{"/abs-0a1b2c3d", "absolute"}, BadId{"hello", "no suffix"},
                      BadId{"hello-0a1b2c3", "short suffix"},
                      BadId{"hello-0A1B2C3D", "upper-case hex"},
                      BadId{"hello-0a1b2c3g", "non-hex suffix"},
                      BadId{"Hello-0a1b2c3d", "upper-case name"}, BadId{"-0a1b2c3d", "empty name"},
                      BadId{"hello_x-0a1b2c3d", "underscore"}));

TEST(StagingPathsTest, LongestValidJobIdIsAccepted) {
  const std::string id = std::string(54, 'a') + "-0a1b2c3d";  // 63 characters
  EXPECT_TRUE(attemptDir("/s", id, 1));
  auto too_long = attemptDir("/s", "a" + id, 1);  // 64 characters: no longer a DNS label
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().code, "staging.invalid_job_id");
}

TEST(StagingPathsTest, AttemptBelowOneIsRefused) {
  for (int attempt : {0, -1}) {
    auto dir = attemptDir("/s", "hello-0a1b2c3d", attempt);
    ASSERT_FALSE(dir) << attempt;
    EXPECT_EQ(dir.error().code, "staging.invalid_attempt");
  }
}

TEST(StagingPathsTest, RootMustBeCleanAndAbsolute) {
  for (const char* root :
       {"", "relative/tp", "/shared/../etc", "/shared/./tp", "/shared//tp", "/shared/tp/"}) {
    auto dir = attemptDir(root, "hello-0a1b2c3d", 1);
    ASSERT_FALSE(dir) << "'" << root << "'";
    EXPECT_EQ(dir.error().code, "staging.invalid_root") << root;
  }
}

TEST(StagingPathsTest, CleanAbsolutePathTable) {
  EXPECT_TRUE(isCleanAbsolutePath("/"));
  EXPECT_TRUE(isCleanAbsolutePath("/a/b.c/..d"));
  EXPECT_FALSE(isCleanAbsolutePath("a"));
  EXPECT_FALSE(isCleanAbsolutePath("/a/.."));
  EXPECT_FALSE(isCleanAbsolutePath("/a/./b"));
  EXPECT_FALSE(isCleanAbsolutePath("//a"));
  EXPECT_FALSE(isCleanAbsolutePath(std::string("/a\0b", 4)));
}

}  // namespace
}  // namespace tuneplane::staging
