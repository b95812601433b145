// The launch pipeline in-process: site context from flag or environment, prepare (from a
// file or from text) with an injected random source, and stage — whose files never contain
// the site's token.
#include "pipeline/launch_pipeline.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../staging/fake_os_users.h"
#include "catalog/artifact_verifier.h"
#include "launch/attempt_identity.h"
#include "site_fixture.h"
#include "staging/staging_paths.h"

namespace tuneplane::pipeline {
namespace {

using testing::cpuSpec;

class ZeroRandomSource final : public launch::RandomSource {
 public:
  Status fill(std::span<std::uint8_t> out) override {
    for (auto& b : out) b = 0xab;
    return ok();
  }
};

class LaunchPipelineTest : public ::testing::Test {
 protected:
  std::string site() const { return site_.site(); }
  SiteContext context() const { return site_.context(); }
  std::string spec(const std::string& name, const std::string& text) const {
    return site_.specFile(name, text);
  }

  testing::SiteDir site_{"http://127.0.0.1:9", /*use_token_file=*/true};
  const std::string dir_ = site_.dir();
  catalog::ArtifactVerifier verifier_;
  ZeroRandomSource random_;
};

TEST_F(LaunchPipelineTest, SiteContextFromFlagOrEnvironment) {
  auto from_env = loadSiteContext(std::nullopt, SiteEnvironment{site(), std::nullopt});
  ASSERT_TRUE(from_env) << from_env.error().front().describe();
  EXPECT_EQ(from_env->site_path, site());
  EXPECT_NE(from_env->registry.find("custom-demo"), nullptr);

  auto none = loadSiteContext(std::nullopt, SiteEnvironment{});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().front().code, "cli.no_site");
  auto empty = loadSiteContext(std::string(), SiteEnvironment{std::string(), std::nullopt});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().front().code, "cli.no_site");
}

// slurm.api_version: the catalog checks its form, the slurm module which versions exist
// (slurm/slurm_api.h: one folder per version); a site file is held to both as it loads.
TEST_F(LaunchPipelineTest, ASiteFileNamesARestApiVersionTunePlaneSpeaks) {
  EXPECT_EQ(context().site.slurm.api_version, "auto");  // the default
  for (const char* version : {"auto", "v0.0.44", "v0.0.45"}) {
    testing::SiteDir named{"http://127.0.0.1:9", true};
    named.addSlurmYaml(std::string("  api_version: ") + version + "\n");
    auto loaded = loadSiteFile(named.site(), SiteEnvironment{});
    ASSERT_TRUE(loaded) << version << ": " << loaded.error().front().describe();
    EXPECT_EQ(loaded->site.slurm.api_version, version);
  }
  testing::SiteDir older{"http://127.0.0.1:9", true};
  older.addSlurmYaml("  api_version: v0.0.43\n");
  auto refused = loadSiteFile(older.site(), SiteEnvironment{});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().front().code, "site.unsupported_api_version");
  EXPECT_EQ(refused.error().front().field, "slurm.api_version");
  EXPECT_NE(refused.error().front().message.find("v0.0.44, v0.0.45"), std::string::npos)
      << refused.error().front().message;
}

TEST_F(LaunchPipelineTest, PrepareBuildsIdentityAttemptDirScriptAndBody) {
  auto prepared =
      prepare(spec("job.yaml", cpuSpec()), context(), PrepareOptions{}, verifier_, random_);
  ASSERT_TRUE(prepared) << prepared.error().front().describe();
  const auto& request = prepared->request;
  EXPECT_EQ(request.identity.job_id, "hello-abababab");
  std::string token = "tp-";
  for (int i = 0; i < 16; ++i) token += "ab";
  EXPECT_EQ(request.identity.submit_token, token);
  EXPECT_EQ(request.identity.attempt, 1);
  EXPECT_EQ(request.attempt_dir, dir_ + "/staging/jobs/hello-abababab/attempts/1");
  EXPECT_TRUE(prepared->script.starts_with("#!"));
  EXPECT_TRUE(prepared->submit_body.contains("job"));
  EXPECT_EQ(prepared->submit_body["script"], prepared->script);
}

TEST_F(LaunchPipelineTest, PrepareTextGivesWhatPrepareOfTheSameFileGives) {
  const std::string text = cpuSpec();
  auto from_file = prepare(spec("job.yaml", text), context(), PrepareOptions{}, verifier_, random_);
  auto from_text = prepareText(text, context(), PrepareOptions{}, verifier_, random_);
  ASSERT_TRUE(from_file) << from_file.error().front().describe();
  ASSERT_TRUE(from_text) << from_text.error().front().describe();
  EXPECT_EQ(from_text->request.identity, from_file->request.identity);
  EXPECT_EQ(from_text->request.components, from_file->request.components);
  EXPECT_EQ(from_text->script, from_file->script);
  EXPECT_EQ(from_text->submit_body, from_file->submit_body);

  auto bad = prepareText("kind: [", context(), PrepareOptions{}, verifier_, random_);
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().front().code.starts_with("spec.")) << bad.error().front().code;
}

