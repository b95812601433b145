// doctor's staging/user/<name> (slurm.identity per_user): one check per Unix user the site's
// tokens map to, each reporting staging::decideUserAccess's verdict — gathered through a fake
// user database and a filesystem that only answers stat — and the Slurm hook's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../staging/fake_os_users.h"
#include "../staging/fake_staging_fs.h"
#include "doctor/doctor.h"
#include "doctor/staging_checks.h"
#include "fixtures.h"

namespace tuneplane::doctor::user_staging_checks_test {
namespace {

using testing::contains;

constexpr uid_t kServe = 900;
constexpr gid_t kAliceGroup = 1002;
constexpr gid_t kUsersGroup = 100;

// Every answer a healthy staging root gives.
class FakeHost final : public HostProbe {
 public:
  // HostProbe
  PathInfo inspect(const std::string&) override { return {true, true, ""}; }
  Status probeWrite(const std::string&) override { return ok(); }
  Result<uint64_t> filesystemType(const std::string&) override { return uint64_t{0x6969}; }
  FileInfo fileInfo(const std::string&) override { return {}; }
  std::string hostName() override { return "host"; }
};

staging::testing::FakeOsUsers database() {
  staging::testing::FakeOsUsers users;
  users.user("tp", kServe, kServe)
      .user("alice", 1002, kAliceGroup)
      .user("bob", 1003, kUsersGroup)
      .user("carol", 1004, 1004)
      .group("tp", kServe)
      .group("alice", kAliceGroup)
      .group("carol", 1004)
      .group("users", kUsersGroup, {"dave"})
      .process(kServe, {kServe});
  return users;
}

catalog::SiteConfig perUserSite() {
  catalog::SiteConfig site = testing::site();
  site.slurm.user = "tp";
  site.slurm.identity = catalog::IdentityMode::kPerUser;
  site.staging_root = "/shared/tp";
  return site;
}

// alice has her directory; carol does not (yet).
staging::testing::StatOnlyStagingFs layout() {
  staging::testing::StatOnlyStagingFs fs;
  fs.dir("/", 0, 0, 0755)
      .dir("/shared", 0, 0, 0755)
      .dir("/shared/tp", kServe, kServe, 0755)
      .dir("/shared/tp/users", 0, 0, 0755)
      .dir("/shared/tp/users/alice", kServe, kAliceGroup, 02750);
  return fs;
}

std::vector<CheckResult> userChecks(const catalog::SiteConfig& site,
                                    staging::testing::FakeOsUsers users,
                                    const std::vector<std::string>& mapped) {
  FakeHost host;
  auto fs = layout();
  const StagingFacts facts = gatherStagingFacts(site, host, users, fs, mapped);
  std::vector<CheckResult> checks;
  checks.push_back(checkStagingUser(facts));
  for (const UserStagingFacts& user : facts.users) checks.push_back(checkUserStaging(user, facts));
  return checks;
}

TEST(UserStagingChecks, OneCheckPerMappedUserEachWithItsVerdict) {
  // alice twice (two tokens map to her): checked once.
  const auto checks =
      userChecks(perUserSite(), database(), {"alice", "bob", "alice", "carol", "nosuch"});
  ASSERT_EQ(checks.size(), 5u);
  EXPECT_EQ(checks[0].name, "staging/user");
  EXPECT_EQ(checks[0].status, CheckStatus::kOk) << checks[0].message;
  EXPECT_TRUE(contains(checks[0].message, "per_user")) << checks[0].message;

  const CheckResult& alice = checks[1];
  EXPECT_EQ(alice.name, "staging/user/alice");
  EXPECT_EQ(alice.status, CheckStatus::kOk) << alice.message;
  EXPECT_TRUE(contains(alice.message,
                       "/shared/tp/users/alice is owned by tp (uid 900), group "
                       "'alice', mode 2750"))
      << alice.message;
  EXPECT_EQ(alice.details["slurm"], "not checked");

  const CheckResult& bob = checks[2];
  EXPECT_EQ(bob.name, "staging/user/bob");
  EXPECT_EQ(bob.status, CheckStatus::kFail);
  EXPECT_EQ(bob.details["code"], "staging.user_group_shared");
  EXPECT_TRUE(contains(bob.message, "'dave'")) << bob.message;

  const CheckResult& carol = checks[3];
  EXPECT_EQ(carol.name, "staging/user/carol");
  EXPECT_EQ(carol.status, CheckStatus::kFail);
  EXPECT_EQ(carol.details["code"], "staging.user_dir_missing");
  EXPECT_TRUE(contains(carol.fix, "install -d -o tp -g carol -m 2750 /shared/tp/users/carol"))
      << carol.fix;

  EXPECT_EQ(checks[4].name, "staging/user/nosuch");
  EXPECT_EQ(checks[4].details["code"], "staging.unknown_job_user");
}

TEST(UserStagingChecks, ASharedSiteHasNone) {
  catalog::SiteConfig site = perUserSite();
  site.slurm.identity = catalog::IdentityMode::kShared;
  const auto checks = userChecks(site, database(), {"alice"});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].name, "staging/user");
}

TEST(UserStagingChecks, AreSkippedWhenTheSitesOwnRuleFails) {
  const auto checks = userChecks(perUserSite(), database().process(0, {0}), {"alice"});
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].status, CheckStatus::kFail);
  EXPECT_EQ(checks[0].details["code"], "staging.service_user_mismatch");
  EXPECT_EQ(checks[1].name, "staging/user/alice");
  EXPECT_EQ(checks[1].status, CheckStatus::kSkip);
}

TEST(UserStagingChecks, TheSlurmHooksAnswerIsReported) {
  FakeHost host;
  auto fs = layout();
  auto users = database();
  StagingFacts facts = gatherStagingFacts(perUserSite(), host, users, fs, {"alice"});
  ASSERT_EQ(facts.users.size(), 1u);
  facts.users[0].slurm = fail("slurm.unknown_user", "", "Slurm does not know user 'alice'");
  CheckResult r = checkUserStaging(facts.users[0], facts);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_TRUE(contains(r.message, "Slurm does not know user 'alice'")) << r.message;
  EXPECT_TRUE(contains(r.fix, "sacctmgr add user alice")) << r.fix;
  facts.users[0].slurm = ok();
  r = checkUserStaging(facts.users[0], facts);
  EXPECT_EQ(r.status, CheckStatus::kOk) << r.message;
  EXPECT_TRUE(contains(r.message, "Slurm knows the user")) << r.message;
}

}  // namespace
}  // namespace tuneplane::doctor::user_staging_checks_test
