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

constexpr uint64_t kLocalDiskType = 0xEF53;
constexpr uint64_t kNfsType = 0x6969;

// The host: the staging root (/shared/attempts, NFS) as `root` says, and every other file as
// `files` says — by default tpuser's alone (0600) on a local disk, device 2 under /shared/
// (the staging filesystem) and 1 elsewhere. `fs_types` answers statfs by path (the seam that
// puts a file on "NFS" without one); `fs_type` answers for the rest.
class FakeHost final : public HostProbe {
 public:
  PathInfo root{true, true, ""};
  Status probe = ok();
  uint64_t fs_type = kNfsType;
  std::map<std::string, uint64_t> fs_types;
  std::map<std::string, FileInfo> files;
  std::string host_name = "tp-host";
  std::map<std::string, int> calls;
  std::map<std::string, int> statfs_calls;  // by path

  // HostProbe:
  PathInfo inspect(const std::string&) override {
    ++calls["inspect"];
    return root;
  }
  Status probeWrite(const std::string&) override {
    ++calls["probeWrite"];
    return probe;
  }
  Result<uint64_t> filesystemType(const std::string& path) override {
    ++calls["filesystemType"];
    ++statfs_calls[path];
    if (auto it = fs_types.find(path); it != fs_types.end()) return it->second;
    return fs_type;
  }
  FileInfo fileInfo(const std::string& path) override {
    ++calls["fileInfo"];
    if (auto it = files.find(path); it != files.end()) return it->second;
    if (path == "/shared/attempts" && !root.exists) return FileInfo{};  // as inspect() says
    const uint64_t device = path.rfind("/shared/", 0) == 0 ? 2 : 1;
    return FileInfo{true, "", path, 1001, 1001, 0600, device};
  }
  std::string hostName() override { return host_name; }
};

