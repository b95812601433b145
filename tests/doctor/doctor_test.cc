// The gathering layer with fakes at every seam: what it asks, in which order the checks come,
// that a refused or missing server is not asked twice, that the token never reaches the
// report, and that large artifacts report their progress.
#include "doctor/doctor.h"

#include <gtest/gtest.h>

#include <map>

#include "../catalog/temp_dir.h"
#include "../staging/fake_os_users.h"
#include "common/jwt.h"
#include "fixtures.h"

namespace tuneplane::doctor {
namespace {

using testing::contains;

constexpr int64_t kNowMs = 1'800'000'000'000;

class FakeSlurmClient final : public slurm::SlurmClient {
 public:
  slurm::SlurmResult<slurm::PingResult> ping_answer = testing::pingOk();
  std::map<std::string, int> calls;

  // SlurmClient:
  slurm::SlurmResult<slurm::PingResult> ping() override {
    ++calls["ping"];
    return ping_answer;
  }
  slurm::SlurmResult<slurm::SubmitReceipt> submit(const nlohmann::json&) override {
    ++calls["submit"];
    return tl::unexpected(
        testing::slurmError(slurm::kErrRejected, slurm::TransportClass::kRejected, 400));
  }
  slurm::SlurmResult<std::vector<slurm::JobRecord>> getJob(const std::string&) override {
    ++calls["getJob"];
    return std::vector<slurm::JobRecord>{};
  }
  slurm::SlurmResult<slurm::JobListing> listJobs(std::optional<int64_t>) override {
    ++calls["listJobs"];
    return slurm::JobListing{};
  }
  slurm::SlurmResult<slurm::JobStateList> listJobStates(const std::vector<uint64_t>&) override {
    ++calls["listJobStates"];
    return slurm::JobStateList{};
  }
  slurm::SlurmStatus cancel(const std::string&, const std::optional<std::string>&) override {
    ++calls["cancel"];
    return {};
  }
  slurm::SlurmResult<std::vector<slurm::PartitionInfo>> listPartitions() override {
    ++calls["listPartitions"];
    return testing::defaultPartitions();
  }
  slurm::SlurmResult<std::vector<slurm::NodeInfo>> listNodes() override {
    ++calls["listNodes"];
    return testing::defaultNodes();
  }
};

class FakeTokens final : public slurm::TokenProvider {
 public:
  explicit FakeTokens(std::string token) : token_(std::move(token)) {}
  Result<std::string> token() override { return token_; }
  void invalidate() override {}
  std::optional<int64_t> expiresAt() override { return slurm::unverifiedExpiry(token_); }

 private:
  std::string token_;
};

class FakeHost final : public HostProbe {
 public:
  PathInfo root{true, true, ""};
  Status probe = ok();
  uint64_t fs_type = 0x6969;  // NFS
  std::map<std::string, int> calls;

  // HostProbe:
  PathInfo inspect(const std::string&) override {
    ++calls["inspect"];
    return root;
  }
  Status probeWrite(const std::string&) override {
    ++calls["probeWrite"];
    return probe;
  }
  Result<uint64_t> filesystemType(const std::string&) override {
    ++calls["filesystemType"];
    return fs_type;
  }
};

class DoctorTest : public ::testing::Test {
 protected:
  DoctorTest()
      : token_(jwt::mintHs256({"tpuser", kNowMs / 1000, kNowMs / 1000 + 86400}, "key")),
        tokens_(token_),
        clock_(kNowMs) {
    input_.site = testing::site();
    input_.site.slurm.token_file = "/etc/tp/slurm.jwt";
    input_.site.container_runtime = catalog::ContainerRuntime::kPyxis;
    artifact_ = dir_.write("image.sqsh", std::string(3 << 20, 'x'));  // three 1 MiB chunks
    catalog::RuntimeRegistry registry;
    registry.runtimes.push_back({"custom-image",
                                 catalog::ArtifactFormat::kSqsh,
                                 artifact_,
                                 *verifier_.sha256Of(artifact_),
                                 {"custom"}});
    input_.registry_path = dir_.file("runtimes.yaml");
    input_.registry = registry;
  }

  std::vector<CheckResult> run() {
    DoctorEnv env{access(), host_, users_, fs_, fresh_verifier_, clock_, progress_};
    return runDoctor(input_, env);
  }

  SlurmAccess access() {
    SlurmAccess a;
    a.client = &client_;
    a.tokens = &tokens_;
    return a;
  }

