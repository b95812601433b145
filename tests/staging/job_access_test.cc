// The rule of who writes an attempt (staging/job_access.h), with a fake user database: the
// two modes, every refusal with its code, field and a message naming both users and the
// fix; the search-permission rule from a table; and checkJobCanReach on real directories
// for a job user that exists only in the fake database.
#include "staging/job_access.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "fake_os_users.h"

namespace tuneplane::staging {
namespace {

using testing::FakeOsUsers;

constexpr uid_t kRoot = 0;
constexpr uid_t kTpUser = 1001;  // slurm.user
constexpr gid_t kTpUserGroup = 1001;
constexpr uid_t kService = 2000;  // a service account that is not slurm.user
constexpr gid_t kServiceGroup = 2000;
constexpr gid_t kJobsGroup = 3000;  // staging.group
constexpr gid_t kOtherGroup = 3001;

// tpuser is in tpjobs; svc is not; "lonely" is in no shared group.
FakeOsUsers database() {
  FakeOsUsers users;
  users.user("root", kRoot, 0)
      .user("tpuser", kTpUser, kTpUserGroup, {kJobsGroup})
      .user("svc", kService, kServiceGroup)
      .group("root", 0)
      .group("tpuser", kTpUserGroup)
      .group("tpjobs", kJobsGroup)
      .group("other", kOtherGroup);
  return users;
}

catalog::SiteConfig site(const std::string& user, std::optional<std::string> group = {}) {
  catalog::SiteConfig s;
  s.slurm.user = user;
  s.staging.group = std::move(group);
  s.staging_root = "/shared/tuneplane";
  return s;
}

bool mentions(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

TEST(ResolveJobAccess, TunePlaneRunningAsTheJobUserNeedsNoGroup) {
  auto users = database().process(kTpUser, {kTpUserGroup, kJobsGroup});
  auto access = resolveJobAccess(site("tpuser"), users);
  ASSERT_TRUE(access) << access.error().describe();
  EXPECT_EQ(access->mode, JobAccessMode::kSameUser);
  EXPECT_EQ(access->job_user.uid, kTpUser);
  EXPECT_EQ(access->process_user.name, "tpuser");
  EXPECT_EQ(access->writableDirMode(), 0755u);
  EXPECT_FALSE(access->group);
}

TEST(ResolveJobAccess, RootStagingForAnotherUserIsRefusedNamingBothUsersAndTheFix) {
  auto users = database().process(kRoot, {0});
  auto access = resolveJobAccess(site("tpuser"), users);
  ASSERT_FALSE(access);
  EXPECT_EQ(access.error().code, "staging.job_user_mismatch");
  EXPECT_EQ(access.error().field, "slurm.user");
  const std::string& m = access.error().message;
  EXPECT_TRUE(mentions(m, "'root' (uid 0)")) << m;
  EXPECT_TRUE(mentions(m, "'tpuser' (uid 1001)")) << m;
  EXPECT_TRUE(mentions(m, "run TunePlane as 'tpuser'")) << m;
  EXPECT_TRUE(mentions(m, "staging.group")) << m;
}

TEST(ResolveJobAccess, ASharedGroupLetsRootStageForTheJobUser) {
  auto users = database().process(kRoot, {0});
  auto access = resolveJobAccess(site("tpuser", "tpjobs"), users);
  ASSERT_TRUE(access) << access.error().describe();
  EXPECT_EQ(access->mode, JobAccessMode::kSharedGroup);
  ASSERT_TRUE(access->group);
  EXPECT_EQ(access->group->gid, kJobsGroup);
  EXPECT_EQ(access->writableDirMode(), 02775u);
  EXPECT_TRUE(mentions(access->describe(), "group 'tpjobs'")) << access->describe();
}

TEST(ResolveJobAccess, TheJobUsersPrimaryGroupCounts) {
  auto users = database().process(kRoot, {0});
  auto access = resolveJobAccess(site("tpuser", "tpuser"), users);
  ASSERT_TRUE(access) << access.error().describe();
  EXPECT_EQ(access->group->gid, kTpUserGroup);
}

TEST(ResolveJobAccess, AServiceAccountInTheGroupMayStage) {
  auto users = database().process(kService, {kServiceGroup, kJobsGroup});
  auto access = resolveJobAccess(site("tpuser", "tpjobs"), users);
  ASSERT_TRUE(access) << access.error().describe();
  EXPECT_EQ(access->process_user.name, "svc");
}

TEST(ResolveJobAccess, AnExplicitGroupAppliesEvenToTheJobUserItself) {
  auto users = database().process(kTpUser, {kTpUserGroup, kJobsGroup});
  auto access = resolveJobAccess(site("tpuser", "tpjobs"), users);
  ASSERT_TRUE(access) << access.error().describe();
  EXPECT_EQ(access->mode, JobAccessMode::kSharedGroup);
}

struct RefusalCase {
  const char* name;
  uid_t process;
  std::vector<gid_t> process_groups;
  std::string user;
  std::optional<std::string> group;
  const char* code;
  const char* field;
  std::vector<std::string> message_mentions;
};

TEST(ResolveJobAccess, EachRefusalHasItsCodeFieldAndFix) {
  const RefusalCase cases[] = {
      {"unknown job user",
       kRoot,
       {0},
       "ghost",
       std::nullopt,
       "staging.unknown_job_user",
       "slurm.user",
       {"'ghost'", "not a user on this host"}},
      {"unknown job user with a group",
       kRoot,
       {0},
       "ghost",
       "tpjobs",
       "staging.unknown_job_user",
       "slurm.user",
       {"'ghost'"}},
      {"service account without group",
       kService,
       {kServiceGroup},
       "tpuser",
       std::nullopt,
       "staging.job_user_mismatch",
       "slurm.user",
       {"'svc' (uid 2000)", "'tpuser' (uid 1001)"}},
      {"unknown group",
       kRoot,
       {0},
       "tpuser",
       "nosuch",
       "staging.unknown_group",
       "staging.group",
       {"'nosuch'", "not a group on this host"}},
      {"job user not in the group",
       kRoot,
       {0},
       "tpuser",
       "other",
       "staging.job_user_not_in_group",
       "staging.group",
       {"'tpuser'", "'other'", "add 'tpuser'"}},
      {"service account not in the group",
       kService,
       {kServiceGroup},
       "tpuser",
       "tpjobs",
       "staging.group_not_usable",
       "staging.group",
       {"'svc' (uid 2000)", "'tpjobs'", "restart"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto users = database().process(c.process, c.process_groups);
    auto access = resolveJobAccess(site(c.user, c.group), users);
    ASSERT_FALSE(access);
    EXPECT_EQ(access.error().code, c.code) << access.error().describe();
    EXPECT_EQ(access.error().field, c.field);
    for (const auto& piece : c.message_mentions) {
      EXPECT_TRUE(mentions(access.error().message, piece)) << access.error().message;
    }
  }
}

TEST(ResolveJobAccess, AProcessUidUnknownToTheDatabaseIsNamedByNumber) {
  auto users = database().process(4242, {4242});
  auto access = resolveJobAccess(site("tpuser"), users);
  ASSERT_FALSE(access);
  EXPECT_TRUE(mentions(access.error().message, "'uid 4242' (uid 4242)")) << access.error().message;
}

TEST(ResolveJobAccess, AFailedLookupIsNotMistakenForAMissingUser) {
  auto users = database().process(kRoot, {0}).failLookups();
  auto access = resolveJobAccess(site("tpuser", "tpjobs"), users);
  ASSERT_FALSE(access);
  EXPECT_EQ(access.error().code, "staging.user_lookup_failed");
  EXPECT_EQ(access.error().field, "slurm.user");
}

JobAccess sharedGroupAccess() {
  auto users = database().process(kRoot, {0});
  auto access = resolveJobAccess(site("tpuser", "tpjobs"), users);
  EXPECT_TRUE(access);
  return *access;
}

TEST(JobCanSearch, PermissionClassesApplyInPosixOrder) {
  const JobAccess access = sharedGroupAccess();  // tpuser: uid 1001, groups 1001 and 3000
  struct Row {
    const char* name;
    PathInfo dir;
    bool can;
  };
  const Row rows[] = {
      {"owner with u+x", {kTpUser, 0, 0700, true}, true},
      {"owner without u+x, even with o+x", {kTpUser, 0, 0605, true}, false},
      {"group member with g+x", {kRoot, kJobsGroup, 0750, true}, true},
      {"primary group with g+x", {kRoot, kTpUserGroup, 0710, true}, true},
      {"group member without g+x, even with o+x", {kRoot, kJobsGroup, 0705, true}, false},
      {"other with o+x", {kRoot, 0, 0711, true}, true},
      {"other without o+x", {kRoot, 0, 0750, true}, false},
      {"sticky world-writable /tmp", {kRoot, 0, 01777, true}, true},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(jobCanSearch(row.dir, access), row.can) << row.name;
  }
}

class JobCanReachTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-reach-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::string root_;
  PosixStagingFs fs_;
};

TEST_F(JobCanReachTest, ADirectoryTheJobUserCannotSearchIsNamed) {
  const std::string closed = root_ + "/closed";
  ASSERT_EQ(::mkdir(closed.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(closed.c_str(), 0700), 0);
  const std::string target = closed + "/staging/jobs/x";  // below it, not there yet
  auto reached = checkJobCanReach(target, sharedGroupAccess(), fs_);
  ASSERT_FALSE(reached);
  EXPECT_EQ(reached.error().code, "staging.not_traversable");
  EXPECT_EQ(reached.error().field, "staging_root");
  EXPECT_TRUE(mentions(reached.error().message, "'" + closed + "' (mode 0700"))
      << reached.error().message;
}

TEST_F(JobCanReachTest, OpenDirectoriesAndMissingOnesPass) {
  const std::string open = root_ + "/open";
  ASSERT_EQ(::mkdir(open.c_str(), 0711), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0711), 0);
  EXPECT_TRUE(checkJobCanReach(open + "/not/yet/there", sharedGroupAccess(), fs_));
}

TEST_F(JobCanReachTest, TheSameUserModeHasNothingToCheck) {
  const std::string closed = root_ + "/closed";
  ASSERT_EQ(::mkdir(closed.c_str(), 0700), 0);
  auto users = database().process(kTpUser, {kTpUserGroup});
  auto access = resolveJobAccess(site("tpuser"), users);
  ASSERT_TRUE(access);
  EXPECT_TRUE(checkJobCanReach(closed + "/x", *access, fs_));
}

}  // namespace
}  // namespace tuneplane::staging