class DoctorTest : public ::testing::Test {
 protected:
  DoctorTest()
      : token_(jwt::mintHs256({"tpuser", kNowMs / 1000, kNowMs / 1000 + 86400}, "key")),
        tokens_(token_),
        clock_(kNowMs) {
    input_.site = testing::site();
    input_.site.slurm.token_file = "/etc/tp/slurm.jwt";
    host_.fs_types["/etc/tp/slurm.jwt"] = kLocalDiskType;
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
                               "slurmrestd", "slurmctld", "api_version", "token",
                               "credential/slurm.token_file", "slurm/identity", "partition/gpu",
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
  DoctorEnv env{SlurmAccess{nullptr, nullptr,
                            Error{"slurm.config", "slurm.jwt_key_file", "cannot read the key"},
                            std::nullopt, nullptr, nullptr, std::nullopt},
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
  EXPECT_EQ(host_.statfs_calls["/shared/attempts"], 0);
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

// The credential files as the gathering layer finds them, through the host seam: one case per
// exposure, each failing its own check only, with the fix in the message's check.
class DoctorCredentialTest : public DoctorTest {
 protected:
  // The checks that are not ok, by name.
  std::vector<std::string> notOk() {
    std::vector<std::string> out;
    for (const auto& c : run()) {
      if (c.status != CheckStatus::kOk) out.push_back(c.name);
    }
    return out;
  }
  const CheckResult credential(const std::string& field) {
    const auto checks = run();
    return named(checks, "credential/" + field);
  }
};

TEST_F(DoctorCredentialTest, AKeyOnTheStagingFilesystemFails) {
  input_.site.slurm.token_file.reset();
  input_.site.slurm.jwt_key_file = "/shared/secrets/jwt.key";  // device 2: the staging root's
  host_.fs_type = 0x65735546;  // FUSE: the staging filesystem is not known to be local
  host_.fs_types["/shared/attempts"] = 0x65735546;
  EXPECT_EQ(notOk(),
            (std::vector<std::string>{"credential/slurm.jwt_key_file", "staging/filesystem"}));
  const CheckResult c = credential("slurm.jwt_key_file");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_TRUE(contains(c.message, "on the staging filesystem")) << c.message;
  EXPECT_TRUE(contains(c.message, "mints a token for any Slurm user")) << c.message;
  EXPECT_TRUE(contains(c.fix, "install -m 0600 -o tpuser")) << c.fix;
}

TEST_F(DoctorCredentialTest, AKeyUnderAMountSourceFails) {
  input_.site.slurm.token_file.reset();
  input_.site.slurm.jwt_key_file = "/data/sets/.keys/jwt.key";
  host_.fs_types["/data/sets/.keys/jwt.key"] = kLocalDiskType;
  input_.site.mounts.push_back({"/data/sets", "/datasets", true});
  EXPECT_EQ(notOk(), (std::vector<std::string>{"credential/slurm.jwt_key_file"}));
  const CheckResult c = credential("slurm.jwt_key_file");
  EXPECT_TRUE(contains(c.message, "under mounts[0].source (/data/sets)")) << c.message;
  EXPECT_TRUE(contains(c.fix, "point slurm.jwt_key_file there")) << c.fix;
}

TEST_F(DoctorCredentialTest, AGroupOrWorldReadableTokenFails) {
  for (const uint32_t mode : {0640u, 0604u}) {
    host_.files["/etc/tp/slurm.jwt"] = FileInfo{true, "", "/etc/tp/slurm.jwt", 1001, 1001, mode, 1};
    EXPECT_EQ(notOk(), (std::vector<std::string>{"credential/slurm.token_file"})) << mode;
    const CheckResult c = credential("slurm.token_file");
    EXPECT_TRUE(contains(c.message, "gives its group or others access")) << c.message;
    EXPECT_TRUE(contains(c.fix, "chmod 0600 /etc/tp/slurm.jwt")) << c.fix;
  }
}

TEST_F(DoctorCredentialTest, ATokenOnAnNfsLikeFilesystemFailsByItsStatfsType) {
  for (const uint64_t type : {kNfsType, uint64_t{0x47504653} /* gpfs */}) {
    host_.fs_types["/etc/tp/slurm.jwt"] = type;
    EXPECT_EQ(notOk(), (std::vector<std::string>{"credential/slurm.token_file"})) << type;
    const CheckResult c = credential("slurm.token_file");
    EXPECT_TRUE(contains(c.message, "on a network filesystem")) << c.message;
    EXPECT_TRUE(contains(c.fix, "local filesystem of serve's host")) << c.fix;
  }
}

TEST_F(DoctorCredentialTest, ASigningKeyOnAHostThatIsANodeFails) {
  input_.site.slurm.token_file.reset();
  input_.site.slurm.jwt_key_file = "/etc/tp/jwt.key";
  host_.fs_types["/etc/tp/jwt.key"] = kLocalDiskType;
  EXPECT_TRUE(notOk().empty());
  host_.host_name = "cpu1";  // the fake cluster's CPU node
  const CheckResult c = credential("slurm.jwt_key_file");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_TRUE(contains(c.message, "this host is also compute node cpu1")) << c.message;
}

TEST_F(DoctorCredentialTest, AcceptedExposuresWarnAndTheServerSecretsAreCheckedToo) {
  input_.server_secrets = {{"server.tls.key", "/etc/tp/tls.key"}};
  host_.fs_types["/etc/tp/tls.key"] = kLocalDiskType;
  host_.files["/etc/tp/tls.key"] = FileInfo{true, "", "/etc/tp/tls.key", 0, 0, 0644, 1};
  EXPECT_EQ(notOk(), (std::vector<std::string>{"credential/server.tls.key"}));
  const CheckResult refused = credential("server.tls.key");
  EXPECT_TRUE(contains(refused.fix, "chown tpuser /etc/tp/tls.key")) << refused.fix;
  input_.site.slurm.accept_exposed_credentials = true;
  const auto checks = run();
  EXPECT_EQ(named(checks, "credential/server.tls.key").status, CheckStatus::kWarn);
  EXPECT_TRUE(passed(checks, /*strict=*/false));
  EXPECT_FALSE(passed(checks, /*strict=*/true));
}

TEST(StagingGroupTest, TheGroupComesFromTheSiteFile) {
  catalog::SiteConfig site = testing::site();
  EXPECT_EQ(stagingGroupOf(site), std::nullopt);
  site.staging.group = "tpstage";
  EXPECT_EQ(stagingGroupOf(site), "tpstage");
}

}  // namespace
}  // namespace tuneplane::doctor
