// `tuneplane validate` through the built binary: exit codes, summary, errors as lines and
// as JSON, and the clear messages for missing files and a missing site.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <utility>
#include <vector>

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
  EXPECT_NE(r.out.find("time limit: 10 min (from spec.resources.time_limit)"), std::string::npos)
      << r.out;
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

TEST_F(ValidateCommandTest, SaysWhichTimeLimitAppliesAndWhereItComesFrom) {
  // The backend's documented CPU-only job: no time limit.
  const std::string without =
      spec("no-limit.yaml", replaced(cpuSpec(), "    time_limit: 10m\n", ""));
  const std::string with = spec("limit.yaml", cpuSpec());
  const std::string site_default = dir_ + "/site-default.yaml";
  testing::writeFile(site_default, siteYaml("runtimes.yaml") + "default_time_limit: 4h\n");
  struct Case {
    const char* name;
    std::string spec;
    std::string site;
    nlohmann::json minutes;
    const char* source;
    const char* text;
  };
  const std::vector<Case> cases = {
      {"spec", with, site(), 10, "spec", "time limit: 10 min (from spec.resources.time_limit)"},
      {"spec over the site default", with, site_default, 10, "spec",
       "time limit: 10 min (from spec.resources.time_limit)"},
      {"site default", without, site_default, 240, "site_default",
       "time limit: 240 min (the site's default_time_limit; the spec sets none)"},
      {"partition default", without, site(), nullptr, "partition_default",
       "time limit: the partition's default (neither the spec nor the site sets one; none is "
       "sent)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto json = run({"validate", "-f", c.spec, "--site", c.site, "--output", "json"});
    ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
    const auto doc = nlohmann::json::parse(json.out);
    EXPECT_EQ(doc["time_limit"]["minutes"], c.minutes) << json.out;
    EXPECT_EQ(doc["time_limit"]["source"], c.source) << json.out;
    EXPECT_EQ(doc["components"][0]["time_limit_minutes"], c.minutes) << json.out;
    auto text = run({"validate", "-f", c.spec, "--site", c.site});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find(c.text), std::string::npos) << text.out;
  }
}

TEST_F(ValidateCommandTest, AnInvalidSiteDefaultTimeLimitIsNamed) {
  const std::string bad_site = dir_ + "/site-bad.yaml";
  testing::writeFile(bad_site, siteYaml("runtimes.yaml") + "default_time_limit: 90\n");
  auto r = run({"validate", "-f", spec("job.yaml", cpuSpec()), "--site", bad_site});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("default_time_limit: '90' is not a positive whole number of minutes"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("[site.invalid_duration]"), std::string::npos) << r.err;
}

struct OnePassCase {
  const char* name;
  std::string spec;
  std::vector<std::pair<std::string, std::string>> expected;  // code, field; in this order
};

// Problems from different layers (options, structure, backend rules) in one spec: every
// command that prepares a launch reports all of them, once each, in the same order.
std::vector<OnePassCase> onePassCases() {
  return {
      {"Playground + missing command",
       replaced(replaced(cpuSpec(), "kind: TrainingJob", "kind: Playground"),
                "    command: [\"python3\", \"-c\", \"print('hi $(not) `cmd`')\"]\n", ""),
       {{"spec.missing_field", "spec.framework.command"}, {"launch.kind_not_supported", "kind"}}},
      {"volumes + unknown GPU series + bad nodes",
       replaced(replaced(heteroSpec("a100"), "nodes: 2", "nodes: 0"),
                "  resources:", "  data:\n    volumes: [{name: ds}]\n  resources:"),
       {{"spec.non_positive", "spec.resources.pools[0].nodes"},
        {"launch.volumes_not_supported", "spec.data.volumes[0]"},
        {"launch.unknown_gpu_series", "spec.resources.pools[1].gpu_series"}}},
      {"CPU-only multi-node + unknown runtime + wrong type",
       replaced(replaced(cpuSpec("custom-nope"), "nodes: 1", "nodes: 2"), "cpus: 2", "cpus: two"),
       {{"spec.wrong_type", "spec.resources.pools[0].cpus"},
        {"launch.unknown_runtime", "spec.framework.runtime_id"},
        {"launch.cpu_only_multi_node", "spec.resources.pools[0].nodes"}}},
  };
}

std::vector<std::pair<std::string, std::string>> jsonCodesAndFields(const std::string& out) {
  std::vector<std::pair<std::string, std::string>> got;
  const auto doc = nlohmann::json::parse(out, nullptr, false);
  if (doc.is_discarded() || !doc.contains("errors")) return got;
  for (const auto& e : doc["errors"]) got.emplace_back(e["code"], e["field"]);
  return got;
}

TEST_F(ValidateCommandTest, EveryProblemOfEveryLayerInOneRun) {
  for (const auto& c : onePassCases()) {
    SCOPED_TRACE(c.name);
    const std::string path = spec("one-pass.yaml", c.spec);
    auto r = run({"validate", "-f", path, "--site", site(), "--output", "json"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(jsonCodesAndFields(r.out), c.expected) << r.out;
    // Text mode: the same errors, one a line on stderr, in the same order.
    auto text = run({"validate", "-f", path, "--site", site()});
    EXPECT_EQ(text.exit_code, 2);
    std::size_t at = 0;
    for (const auto& [code, field] : c.expected) {
      at = text.err.find(field + ": ", at);
      ASSERT_NE(at, std::string::npos) << field << " in order in:\n" << text.err;
      EXPECT_NE(text.err.find("[" + code + "]", at), std::string::npos) << text.err;
    }
  }
}

TEST_F(ValidateCommandTest, RenderAndSlurmSubmitReportTheSameFullList) {
  for (const auto& c : onePassCases()) {
    SCOPED_TRACE(c.name);
    const std::string path = spec("one-pass.yaml", c.spec);
    auto submit = run({"slurm", "submit", "-f", path, "--site", site(), "--output", "json"});
    EXPECT_EQ(submit.exit_code, 2) << submit.err;
    EXPECT_EQ(jsonCodesAndFields(submit.out), c.expected) << submit.out;
    auto render = run({"render", "-f", path, "--site", site()});
    EXPECT_EQ(render.exit_code, 2);
    EXPECT_EQ(render.out, "");
    int lines = 0;
    for (char ch : render.err) lines += ch == '\n';
    EXPECT_EQ(lines, static_cast<int>(c.expected.size())) << render.err;
    for (const auto& [code, field] : c.expected) {
      EXPECT_NE(render.err.find(field + ": "), std::string::npos) << render.err;
      EXPECT_NE(render.err.find("[" + code + "]"), std::string::npos) << render.err;
    }
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/staging")) << "nothing may be staged";
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

// A llamafactory job's summary says what TunePlane will run for it, and where its
// checkpoints go.
TEST_F(ValidateCommandTest, ALlamaFactoryJobsSummarySaysWhatRunsAndWhereCheckpointsGo) {
  auto text = run({"validate", "-f", spec("job.yaml", testing::heteroSpec()), "--site", site()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  launch: llamafactory-cli train "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("/llamafactory.yaml as the Ray driver, ray_num_workers 18, Ray told at "
                          "least 10 CPUs per GPU\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  checkpoints: " + dir_ + "/staging/jobs/"), std::string::npos)
      << text.out;
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
