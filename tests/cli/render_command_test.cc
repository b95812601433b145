// `tuneplane render` through the built binary: the script parses with bash -n, the request
// is a submit body (job / jobs), pinned identities are honoured, and nothing is staged.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli_fixture.h"

namespace tuneplane::cli {
namespace {

using testing::CliFixture;
using testing::cpuSpec;
using testing::heteroSpec;

constexpr const char* kJobId = "hello-0a1b2c3d";
constexpr const char* kToken = "tp-00112233445566778899aabbccddeeff";

class RenderCommandTest : public CliFixture {
 protected:
  bool stagingIsEmpty() const { return std::filesystem::is_empty(dir_ + "/staging"); }
};

TEST_F(RenderCommandTest, ScriptIsPrintedByDefaultAndParsesWithBash) {
  auto r = run({"render", "-f", spec("job.yaml", cpuSpec()), "--site", site()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("#!")) << r.out.substr(0, 80);
  EXPECT_TRUE(bashParses(r.out)) << testing::readFile(dir_ + "/.bash-n.err");
  EXPECT_NE(r.out.find(artifact_sha_), std::string::npos) << "the node re-checks the artifact";
  EXPECT_TRUE(stagingIsEmpty()) << "render must not stage";
}

TEST_F(RenderCommandTest, HeterogeneousScriptParsesWithBash) {
  auto r = run({"render", "-f", spec("job.yaml", heteroSpec()), "--site", site()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(bashParses(r.out)) << testing::readFile(dir_ + "/.bash-n.err");
}

// The config a llamafactory job stages, as LlamaFactory will read it; a custom job has none.
TEST_F(RenderCommandTest, ConfigIsWhatALlamaFactoryJobStages) {
  auto r = run({"render", "-f", spec("job.yaml", heteroSpec()), "--site", site(), "--what",
                "config", "--job-id", kJobId});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& line :
       {std::string("model_name_or_path: /models/Qwen2.5-7B\n"), std::string("stage: sft\n"),
        "output_dir: " + dir_ + "/staging/jobs/" + kJobId + "/checkpoints\n",
        std::string("overwrite_output_dir: false\n"), std::string("ray_num_workers: 18\n")}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  EXPECT_TRUE(stagingIsEmpty());
  auto none =
      run({"render", "-f", spec("cpu.yaml", cpuSpec()), "--site", site(), "--what", "config"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("[cli.no_config]"), std::string::npos) << none.err;
}

TEST_F(RenderCommandTest, RequestIsASingleJobSubmitBody) {
  auto r = run({"render", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--what", "request",
                "--job-id", kJobId, "--submit-token", kToken, "--attempt", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto body = nlohmann::json::parse(r.out);
  ASSERT_TRUE(body.contains("job")) << r.out;
  EXPECT_FALSE(body.contains("jobs"));
  EXPECT_TRUE(body["script"].get<std::string>().starts_with("#!"));
  EXPECT_EQ(body["job"]["current_working_directory"],
            dir_ + "/staging/jobs/" + kJobId + "/attempts/3");
  EXPECT_NE(body["job"]["comment"].get<std::string>().find(kToken), std::string::npos)
      << body["job"]["comment"];
  EXPECT_TRUE(stagingIsEmpty());
}

TEST_F(RenderCommandTest, WithoutATimeLimitNoneIsSentAndThePartitionDecides) {
  std::string no_limit = cpuSpec();
  no_limit.erase(no_limit.find("    time_limit: 10m\n"),
                 std::string("    time_limit: 10m\n").size());
  const std::string job = spec("job.yaml", no_limit);
  auto request = run({"render", "-f", job, "--site", site(), "--what", "request"});
  ASSERT_EQ(request.exit_code, 0) << request.err;
  const auto body = nlohmann::json::parse(request.out);
  EXPECT_FALSE(body["job"].contains("time_limit")) << body["job"].dump();
  auto script = run({"render", "-f", job, "--site", site()});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  EXPECT_EQ(script.out.find("--time"), script.out.find("--time: the partition's default"))
      << "only the note that no --time is sent";
  EXPECT_NE(script.out.find("# (no --time: the partition's default time limit applies)"),
            std::string::npos);

  // The site's default_time_limit fills in.
  testing::writeFile(dir_ + "/site-default.yaml",
                     siteYaml("runtimes.yaml") + "default_time_limit: 1h30m\n");
  auto with_default =
      run({"render", "-f", job, "--site", dir_ + "/site-default.yaml", "--what", "request"});
  ASSERT_EQ(with_default.exit_code, 0) << with_default.err;
  EXPECT_EQ(nlohmann::json::parse(with_default.out)["job"]["time_limit"],
            nlohmann::json({{"set", true}, {"infinite", false}, {"number", 90}}));
}

TEST_F(RenderCommandTest, RequestForTwoPoolsIsAHeterogeneousBody) {
  auto r =
      run({"render", "-f", spec("job.yaml", heteroSpec()), "--site", site(), "--what", "request"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto body = nlohmann::json::parse(r.out);
  ASSERT_TRUE(body.contains("jobs")) << r.out;
  EXPECT_FALSE(body.contains("job"));
  ASSERT_EQ(body["jobs"].size(), 2u);
  EXPECT_EQ(body["jobs"][0]["constraints"], "h100");
}

TEST_F(RenderCommandTest, AttemptDirOptionIsUsed) {
  const std::string attempt_dir = dir_ + "/elsewhere/attempt-7";
  auto r = run({"render", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--what", "request",
                "--attempt-dir", attempt_dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["job"]["current_working_directory"], attempt_dir);
}

TEST_F(RenderCommandTest, FreshIdentitiesDifferBetweenRuns) {
  const std::string job = spec("job.yaml", cpuSpec());
  auto a = run({"render", "-f", job, "--site", site(), "--what", "request"});
  auto b = run({"render", "-f", job, "--site", site(), "--what", "request"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(nlohmann::json::parse(a.out)["job"]["comment"],
            nlohmann::json::parse(b.out)["job"]["comment"]);
}

TEST_F(RenderCommandTest, PinnedIdentityRendersTheSameBytes) {
  const std::string job = spec("job.yaml", cpuSpec());
  const std::vector<std::string> args = {
      "render", "-f", job, "--site", site(), "--job-id", kJobId, "--submit-token", kToken};
  auto a = run(args);
  auto b = run(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST_F(RenderCommandTest, RefusalExitsTwoWithTheErrorsOnStderr) {
  auto r = run({"render", "-f", spec("job.yaml", cpuSpec("custom-tampered")), "--site", site()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "") << "nothing may be rendered for a refused spec";
  EXPECT_NE(r.err.find("[artifact.sha256_mismatch]"), std::string::npos) << r.err;
}

TEST_F(RenderCommandTest, BadIdentityOptionsAreRefusedTogether) {
  auto r = run({"render", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--job-id",
                "../../etc-0a1b2c3d", "--submit-token", "tp-'; rm -rf /", "--attempt-dir",
                "/tmp/../etc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("[cli.invalid_job_id]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[cli.invalid_submit_token]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[cli.invalid_attempt_dir]"), std::string::npos) << r.err;
}

TEST_F(RenderCommandTest, BadAttemptAndWhatExitTwo) {
  const std::string job = spec("job.yaml", cpuSpec());
  for (const char* attempt : {"0", "-1", "two", "1x"}) {
    auto r = run({"render", "-f", job, "--site", site(), "--attempt", attempt});
    EXPECT_EQ(r.exit_code, 2) << attempt;
    EXPECT_NE(r.err.find("[cli.invalid_attempt]"), std::string::npos) << attempt << r.err;
  }
  auto what = run({"render", "-f", job, "--site", site(), "--what", "yaml"});
  EXPECT_EQ(what.exit_code, 2);
  EXPECT_NE(what.err.find("[cli.invalid_what]"), std::string::npos) << what.err;
}

TEST_F(RenderCommandTest, NoSiteAnywhereExitsTwoWithAClearMessage) {
  auto r = run({"render", "-f", spec("job.yaml", cpuSpec())});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("TUNEPLANE_SITE_FILE"), std::string::npos) << r.err;
}

TEST_F(RenderCommandTest, TheTokenNeverReachesTheOutput) {
  for (const char* what : {"script", "request"}) {
    auto r = run({"render", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--what", what});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find(testing::kSentinelToken), std::string::npos) << what;
  }
}

class HelpTest : public CliFixture, public ::testing::WithParamInterface<const char*> {};

TEST_P(HelpTest, HelpSaysWhatTheCommandDoesAndListsItsOptions) {
  const std::string command = GetParam();
  std::vector<std::string> args;
  if (!command.empty()) args.push_back(command);
  args.push_back("--help");
  auto r = run(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
  if (command == "validate" || command == "render") {
    EXPECT_NE(r.out.find("-f,--file"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--site"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Exit codes"), std::string::npos) << r.out;
  }
  if (command == "render") {
    for (const char* option :
         {"--what", "--attempt-dir", "--job-id", "--attempt", "--submit-token"}) {
      EXPECT_NE(r.out.find(option), std::string::npos) << option;
    }
  }
  if (command == "validate") {
    EXPECT_NE(r.out.find("--output"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Commands, HelpTest, ::testing::Values("", "validate", "render", "slurm"));

TEST_F(RenderCommandTest, AJobUserWhoCouldNotWriteTheAttemptIsOnlyAWarning) {
  const std::string text = testing::readFile(site());
  const std::string from = "user: " + testing::currentUser();
  std::string other = text;
  other.replace(other.find(from), from.size(), "user: " + testing::anotherUser());
  testing::writeFile(site(), other);
  auto r = run({"render", "-f", spec("job.yaml", cpuSpec()), "--site", site()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("#!"));
  EXPECT_TRUE(r.err.starts_with("warning: `tuneplane slurm submit` from this host would refuse"))
      << r.err;
  EXPECT_NE(r.err.find("[staging.job_user_mismatch]"), std::string::npos) << r.err;
  EXPECT_TRUE(stagingIsEmpty());
}

}  // namespace
}  // namespace tuneplane::cli
