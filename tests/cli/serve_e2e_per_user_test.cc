// Every user as themselves, end to end on the simulator (issue 44): `serve` with
// slurm.identity per_user, the simulator enforcing associations (its cluster file: `nobody`
// in team-b only). carol's token maps to the Unix user `nobody` (every Debian host has it)
// and lists team-b (her default) and team-a — too generous: TunePlane's own check lets
// team-a pass. Her job with the default runs as `nobody` in Slurm (SLURM_JOB_USER on the
// node) and succeeds; her job that names team-a is refused by Slurm (2045): it ends Failed,
// its reason naming the account — a refusal, not a retry and not a stuck attempt.
// Skipped unless run as root (the one-time step per user chowns users/nobody).
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>

#include "e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

constexpr const char* kCarolToken = "e2e-carol-token-5b1d77";

class ServeE2ePerUserTest : public ServeE2eTest {
 protected:
  std::vector<std::string> simArgs() const override {
    const_cast<ServeE2ePerUserTest*>(this)->writeCluster();
    std::vector<std::string> args = ServeE2eTest::simArgs();
    args.insert(args.end(), {"--cluster", cluster_});
    return args;
  }
  void writeCluster() {
    std::string dir = (std::filesystem::temp_directory_path() / "tp-e2e-cluster-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) return;
    cluster_dir_ = dir;
    cluster_ = dir + "/cluster.yaml";
    pipeline::testing::writeFile(cluster_,
                                 "nodes:\n  - {name: cpu1, cpus: 4, memory_mb: 4096}\n"
                                 "partitions:\n  - {name: cpu, nodes: [cpu1], default: true}\n"
                                 "  - {name: gpu, nodes: [cpu1]}\n"
                                 "accounting:\n  accounts: [general, team-a, team-b]\n"
                                 "  users:\n    - {name: nobody, accounts: [team-b]}\n");
  }
  std::string serverExtra() const override {
    return "    - user: carol\n      token_sha256: " + staging::sha256Hex(kCarolToken) +
           "\n      unix_user: nobody\n      slurm_account: [team-b, team-a]\n";
  }
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the one-time step per user needs root";
    const passwd* nobody = ::getpwnam("nobody");
    if (nobody == nullptr) GTEST_SKIP() << "this host has no user 'nobody'";
    ServeE2eTest::SetUp();
    if (HasFatalFailure()) return;
    // The same site, now per_user with a default account; serve started again.
    ASSERT_EQ(serve_->stop(), 0);
    site_->addSlurmYaml("  identity: per_user\n");
    // nobody passes through every directory down to its own (a site's shared filesystem).
    for (const std::string& dir : {site_->dir(), site_->stagingRoot()}) {
      ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
    }
    const std::string users = site_->stagingRoot() + "/users";
    std::filesystem::create_directories(users + "/nobody");
    ASSERT_EQ(::chown((users + "/nobody").c_str(), ::geteuid(), nobody->pw_gid), 0);
    ASSERT_EQ(::chmod((users + "/nobody").c_str(), 02750), 0);
    startServe();
    ASSERT_NE(serve_, nullptr);
  }
  void TearDown() override {
    ServeE2eTest::TearDown();
    if (!cluster_dir_.empty()) std::filesystem::remove_all(cluster_dir_);
  }

  std::string cluster_dir_, cluster_;
};

TEST_F(ServeE2ePerUserTest, AJobRunsAsItsUserAndSlurmsAssociationRefusalEndsItNamingTheAccount) {
  const test::CliRunner carol = as(kCarolToken);
  const auto submitAs = [&](const std::string& spec) {
    const std::string path = site_->specFile("carol-" + std::to_string(++specs_) + ".yaml", spec);
    const test::ProcessResult r = carol.run({"submit", "-f", path, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    return json::parse(r.out, nullptr, false).value("id", "");
  };
  const std::string ok = submitAs(cpuSpec("echo \"$SLURM_JOB_USER $SLURM_JOB_ACCOUNT\" > who.txt",
                                          "  scheduling:\n    account: team-b\n", "carol-ok"));
  ASSERT_FALSE(ok.empty());
  const json done = carol.waitJob(
      ok, [](const json& j) { return j.value("terminal", false); }, "ended", kJobLimit);
  ASSERT_EQ(done.value("phase", ""), "Succeeded") << done.dump(2);
  EXPECT_EQ(done["run_as"], "nobody");
  const std::string attempt = done["attempts"][0]["staging_dir"];
  EXPECT_NE(attempt.find("/users/nobody/jobs/"), std::string::npos) << attempt;
  EXPECT_EQ(pipeline::testing::readFile(attempt + "/output/who.txt"), "nobody team-b\n");

  const std::string refused =
      submitAs(cpuSpec("true", "  scheduling:\n    account: team-a\n", "carol-team-a"));
  ASSERT_FALSE(refused.empty());
  const json failed = carol.waitJob(
      refused, [](const json& j) { return j.value("terminal", false); }, "ended", kJobLimit);
  EXPECT_EQ(failed.value("phase", ""), "Failed") << failed.dump(2);
  EXPECT_EQ(failed["attempts"].size(), 1u);  // refused once, not retried
  EXPECT_EQ(failed["attempts"][0].value("cause", ""), "rejected") << failed.dump(2);
  EXPECT_NE(failed.dump().find("Invalid account"), std::string::npos) << failed.dump(2);
}

}  // namespace
}  // namespace tuneplane::cli::testing
