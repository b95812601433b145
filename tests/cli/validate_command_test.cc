// `tuneplane validate` through the built binary: exit codes, summary, errors as lines and
// as JSON, and the clear messages for missing files and a missing site.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

#include "cli_fixture.h"

namespace tuneplane::cli {
namespace {

using testing::CliFixture;
using testing::cpuSpec;
using testing::heteroSpec;
using testing::RunResult;

class ValidateCommandTest : public CliFixture {
 protected:
  // The codes in a --output json failure, after checking the document's shape.
  std::set<std::string> jsonCodes(const RunResult& r) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    auto doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out;
    if (doc.is_discarded()) return {};
    EXPECT_TRUE(doc.contains("code") && doc.contains("field") && doc.contains("message")) << r.out;
    EXPECT_TRUE(doc["errors"].is_array() && !doc["errors"].empty()) << r.out;
    if (!doc["errors"].is_array() || doc["errors"].empty()) return {};
    EXPECT_EQ(doc["code"], doc["errors"][0]["code"]);
    std::set<std::string> codes;
    for (const auto& e : doc["errors"]) codes.insert(e["code"].get<std::string>());
    return codes;
  }
};

TEST_F(ValidateCommandTest, ValidSpecExitsZeroAndPrintsASummary) {
  auto r = run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("valid: hello (custom/custom)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("component 0: pool main"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("partition cpu"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(ValidateCommandTest, ValidSpecAsJson) {
  auto r =
      run({"validate", "-f", spec("job.yaml", heteroSpec()), "--site", site(), "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["valid"], true);
  EXPECT_EQ(doc["job_name"], "sft-run");
  EXPECT_EQ(doc["framework"], "llamafactory/sft");
  ASSERT_EQ(doc["components"].size(), 2u);
  EXPECT_EQ(doc["components"][0]["pool"], "trainers");
  EXPECT_EQ(doc["components"][0]["constraint"], "h100");
  EXPECT_EQ(doc["components"][1]["gpus_per_node"], 2);
  EXPECT_EQ(doc["artifact"]["sha256"], artifact_sha_);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

struct InvalidCase {
  const char* name;
  std::string spec;
  const char* code;
};

TEST_F(ValidateCommandTest, EachInvalidSpecExitsTwoWithItsCode) {
  const std::vector<InvalidCase> cases = {
      {"unknown_field", cpuSpec("custom-demo", "        colour: blue\n"), "spec.unknown_field"},
      {"parse_error", "apiVersion: [unclosed\n", "spec.parse_error"},
      {"volumes", cpuSpec("custom-demo", "", "  data:\n    volumes:\n      - name: ds\n"),
       "launch.volumes_not_supported"},
      {"multi_node_cpu", replaced(cpuSpec(), "nodes: 1", "nodes: 2"), "launch.cpu_only_multi_node"},
      {"image", replaced(cpuSpec(), "    command:", "    image: nvcr.io/x:1\n    command:"),
       "launch.image_not_supported"},
      {"playground", replaced(cpuSpec(), "kind: TrainingJob", "kind: Playground"),
       "launch.kind_not_supported"},
      {"unknown_runtime", cpuSpec("custom-nope"), "launch.unknown_runtime"},
      {"hash_mismatch", cpuSpec("custom-tampered"), "artifact.sha256_mismatch"},
      {"no_constraint", heteroSpec("unpinned"), "launch.gpu_series_without_constraint"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = run({"validate", "-f", spec(std::string(c.name) + ".yaml", c.spec), "--site", site(),
                  "--output", "json"});
    const auto codes = jsonCodes(r);
    EXPECT_TRUE(codes.count(c.code)) << "wanted " << c.code << " in " << r.out;
  }
}

TEST_F(ValidateCommandTest, TextModePrintsEveryErrorOnStderrOneALine) {
  // Two independent problems: both are reported in one run.
  auto r = run(
      {"validate", "-f",
       spec("two.yaml", cpuSpec("custom-demo", "        colour: blue\n", "  wrong_section: {}\n")),
       "--site", site()});
  ASSERT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  int lines = 0;
  for (char ch : r.err) lines += ch == '\n';
  EXPECT_GE(lines, 2) << r.err;
  EXPECT_NE(r.err.find("spec.resources.pools[0].colour: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[spec.unknown_field]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("wrong_section"), std::string::npos) << r.err;
}

TEST_F(ValidateCommandTest, JsonModeReportsAllErrors) {
  auto r = run({"validate", "-f",
                spec("two.yaml", replaced(cpuSpec("custom-demo", "        colour: blue\n"),
                                          "time_limit: 10m", "time_limit: forever")),
                "--site", site(), "--output", "json"});
  const auto codes = jsonCodes(r);
  EXPECT_TRUE(codes.count("spec.unknown_field")) << r.out;
  EXPECT_TRUE(codes.count("spec.invalid_duration")) << r.out;
}

TEST_F(ValidateCommandTest, MissingSpecFileIsNamed) {
  const std::string missing = dir_ + "/nope.yaml";
  auto r = run({"validate", "-f", missing, "--site", site()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[cli.file_unreadable]"), std::string::npos) << r.err;
}

TEST_F(ValidateCommandTest, MissingSiteFileIsNamed) {
  const std::string missing = dir_ + "/no-site.yaml";
  auto r = run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", missing});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
}

TEST_F(ValidateCommandTest, NoSiteFlagAndNoEnvironmentSaysHowToGiveOne) {
  auto r = run({"validate", "-f", spec("job.yaml", cpuSpec())});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--site"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TUNEPLANE_SITE_FILE"), std::string::npos) << r.err;
}

TEST_F(ValidateCommandTest, SiteFromTheEnvironment) {
  auto r = run({"validate", "-f", spec("job.yaml", cpuSpec())}, {{"TUNEPLANE_SITE_FILE", site()}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ValidateCommandTest, RegistryFromTheEnvironmentWinsOverTheSite) {
  // The override registry pins a different digest: the artifact no longer matches.
  const std::string other = dir_ + "/other-runtimes.yaml";
  writeRegistry(other, std::string(64, 'f'));
  auto r =
      run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--output", "json"},
          {{"TUNEPLANE_RUNTIME_REGISTRY_FILE", other}});
  EXPECT_TRUE(jsonCodes(r).count("artifact.sha256_mismatch")) << r.out;

  const std::string missing = dir_ + "/missing-runtimes.yaml";
  auto m = run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site()},
               {{"TUNEPLANE_RUNTIME_REGISTRY_FILE", missing}});
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_NE(m.err.find(missing), std::string::npos) << m.err;
}

TEST_F(ValidateCommandTest, MissingFileOptionAndBadOutputExitTwo) {
  auto no_file = run({"validate", "--site", site()});
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_NE(no_file.err.find("-f"), std::string::npos) << no_file.err;
  auto bad_output =
      run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--output", "xml"});
  EXPECT_EQ(bad_output.exit_code, 2);
  EXPECT_NE(bad_output.err.find("[cli.invalid_output]"), std::string::npos) << bad_output.err;
}

// ---- who writes the attempt (staging.group, slurm.user) ----------------------------------

class ValidateJobAccessTest : public ValidateCommandTest {
 protected:
  void setSiteUser(const std::string& user) {
    testing::writeFile(site(), replaced(testing::readFile(site()),
                                        "user: " + testing::currentUser(), "user: " + user));
  }
};

TEST_F(ValidateJobAccessTest, TheSummarySaysWhoWritesLogsAndOutput) {
  auto text = run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("logs and output: jobs run as '" + testing::currentUser() + "'"),
            std::string::npos)
      << text.out;
  auto json =
      run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--output", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["job_access"]["mode"], "same_user");
  EXPECT_EQ(doc["job_access"]["job_user"], testing::currentUser());
  EXPECT_EQ(doc["job_access"]["group"], nullptr);
}

TEST_F(ValidateJobAccessTest, ASharedGroupNamedByTheSiteIsUsed) {
  testing::writeFile(
      site(), testing::readFile(site()) + "staging:\n  group: " + testing::currentGroup() + "\n");
  auto r =
      run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["job_access"]["mode"], "shared_group");
  EXPECT_EQ(doc["job_access"]["group"], testing::currentGroup());
}

TEST_F(ValidateJobAccessTest, AnotherJobUserIsRefusedTogetherWithTheSpecErrors) {
  setSiteUser(testing::anotherUser());
  auto codes = jsonCodes(
      run({"validate", "-f", spec("bad.yaml", cpuSpec("custom-demo", "        colour: blue\n")),
           "--site", site(), "--output", "json"}));
  EXPECT_TRUE(codes.count("staging.job_user_mismatch"));
  EXPECT_TRUE(codes.count("spec.unknown_field"));

  auto text = run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site()});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.err.find("slurm.user: TunePlane runs as '" + testing::currentUser() + "'"),
            std::string::npos)
      << text.err;
  EXPECT_NE(text.err.find("staging.group"), std::string::npos) << text.err;
}

TEST_F(ValidateJobAccessTest, AJobUserUnknownToThisHostIsRefused) {
  setSiteUser("tp-no-such-user-x9");
  auto codes = jsonCodes(
      run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--output", "json"}));
  EXPECT_EQ(codes, std::set<std::string>{"staging.unknown_job_user"});
}

TEST_F(ValidateJobAccessTest, AnUnknownStagingGroupIsRefused) {
  testing::writeFile(site(), testing::readFile(site()) + "staging:\n  group: tp-no-such-group\n");
  auto codes = jsonCodes(
      run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", site(), "--output", "json"}));
  EXPECT_EQ(codes, std::set<std::string>{"staging.unknown_group"});
}

}  // namespace
}  // namespace tuneplane::cli
