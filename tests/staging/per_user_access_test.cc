// slurm.identity per_user (staging/job_access.h): the site's own rule (TunePlane runs as
// slurm.user), and each job user's — every refusal from a table, each with its code and the
// one-time step or fix in its words — with a fake user database and a filesystem that only
// answers stat, so no real account or root is needed.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "fake_os_users.h"
#include "fake_staging_fs.h"
#include "staging/job_access.h"

namespace tuneplane::staging::per_user_access_test {
namespace {

using testing::FakeOsUsers;
using testing::StatOnlyStagingFs;

constexpr uid_t kServe = 900;  // slurm.user "tp": serve runs as it
constexpr gid_t kServeGroup = 900;
constexpr uid_t kAlice = 1002;
constexpr gid_t kAliceGroup = 1002;
constexpr uid_t kBob = 1003;
constexpr gid_t kUsersGroup = 100;  // bob's primary group, which carol is in too
constexpr uid_t kGhost = 1004;
constexpr gid_t kNoSuchGroup = 5000;
constexpr const char* kRoot = "/shared/tp";
constexpr const char* kAliceDir = "/shared/tp/users/alice";

FakeOsUsers database() {
  FakeOsUsers users;
  users.user("root", 0, 0)
      .user("toor", 0, 0)
      .user("tp", kServe, kServeGroup)
      .user("alice", kAlice, kAliceGroup)
      .user("bob", kBob, kUsersGroup)
      .user("ghost", kGhost, kNoSuchGroup)
      .group("root", 0)
      .group("tp", kServeGroup)
      .group("alice", kAliceGroup, {"alice"})  // listing the user itself is fine
      .group("users", kUsersGroup, {"carol"})
      .process(kServe, {kServeGroup});
  return users;
}

catalog::SiteConfig perUserSite() {
  catalog::SiteConfig s;
  s.slurm.user = "tp";
  s.slurm.identity = catalog::IdentityMode::kPerUser;
  s.staging_root = kRoot;
  return s;
}

// The layout the one-time step leaves: users/alice owned by tp, group alice, 02750.
StatOnlyStagingFs layout() {
  StatOnlyStagingFs fs;
  fs.dir("/", 0, 0, 0755)
      .dir("/shared", 0, 0, 0755)
      .dir(kRoot, kServe, kServeGroup, 0755)
      .dir("/shared/tp/users", 0, 0, 0755)
      .dir(kAliceDir, kServe, kAliceGroup, 02750);
  return fs;
}

JobAccess siteAccess(FakeOsUsers& users, StagingFs& fs) {
  auto access = decideJobAccess(perUserSite(), users, fs);
  EXPECT_TRUE(access) << access.error().toError().describe();
  return access ? *access : JobAccess{};
}

bool mentions(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

TEST(PerUserSiteAccess, TunePlaneRunsAsSlurmUserAndDecidesNoUserYet) {
  auto users = database();
  auto fs = layout();
  auto access = decideJobAccess(perUserSite(), users, fs);
  ASSERT_TRUE(access) << access.error().toError().describe();
  EXPECT_EQ(access->mode, JobAccessMode::kPerUser);
  EXPECT_EQ(access->process_user.name, "tp");
  EXPECT_TRUE(access->run_as.empty());
  // A job with no run_as runs as slurm.user, TunePlane itself: the shared layout's modes.
  EXPECT_FALSE(access->perUserJob());
  EXPECT_EQ(access->fileMode(), 0444u);
  EXPECT_EQ(access->writableDirMode(), 0755u);
  EXPECT_TRUE(mentions(access->describe(), "per_user")) << access->describe();
}

TEST(PerUserSiteAccess, TunePlaneRunningAsAnotherUserIsRefused) {
  auto users = database().process(0, {0});
  auto fs = layout();
  auto access = decideJobAccess(perUserSite(), users, fs);
  ASSERT_FALSE(access);
  EXPECT_EQ(access.error().code, "staging.service_user_mismatch");
  EXPECT_EQ(access.error().field, "slurm.user");
  EXPECT_TRUE(mentions(access.error().reason, "'root' (uid 0)")) << access.error().reason;
  EXPECT_TRUE(mentions(access.error().fix, "User=tp")) << access.error().fix;
}

TEST(PerUserJobAccess, AUserWithItsDirectoryGetsThePerUserModes) {
  auto users = database();
  auto fs = layout();
  const JobAccess site = siteAccess(users, fs);
  auto access = decideUserAccess(site, kRoot, "alice", users, fs);
  ASSERT_TRUE(access) << access.error().toError().describe();
  EXPECT_TRUE(access->perUserJob());
  EXPECT_EQ(access->run_as, "alice");
  EXPECT_EQ(access->job_user.uid, kAlice);
  EXPECT_EQ(access->process_user.uid, kServe);
  ASSERT_TRUE(access->group);
  EXPECT_EQ(access->group->gid, kAliceGroup);
  EXPECT_EQ(access->writableDirMode(), 02770u);
  EXPECT_EQ(access->treeDirMode(), 02750u);
  EXPECT_EQ(access->fileMode(), 0440u);
  EXPECT_EQ(access->attemptDirMode(), 0550u);
  EXPECT_TRUE(mentions(access->describe(), "users/alice")) << access->describe();
}

TEST(PerUserJobAccess, TheOneTimeStepIsOneInstallCommand) {
  auto users = database();
  auto access = resolveUserAccess(OsUser{"tp", kServe, kServeGroup}, "alice", users);
  ASSERT_TRUE(access) << access.error().toError().describe();
  EXPECT_EQ(userDirCommand(*access, kRoot),
            "install -d -o tp -g alice -m 2750 /shared/tp/users/alice");
}

struct Refusal {
  const char* name;
  std::string user;
  std::function<void(StatOnlyStagingFs&)> arrange;  // changes the layout
  const char* code;
  const char* says;  // a piece of the reason
  const char* fix;   // a piece of the fix
};

std::ostream& operator<<(std::ostream& out, const Refusal& r) {
  return out << r.name;
}

class PerUserRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(PerUserRefusal, IsNamedWithItsCodeAndFix) {
  const Refusal& r = GetParam();
  auto users = database();
  auto fs = layout();
  const JobAccess site = siteAccess(users, fs);
  if (r.arrange) r.arrange(fs);
  auto access = decideUserAccess(site, kRoot, r.user, users, fs);
  ASSERT_FALSE(access);
  EXPECT_EQ(access.error().code, r.code);
  EXPECT_EQ(access.error().field, "run_as");
  EXPECT_TRUE(mentions(access.error().reason, r.says)) << access.error().reason;
  EXPECT_TRUE(mentions(access.error().fix, r.fix)) << access.error().fix;
}

const auto kAliceDirAs = [](uid_t uid, gid_t gid, mode_t mode) {
  return [=](StatOnlyStagingFs& fs) { fs.dir(kAliceDir, uid, gid, mode); };
};

INSTANTIATE_TEST_SUITE_P(
    Table, PerUserRefusal,
    ::testing::Values(
        Refusal{"not a user name", "Alice!", nullptr, "staging.invalid_user", "'Alice!'",
                "unix_user"},
        Refusal{"unknown here", "nosuch", nullptr, "staging.unknown_job_user", "'nosuch'",
                "same uid as on the compute nodes"},
        Refusal{"root by another name", "toor", nullptr, "staging.root_job_user", "root",
                "ordinary Unix user"},
        Refusal{"primary group without an entry", "ghost", nullptr, "staging.unknown_group",
                "gid 5000", "group database"},
        Refusal{"primary group shared with others", "bob", nullptr, "staging.user_group_shared",
                "'carol'", "usermod -g bob bob"},
        Refusal{"no per-user directory yet", "alice",
                [](StatOnlyStagingFs& fs) { fs = StatOnlyStagingFs(); }, "staging.user_dir_missing",
                "users/alice of 'alice' does not exist",
                "install -d -o tp -g alice -m 2750 /shared/tp/users/alice"},
        Refusal{"owned by root", "alice", kAliceDirAs(0, kAliceGroup, 02750),
                "staging.user_dir_unprotected", "its owner is uid 0", "chown tp:alice"},
        Refusal{"another group", "alice", kAliceDirAs(kServe, kUsersGroup, 02750),
                "staging.user_dir_unprotected", "its group is gid 100", "chmod 2750"},
        Refusal{"setgid missing", "alice", kAliceDirAs(kServe, kAliceGroup, 0750),
                "staging.user_dir_unprotected", "its mode is 0750", "as root"},
        Refusal{"others may enter", "alice", kAliceDirAs(kServe, kAliceGroup, 02755),
                "staging.user_dir_unprotected", "its mode is 2755", "chmod 2750"},
        Refusal{"group may write", "alice", kAliceDirAs(kServe, kAliceGroup, 02770),
                "staging.user_dir_unprotected", "its mode is 2770", "chmod 2750"},
        Refusal{"a file, not a directory", "alice",
                [](StatOnlyStagingFs& fs) { fs.file(kAliceDir, kServe, kAliceGroup, 02750); },
                "staging.user_dir_unprotected", "not a directory", "chown tp:alice"},
        Refusal{"the way down closed to the user", "alice",
                [](StatOnlyStagingFs& fs) { fs.dir("/shared", 0, 0, 0750); },
                "staging.not_traversable", "cannot pass through '/shared'", "search permission"}),
    [](const ::testing::TestParamInfo<Refusal>& info) {
      std::string name = info.param.name;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

TEST(PerUserJobAccess, ADatabaseThatDoesNotAnswerIsALookupFailure) {
  auto users = database();
  auto fs = layout();
  const JobAccess site = siteAccess(users, fs);
  users.failLookups();
  auto access = decideUserAccess(site, kRoot, "alice", users, fs);
  ASSERT_FALSE(access);
  EXPECT_EQ(access.error().code, "staging.user_lookup_failed");
  EXPECT_EQ(access.error().field, "run_as");
}

}  // namespace
}  // namespace tuneplane::staging::per_user_access_test