  static std::vector<std::string> names(const std::vector<CheckResult>& checks) {
    std::vector<std::string> out;
    for (const auto& c : checks) out.push_back(c.name);
    return out;
  }

  static const CheckResult& named(const std::vector<CheckResult>& checks, const std::string& n) {
    for (const auto& c : checks)
      if (c.name == n) return c;
    static const CheckResult none{"(missing)", CheckStatus::kFail, "no such check", "", {}};
    ADD_FAILURE() << "no check " << n;
    return none;
  }

  tuneplane::testing::TempDir dir_;
  std::string token_;
  FakeTokens tokens_;
  FakeSlurmClient client_;
  FakeHost host_;
  // TunePlane runs as tpuser, the site's slurm.user.
  staging::testing::FakeOsUsers users_ = std::move(staging::testing::FakeOsUsers()
                                                       .user("root", 0, 0)
                                                       .user("tpuser", 1001, 1001)
                                                       .process(1001, {1001}));
  staging::PosixStagingFs fs_;
  FakeClock clock_;
  catalog::ArtifactVerifier verifier_;        // computes the registry's digest
  catalog::ArtifactVerifier fresh_verifier_;  // the one doctor uses: nothing cached
  std::string artifact_;
  ArtifactProgress progress_;
  DoctorInput input_;
};

TEST_F(DoctorTest, EveryCheckInItsOrderAndAllPassOnAHealthySite) {
  const auto checks = run();
  EXPECT_EQ(names(checks), (std::vector<std::string>{
                               "slurmrestd", "slurmctld", "api_version", "token", "partition/gpu",
                               "partition/cpu", "gpu_series/h100", "staging/root", "staging/user",
                               "staging/filesystem", "registry", "artifact/custom-image"}));
  for (const auto& c : checks) {
    EXPECT_EQ(c.status, CheckStatus::kOk) << c.name << ": " << c.message << " / " << c.fix;
  }
  EXPECT_TRUE(passed(checks, /*strict=*/true));
  EXPECT_TRUE(contains(named(checks, "token").message, "valid for 1d"))
      << named(checks, "token").message;
  // Doctor reads; it never submits, cancels or lists jobs.
  EXPECT_EQ(client_.calls,
            (std::map<std::string, int>{{"ping", 1}, {"listPartitions", 1}, {"listNodes", 1}}));
  EXPECT_EQ(host_.calls["probeWrite"], 1);
}

TEST_F(DoctorTest, TheTokenNeverReachesTheReport) {
  client_.ping_answer = tl::unexpected(
      testing::slurmError(slurm::kErrAuthFailed, slurm::TransportClass::kRejected, 511, "refused"));
  const auto checks = run();
  const std::string json = reportToJson("site.yaml", checks, false).dump();
  const std::string text = reportToText("site.yaml", checks, false);
  const std::string signature = token_.substr(token_.rfind('.') + 1);
  for (const std::string& part : {token_, signature}) {
    EXPECT_EQ(json.find(part), std::string::npos);
    EXPECT_EQ(text.find(part), std::string::npos);
  }
  EXPECT_EQ(named(checks, "token").status, CheckStatus::kFail);
}

TEST_F(DoctorTest, ARefusedTokenIsNotRepeatedForPartitionsAndNodes) {
  client_.ping_answer = tl::unexpected(
      testing::slurmError(slurm::kErrAuthFailed, slurm::TransportClass::kRejected, 511, "refused"));
  const auto checks = run();
  EXPECT_EQ(client_.calls, (std::map<std::string, int>{{"ping", 1}}));
  EXPECT_EQ(named(checks, "partition/gpu").status, CheckStatus::kSkip);
  EXPECT_EQ(named(checks, "gpu_series/h100").status, CheckStatus::kSkip);
  // The staging and artifact checks do not depend on Slurm and still run.
  EXPECT_EQ(named(checks, "staging/root").status, CheckStatus::kOk);
  EXPECT_EQ(named(checks, "artifact/custom-image").status, CheckStatus::kOk);
  EXPECT_FALSE(passed(checks, false));
}

TEST_F(DoctorTest, NoTokenSourceMeansSlurmrestdIsNotAsked) {
  DoctorEnv env{
      SlurmAccess{nullptr, nullptr,
                  Error{"slurm.config", "slurm.jwt_key_file", "cannot read the key"}, std::nullopt},
      host_,
      users_,
      fs_,
      fresh_verifier_,
      clock_,
      progress_};
  const auto checks = runDoctor(input_, env);
  EXPECT_TRUE(client_.calls.empty());
  EXPECT_EQ(named(checks, "slurmrestd").status, CheckStatus::kSkip);
  EXPECT_EQ(named(checks, "token").status, CheckStatus::kFail);
  EXPECT_TRUE(contains(named(checks, "token").message, "cannot read the key"));
}

TEST_F(DoctorTest, AMissingStagingRootIsNotProbed) {
  host_.root = {};
  const auto checks = run();
  EXPECT_EQ(host_.calls["probeWrite"], 0);
  EXPECT_EQ(host_.calls["filesystemType"], 0);
  EXPECT_EQ(named(checks, "staging/root").status, CheckStatus::kFail);
  EXPECT_EQ(named(checks, "staging/filesystem").status, CheckStatus::kSkip);
}

TEST_F(DoctorTest, ArtifactsReportProgressAndATamperedOneNamesItsDigest) {
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  progress_ = [&](const std::string& id, uint64_t done, uint64_t total) {
    EXPECT_EQ(id, "custom-image");
    seen.emplace_back(done, total);
  };
  auto checks = run();
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen.back(), std::make_pair(uint64_t{3} << 20, uint64_t{3} << 20));
  EXPECT_EQ(named(checks, "artifact/custom-image").status, CheckStatus::kOk);

