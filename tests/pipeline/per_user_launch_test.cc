// The launch pipeline under slurm.identity per_user: a job's run_as puts its attempt,
// checkpoint and fence dirs under <staging_root>/users/<run_as>/, its script starts with
// `umask 0022` and its submit body carries SLURM_UMASK=0022; the AttemptLauncher decides each
// job user's rule (staging::decideUserAccess) before it stages anything — a user with its
// directory is staged with the per_user modes, one without is refused with nothing made.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../staging/fake_os_users.h"
#include "catalog/artifact_verifier.h"
#include "pipeline/attempt_launcher.h"
#include "pipeline/launch_pipeline.h"
#include "site_fixture.h"
#include "staging/staging_paths.h"

namespace tuneplane::pipeline::per_user_launch_test {
namespace {

using testing::cpuSpec;

constexpr uid_t kAlice = 4242;  // known only to the fake user database
constexpr gid_t kAliceGroup = 4343;

class FixedRandomSource final : public launch::RandomSource {
 public:
  Status fill(std::span<std::uint8_t> out) override {
    for (auto& b : out) b = 0x5a;
    return ok();
  }
};

bool hasEnv(const nlohmann::json& body, const std::string& entry) {
  const nlohmann::json& job = body.contains("job") ? body["job"] : body["jobs"][0];
  for (const auto& e : job["environment"]) {
    if (e == entry) return true;
  }
  return false;
}

class PerUserLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = site_.context();
    context_.site.slurm.identity = catalog::IdentityMode::kPerUser;
    // The fixture's directory is 0700: alice must get through it to her own.
    ASSERT_EQ(::chmod(site_.dir().c_str(), 0755), 0);
    users_.user("me", ::geteuid(), ::getegid())
        .user("alice", kAlice, kAliceGroup)
        .group("alice", kAliceGroup)
        .process(::geteuid(), {::getegid()});
    context_.site.slurm.user = "me";
  }

  PrepareOptions options(const std::string& run_as) const {
    PrepareOptions o;
    o.job_id = "hello-0a1b2c3d";
    o.run_as = run_as;
    return o;
  }

  testing::SiteDir site_{"http://127.0.0.1:9", /*use_token_file=*/true};
  SiteContext context_;
  staging::testing::FakeOsUsers users_;
  catalog::ArtifactVerifier verifier_;
  FixedRandomSource random_;
};

TEST_F(PerUserLaunchTest, ARunAsPutsTheJobUnderItsUserAndItsFilesReadableForTunePlane) {
  auto prepared = prepareText(cpuSpec(), context_, options("alice"), verifier_, random_);
  ASSERT_TRUE(prepared) << prepared.error().front().describe();
  const std::string job = site_.stagingRoot() + "/users/alice/jobs/hello-0a1b2c3d";
  EXPECT_EQ(prepared->request.attempt_dir, job + "/attempts/1");
  EXPECT_EQ(prepared->request.checkpoint_dir, job + "/checkpoints");
  EXPECT_EQ(prepared->request.fence_dir, job + "/fence");
  EXPECT_EQ(prepared->request.job_umask, "0022");
  EXPECT_NE(prepared->script.find("\numask 0022\n"), std::string::npos);
  EXPECT_TRUE(hasEnv(prepared->submit_body, "SLURM_UMASK=0022"));

  // A shared site: today's layout, no umask.
  SiteContext shared = context_;
  shared.site.slurm.identity = catalog::IdentityMode::kShared;
  auto today = prepareText(cpuSpec(), shared, options(""), verifier_, random_);
  ASSERT_TRUE(today) << today.error().front().describe();
  EXPECT_EQ(today->request.attempt_dir, site_.stagingRoot() + "/jobs/hello-0a1b2c3d/attempts/1");
  EXPECT_TRUE(today->request.job_umask.empty());
  EXPECT_EQ(today->script.find("umask"), std::string::npos);
  EXPECT_FALSE(hasEnv(today->submit_body, "SLURM_UMASK=0022"));
}

TEST_F(PerUserLaunchTest, TheLauncherStagesAUserWithItsDirectoryAndRefusesOneWithout) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving users/alice to alice's group needs root";
  staging::PosixStagingFs fs;
  auto access = checkJobAccess(context_, users_, fs);
  ASSERT_TRUE(access) << access.error().describe();
  EXPECT_EQ(access->mode, staging::JobAccessMode::kPerUser);
  // The one-time step, as `tuneplane token add` leaves it.
  const std::string user_dir = site_.stagingRoot() + "/users/alice";
  std::filesystem::create_directories(user_dir);
  ASSERT_EQ(::chown(user_dir.c_str(), ::geteuid(), kAliceGroup), 0);
  ASSERT_EQ(::chmod(user_dir.c_str(), 02750), 0);

  AttemptLauncher launcher(context_, verifier_, random_, fs, *access, attempt::posixAttemptReader(),
                           users_);
  auto dir = launcher.attemptDir("hello-0a1b2c3d", 1, "alice");
  ASSERT_TRUE(dir) << dir.error().describe();
  EXPECT_EQ(*dir, user_dir + "/jobs/hello-0a1b2c3d/attempts/1");
  store::AttemptRecord attempt;
  attempt.job_id = "hello-0a1b2c3d";
  attempt.number = 1;
  attempt.submit_token = "tp-" + std::string(32, 'a');
  attempt.staging_dir = *dir;
  auto staged = launcher.stageOrLoad(cpuSpec(), attempt, "alice");
  ASSERT_TRUE(staged) << staged.error().front().describe();
  EXPECT_TRUE(hasEnv(staged->body, "SLURM_UMASK=0022"));
  struct stat st {};
  ASSERT_EQ(::stat((*dir + "/logs").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 02770u);
  EXPECT_EQ(st.st_gid, kAliceGroup);
  ASSERT_EQ(::stat((*dir + "/job.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0440u);

  // bob is no user here: refused before anything of his is made.
  auto bob_dir = launcher.attemptDir("hello-0a1b2c3d", 1, "bob");
  ASSERT_TRUE(bob_dir);
  attempt.staging_dir = *bob_dir;
  EXPECT_EQ(launcher.accessFor("bob").error().code, "staging.unknown_job_user");
  auto refused = launcher.stageOrLoad(cpuSpec(), attempt, "bob");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().front().code, "staging.unknown_job_user");
  EXPECT_FALSE(std::filesystem::exists(site_.stagingRoot() + "/users/bob"));
  // A job with no run_as (stored before the site moved to per_user) keeps the shared layout.
  EXPECT_EQ(launcher.accessFor("")->mode, staging::JobAccessMode::kPerUser);
  EXPECT_FALSE(launcher.accessFor("")->perUserJob());
}

}  // namespace
}  // namespace tuneplane::pipeline::per_user_launch_test