TEST_F(LaunchPipelineTest, StageWritesTheAttemptAndNeverTheToken) {
  PrepareOptions options;
  options.attempt = 2;
  auto prepared = prepare(spec("job.yaml", cpuSpec()), context(), options, verifier_, random_);
  ASSERT_TRUE(prepared) << prepared.error().front().describe();
  auto access = checkJobAccess(context());
  ASSERT_TRUE(access) << access.error().describe();
  auto staged = stage(*prepared, *access);
  ASSERT_TRUE(staged) << staged.error().describe();
  EXPECT_EQ(staged->dir, dir_ + "/staging/jobs/hello-abababab/attempts/2");

  int scanned = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_ + "/staging")) {
    if (!entry.is_regular_file()) continue;
    ++scanned;
    const std::string content = testing::readFile(entry.path());
    EXPECT_EQ(content.find(testing::kSentinelToken), std::string::npos) << entry.path();
    EXPECT_EQ(content.find("token.jwt"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(scanned, 5);  // the four staged files and the job fence's mark of attempt 2
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/staging/jobs/hello-abababab/fence/2"));
  EXPECT_EQ(testing::readFile(staging::attemptFile(staged->dir, staging::kScriptFile)),
            prepared->script);

  // Same attempt again: refused, the staged one untouched.
  auto again = stage(*prepared, *access);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, "staging.attempt_exists");
}

TEST_F(LaunchPipelineTest, OptionSpecAndRuleErrorsAreReportedTogetherInOrder) {
  PrepareOptions options;
  options.attempt = 0;
  options.job_id = "x";
  // Options first, then the structural errors, then the backend's rules.
  auto prepared = prepare(
      spec("bad.yaml", cpuSpec("echo hi", "", "hello", "        colour: blue\n", "custom-nope")),
      context(), options, verifier_, random_);
  ASSERT_FALSE(prepared);
  std::vector<std::string> codes;
  for (const auto& e : prepared.error()) codes.push_back(e.code);
  EXPECT_EQ(codes, (std::vector<std::string>{"cli.invalid_attempt", "cli.invalid_job_id",
                                             "spec.unknown_field", "launch.unknown_runtime"}));
}

TEST_F(LaunchPipelineTest, RuleErrorsDoNotWaitForTheArtifact) {
  // The artifact check may read gigabytes: it runs only once the spec passes every rule.
  auto prepared = prepare(spec("bad.yaml", cpuSpec("echo hi", "", "hello",
                                                   "        scratch_gb: 5\n", "custom-tampered")),
                          context(), PrepareOptions{}, verifier_, random_);
  ASSERT_FALSE(prepared);
  ASSERT_EQ(prepared.error().size(), 1u);
  EXPECT_EQ(prepared.error()[0].code, "launch.cpu_only_scratch");
  EXPECT_EQ(verifier_.fullReads(), 0);
}

TEST_F(LaunchPipelineTest, JobAccessChecksTheUsersAndTheWayToTheStagingRoot) {
  // The fixture's temp dir is 0700: fine for the same user, closed to a job user who only
  // shares a group with TunePlane.
  staging::testing::FakeOsUsers users;
  users.user("root", 0, 0).user("tpuser", 4242, 4242, {777}).group("jobs", 777).process(0, {0});
  SiteContext site = context();
  site.site.slurm.user = "tpuser";
  staging::PosixStagingFs fs;

  auto mismatch = checkJobAccess(site, users, fs);
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().code, "staging.job_user_mismatch");

  site.site.staging.group = "jobs";
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  auto closed = checkJobAccess(site, users, fs);
  ASSERT_FALSE(closed);
  EXPECT_EQ(closed.error().code, "staging.not_traversable");
  EXPECT_NE(closed.error().message.find("'" + dir_ + "'"), std::string::npos);

  ASSERT_EQ(::chmod(dir_.c_str(), 0711), 0);
  auto open = checkJobAccess(site, users, fs);
  ASSERT_TRUE(open) << open.error().describe();
  EXPECT_EQ(open->mode, staging::JobAccessMode::kSharedGroup);
}

}  // namespace
}  // namespace tuneplane::pipeline