  dir_.write("image.sqsh", std::string(3 << 20, 'y'));
  checks = run();
  const CheckResult& tampered = named(checks, "artifact/custom-image");
  EXPECT_EQ(tampered.status, CheckStatus::kFail);
  EXPECT_TRUE(contains(tampered.message, "artifact.sha256_mismatch")) << tampered.message;
  const std::string actual = *verifier_.sha256Of(artifact_);
  EXPECT_EQ(tampered.details["actual_sha256"], actual);
  EXPECT_TRUE(contains(tampered.fix, actual)) << tampered.fix;
}

TEST_F(DoctorTest, ABrokenRegistryIsAFindingNotAStop) {
  input_.registry = failAll({Error{"registry.parse_error", "", "not YAML"}});
  const auto checks = run();
  EXPECT_EQ(named(checks, "registry").status, CheckStatus::kFail);
  EXPECT_EQ(checks.back().name, "registry");  // no artifact checks without a registry
  EXPECT_EQ(named(checks, "slurmrestd").status, CheckStatus::kOk);
}

// staging/user asks staging's rule (staging::decideJobAccess) with the site's staging.group:
// root staging for tpuser fails without a group (the default rule of issue 11), fails with a
// group this host does not have, and passes through one that holds tpuser.
TEST_F(DoctorTest, StagingUserAsksStagingsRuleWithTheSiteFilesGroup) {
  users_.process(0, {0});
  auto checks = run();
  EXPECT_EQ(named(checks, "staging/user").status, CheckStatus::kFail);
  EXPECT_EQ(named(checks, "staging/user").details["code"], "staging.job_user_mismatch");
  EXPECT_TRUE(contains(named(checks, "staging/root").message, "root (uid 0) created"))
      << named(checks, "staging/root").message;

  input_.site.staging.group = "tpstage";
  checks = run();
  EXPECT_EQ(named(checks, "staging/user").status, CheckStatus::kFail);  // no such group here
  EXPECT_TRUE(contains(named(checks, "staging/user").message, "'tpstage' is not a group"))
      << named(checks, "staging/user").message;

  users_.group("tpstage", 1001);  // tpuser's primary group
  checks = run();
  const CheckResult& user = named(checks, "staging/user");
  EXPECT_EQ(user.status, CheckStatus::kOk) << user.message << " / " << user.fix;
  EXPECT_TRUE(contains(user.message, "staging.group 'tpstage'")) << user.message;
  EXPECT_EQ(user.details["mode"], "shared_group");
  EXPECT_EQ(user.details["writable_dir_mode"], "2775");
}

TEST(StagingGroupTest, TheGroupComesFromTheSiteFile) {
  catalog::SiteConfig site = testing::site();
  EXPECT_EQ(stagingGroupOf(site), std::nullopt);
  site.staging.group = "tpstage";
  EXPECT_EQ(stagingGroupOf(site), "tpstage");
}

}  // namespace
}  // namespace tuneplane::doctor
