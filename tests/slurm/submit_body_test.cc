// The submit body: its shape (job vs jobs, per-component fields), validation of every body
// we build against the real slurmrestd 26.05.3 OpenAPI document (strictly: unknown fields
// are errors), and the checker itself proven on the real accepted requests in transcripts/.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "openapi_schema.h"
#include "slurm/script_renderer.h"
#include "slurm/submit_body.h"
#include "support/fixtures.h"
#include "support/test_paths.h"

namespace tuneplane::slurm {
namespace {

using launch::Component;
using launch::LaunchRequest;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
namespace fs = std::filesystem;

constexpr const char* kSubmitSchema = "v0.0.45_job_submit_req";
using test::readJsonFixture;

fs::path goldenDir() {
  return test::sourceDir() / "tests/slurm/golden";
}

const openapi::SchemaChecker& checker() {
  static const openapi::SchemaChecker instance(
      readJsonFixture(test::testDataDir() / "slurm/openapi-v0.0.45.json"));
  return instance;
}

struct RealSubmit {
  std::string where;  // file and label
  json body;
  json response;
};

// Every exchange in transcripts/ that POSTed /job/submit and was answered 200.
std::vector<RealSubmit> realAcceptedSubmits() {
  std::vector<RealSubmit> out;
  for (const auto& file : test::fixtureFiles(test::transcriptsDir(), ".json")) {
    const json transcript = readJsonFixture(file);
    for (const auto& exchange : transcript["exchanges"]) {
      const auto& request = exchange["request"];
      if (request["method"] != "POST" ||
          request["url"].get<std::string>().find("/job/submit") == std::string::npos ||
          exchange["response"]["status"] != 200 || !request["body"].is_object()) {
        continue;
      }
      out.push_back({file.filename().string() + " / " + exchange["label"].dump(), request["body"],
                     exchange["response"]["body"]});
    }
  }
  return out;
}

bool warnsUnknownField(const json& response) {
  if (!response.is_object() || !response.contains("warnings")) return false;
  for (const auto& w : response["warnings"]) {
    if (w.value("description", "").find("unknown field") != std::string::npos) return true;
  }
  return false;
}

LaunchRequest request(int pools) {
  LaunchRequest r;
  r.job_name = "sft";
  r.identity = {"job-7", 2, "tp-job-7-a2-c0ffee"};
  r.container_runtime = catalog::ContainerRuntime::kPyxis;
  r.artifact = {"/r/image.sqsh", catalog::ArtifactFormat::kSqsh, std::string(64, 'a')};
  r.attempt_dir = "/s/jobs/job-7/attempts/2";
  r.logs_dir = r.attempt_dir + "/logs";
  r.environment = {{"USER_SECRET_THING", "user-only"}, {"TUNEPLANE_JOB_ID", "job-7"}};
  r.scheduler_environment = {{"PATH", "/usr/bin:/bin"}};
  r.command = {"python3"};
  r.uses_gpus = true;
  for (int i = 0; i < pools; ++i) {
    Component c;
    c.pool_name = "pool" + std::to_string(i);
    c.partition = "gpu";
    c.constraint = i == 0 ? "h100" : "a100";
    c.nodes = 2 + i;
    c.gpus_per_node = 8 - 4 * i;
    c.gres_type = i == 0 ? "h100" : "";
    c.cpus_per_node = 32;
    c.memory_mb = 4096;
    c.time_limit = std::chrono::minutes(30);
    r.components.push_back(c);
  }
  return r;
}

TEST(SubmitBody, OneComponentIsJobWithScriptAtTopLevel) {
  const json body = buildSubmitBody(request(1), "#!/bin/bash\n");
  EXPECT_EQ(body["script"], "#!/bin/bash\n");
  ASSERT_TRUE(body.contains("job"));
  EXPECT_FALSE(body.contains("jobs"));
  EXPECT_FALSE(body["job"].contains("script"));
}

// The preemption warning (slurm.preemption_warning): on every component, the steps only (no
// BATCH_JOB: the batch shell is not the training); none when the site turned it off.
TEST(SubmitBody, EveryComponentCarriesThePreemptionWarning) {
  LaunchRequest r = request(2);
  r.preemption_warning = catalog::PreemptionWarning{true, "HUP", std::chrono::seconds(300)};
  const json body = buildSubmitBody(r, "#!/bin/bash\n");
  for (const auto& job : body["jobs"]) {
    EXPECT_EQ(job["kill_warning_signal"], "HUP");
    EXPECT_EQ(job["kill_warning_delay"],
              json({{"set", true}, {"infinite", false}, {"number", 300}}));
    EXPECT_EQ(job["kill_warning_flags"], json::array());
  }
  EXPECT_THAT(checker().check(body, kSubmitSchema), IsEmpty());
  r.preemption_warning.reset();
  const json off = buildSubmitBody(r, "#!/bin/bash\n");
  for (const auto& job : off["jobs"]) {
    EXPECT_FALSE(job.contains("kill_warning_signal"));
    EXPECT_FALSE(job.contains("kill_warning_delay"));
    EXPECT_FALSE(job.contains("kill_warning_flags"));
  }
}

TEST(SubmitBody, SeveralComponentsAreJobsInPoolOrder) {
  const json body = buildSubmitBody(request(2), "#!/bin/bash\n");
  EXPECT_FALSE(body.contains("job"));
  ASSERT_EQ(body["jobs"].size(), 2u);
  EXPECT_EQ(body["jobs"][0]["constraints"], "h100");
  EXPECT_EQ(body["jobs"][1]["constraints"], "a100");
  EXPECT_EQ(body["jobs"][0]["tres_per_node"], "gres/gpu:h100:8");
  EXPECT_EQ(body["jobs"][1]["tres_per_node"], "gres/gpu:4");
  for (const auto& job : body["jobs"]) EXPECT_FALSE(job.contains("script"));
}

TEST(SubmitBody, EveryComponentCarriesItsOwnRequiredFields) {
  const json body = buildSubmitBody(request(2), "#!/bin/bash\n");
  for (std::size_t i = 0; i < 2; ++i) {
    const json& job = body["jobs"][i];
    const std::string pool = "pool" + std::to_string(i);
    EXPECT_EQ(job["name"], "sft");
    EXPECT_EQ(job["comment"], "tp-job-7-a2-c0ffee");
    EXPECT_EQ(job["partition"], "gpu");
    EXPECT_EQ(job["current_working_directory"], "/s/jobs/job-7/attempts/2");
    EXPECT_THAT(job["environment"].get<std::vector<std::string>>(),
                ElementsAre("PATH=/usr/bin:/bin", "TUNEPLANE_JOB_ID=job-7", "TUNEPLANE_ATTEMPT=2"));
    EXPECT_EQ(job["standard_output"], "/s/jobs/job-7/attempts/2/logs/" + pool + ".out");
    EXPECT_EQ(job["standard_error"], "/s/jobs/job-7/attempts/2/logs/" + pool + ".err");
    EXPECT_EQ(job["requeue"], false);
    EXPECT_EQ(job["cpus_per_task"], 32);
    EXPECT_EQ(job["tasks_per_node"], 1);
    EXPECT_EQ(job["minimum_nodes"], 2 + static_cast<int>(i));
    EXPECT_EQ(job["maximum_nodes"], 2 + static_cast<int>(i));
    EXPECT_EQ(job["memory_per_node"], json({{"set", true}, {"infinite", false}, {"number", 4096}}));
    EXPECT_EQ(job["time_limit"], json({{"set", true}, {"infinite", false}, {"number", 30}}));
    EXPECT_FALSE(job.contains("account"));
    EXPECT_FALSE(job.contains("qos"));
    EXPECT_FALSE(job.contains("temporary_disk_per_node"));
  }
}

TEST(SubmitBody, CpuComponentHasNoGpuRequestAndOptionalFieldsAppearWhenSet) {
  LaunchRequest r = request(1);
  r.uses_gpus = false;
  r.components[0].gpus_per_node = 0;
  r.components[0].constraint.reset();
  r.components[0].memory_mb = 0;
  r.components[0].time_limit = std::chrono::minutes(0);
  r.account = "acct";
  r.qos = "normal";
  const json job = buildSubmitBody(r, "#!/bin/bash\n")["job"];
  EXPECT_FALSE(job.contains("tres_per_node"));
  EXPECT_FALSE(job.contains("constraints"));
  EXPECT_FALSE(job.contains("memory_per_node"));
  EXPECT_FALSE(job.contains("time_limit"));
  EXPECT_EQ(job["account"], "acct");
  EXPECT_EQ(job["qos"], "normal");
}

TEST(SubmitBody, ScratchBecomesTemporaryDiskPerNode) {
  LaunchRequest r = request(1);
  r.components[0].scratch_mb = 200 * 1024;
  EXPECT_EQ(buildSubmitBody(r, "x")["job"]["temporary_disk_per_node"], 200 * 1024);
}

TEST(SubmitBody, UserEnvironmentStaysOutOfTheBatchStepEnvironment) {
  const json body = buildSubmitBody(request(1), "#!/bin/bash\n");
  EXPECT_THAT(body["job"]["environment"].dump(), ::testing::Not(HasSubstr("USER_SECRET_THING")));
}

TEST(SubmitBody, APerUserJobCarriesSlurmUmaskLastAndASharedOneNone) {
  LaunchRequest r = request(2);
  const json shared = buildSubmitBody(r, "#!/bin/bash\n");
  for (const auto& job : shared["jobs"]) {
    for (const auto& entry : job["environment"]) {
      EXPECT_FALSE(entry.get<std::string>().starts_with("SLURM_UMASK=")) << entry;
    }
  }
  // per_user: Slurm creates the stdout/stderr files with it; last, so a site's own
  // job_environment cannot take it back.
  r.job_umask = launch::kPerUserJobUmask;
  r.scheduler_environment.emplace_back("SLURM_UMASK", "0077");
  const json body = buildSubmitBody(r, "#!/bin/bash\n");
  for (const auto& job : body["jobs"]) {
    ASSERT_FALSE(job["environment"].empty());
    EXPECT_EQ(job["environment"].back(), "SLURM_UMASK=0022");
  }
  EXPECT_THAT(checker().check(body, kSubmitSchema), IsEmpty());
}

TEST(SubmitBody, PercentInLogPathsIsEscapedForSlurmPatterns) {
  EXPECT_EQ(schedulerLogPath("/l/%j", "p%x", ".out"), "/l/%%j/p%%x.out");
  EXPECT_EQ(schedulerLogPath("/l/", "p", ".err"), "/l/p.err");
}

TEST(SubmitBody, PinnedRayPortsAskForWholeNodes) {
  LaunchRequest r = request(2);
  EXPECT_FALSE(needsWholeNodes(r));  // no port pinned: jobs may share nodes
  EXPECT_FALSE(buildSubmitBody(r, "s")["jobs"][0].contains("shared"));
  EXPECT_THAT(renderBatchScript(r), ::testing::Not(HasSubstr("#SBATCH --exclusive")));
  r.ray.port = 6379;
  EXPECT_TRUE(needsWholeNodes(r));
  const json body = buildSubmitBody(r, "s");
  for (const auto& job : body["jobs"]) EXPECT_EQ(job["shared"], json::array({"none"}));
  const std::string script = renderBatchScript(r);
  std::size_t mirrored = 0;
  for (auto at = script.find("#SBATCH --exclusive\n"); at != std::string::npos;
       at = script.find("#SBATCH --exclusive\n", at + 1)) {
    ++mirrored;
  }
  EXPECT_EQ(mirrored, 2u);  // one per component
  r.uses_gpus = false;      // no Ray, so its ports do not matter
  EXPECT_FALSE(needsWholeNodes(r));
}

TEST(SubmitBodySchema, CheckerRejectsWhatSlurmrestdWouldOnlyWarnAbout) {
  json body = buildSubmitBody(request(1), "#!/bin/bash\n");
  ASSERT_THAT(checker().check(body, kSubmitSchema), IsEmpty());
  json typo = body;
  typo["job"]["constraint"] = "h100";  // the sbatch spelling; the API wants "constraints"
  EXPECT_THAT(checker().check(typo, kSubmitSchema),
              ElementsAre("#/job/constraint: unknown property"));
  json nested = body;
  nested["job"]["time_limit"]["minutes"] = 3;
  EXPECT_THAT(checker().check(nested, kSubmitSchema),
              ElementsAre("#/job/time_limit/minutes: unknown property"));
  json wrong_type = body;
  wrong_type["job"]["requeue"] = "false";
  EXPECT_THAT(checker().check(wrong_type, kSubmitSchema),
              ElementsAre("#/job/requeue: expected boolean, got string"));
  json bad_enum = body;
  bad_enum["job"]["shared"] = {"exclusive"};
  EXPECT_THAT(checker().check(bad_enum, kSubmitSchema),
              ElementsAre("#/job/shared/0: \"exclusive\" is not in the enum"));
  json too_big = body;
  too_big["job"]["cpus_per_task"] = 1LL << 40;
  EXPECT_THAT(checker().check(too_big, kSubmitSchema),
              ElementsAre("#/job/cpus_per_task: out of int32 range"));
}

TEST(SubmitBodySchema, EveryGoldenBodyConforms) {
  int bodies = 0;
  for (const auto& file : test::fixtureFiles(goldenDir(), ".json")) {
    ++bodies;
    EXPECT_THAT(checker().check(readJsonFixture(file), kSubmitSchema), IsEmpty()) << file;
  }
  EXPECT_GE(bodies, 5);
}

TEST(SubmitBodySchema, BodiesWithEveryOptionalFieldConform) {
  for (int pools : {1, 2, 3}) {
    LaunchRequest r = request(pools);
    r.account = "a";
    r.qos = "q";
    r.components[0].scratch_mb = 10;
    r.ray.port = 6379;  // shared: ["none"]
    const json body = buildSubmitBody(r, renderBatchScript(r));
    EXPECT_THAT(checker().check(body, kSubmitSchema), IsEmpty()) << pools << " pools";
  }
}

TEST(SubmitBodySchema, HostileValuesStayPlainJsonStrings) {
  const std::string hostile = "it's \"q\" $(touch x) `y` ;*\\ \n\t ünï -x %j";
  LaunchRequest r = request(2);
  r.job_name = hostile;
  r.identity.submit_token = hostile;
  r.identity.job_id = hostile;
  r.attempt_dir = "/a/" + hostile;
  r.logs_dir = "/l/x";
  r.account = hostile;
  r.qos = hostile;
  r.scheduler_environment = {{"V", hostile}};
  for (auto& c : r.components) {
    c.partition = hostile;
    c.constraint = hostile;
  }
  const json body = buildSubmitBody(r, renderBatchScript(r));
  EXPECT_THAT(checker().check(body, kSubmitSchema), IsEmpty());
  const json round_trip = json::parse(body.dump());
  EXPECT_EQ(round_trip["jobs"][1]["name"], hostile);
  EXPECT_EQ(round_trip["jobs"][1]["environment"][0], "V=" + hostile);
  EXPECT_EQ(round_trip["jobs"][0]["current_working_directory"], "/a/" + hostile);
}

// Proves the checker on real data: every request the real server accepted without a
// warning passes it; the one it accepted with "Ignoring unknown field" fails it.
TEST(SubmitBodySchema, RealAcceptedRequestsPassTheChecker) {
  const auto submits = realAcceptedSubmits();
  ASSERT_GE(submits.size(), 10u);
  int flagged = 0;
  for (const auto& submit : submits) {
    const auto errors = checker().check(submit.body, kSubmitSchema);
    if (warnsUnknownField(submit.response)) {
      ++flagged;
      EXPECT_THAT(errors, ElementsAre(HasSubstr("not_a_field: unknown property"))) << submit.where;
    } else {
      EXPECT_THAT(errors, IsEmpty()) << submit.where;
    }
  }
  EXPECT_EQ(flagged, 1);
}

// Every field name our bodies use was accepted by the real server or is in its schema.
TEST(SubmitBodySchema, OurFieldNamesAppearInRealRequestsOrTheSchema) {
  std::set<std::string> known_top = checker().propertyNames(kSubmitSchema);
  std::set<std::string> known_job = checker().propertyNames("v0.0.45_job_desc_msg");
  std::set<std::string> seen_in_real;
  for (const auto& submit : realAcceptedSubmits()) {
    for (const auto& [key, value] : submit.body.items()) {
      known_top.insert(key);
      if (key == "job") {
        for (const auto& [field, _] : value.items()) seen_in_real.insert(field);
      }
      if (key == "jobs") {
        for (const auto& job : value) {
          for (const auto& [field, _] : job.items()) seen_in_real.insert(field);
        }
      }
    }
  }
  ASSERT_TRUE(seen_in_real.count("environment"));
  known_job.insert(seen_in_real.begin(), seen_in_real.end());
  LaunchRequest r = request(2);
  r.account = "a";
  r.qos = "q";
  r.components[0].scratch_mb = 10;
  r.ray.port = 6379;
  for (const json& body : {buildSubmitBody(r, "s"), buildSubmitBody(request(1), "s")}) {
    for (const auto& [key, value] : body.items()) {
      EXPECT_TRUE(known_top.count(key)) << key;
      const json jobs = key == "jobs" ? value : json::array({value});
      if (key == "script") continue;
      for (const auto& job : jobs) {
        for (const auto& [field, _] : job.items()) EXPECT_TRUE(known_job.count(field)) << field;
      }
    }
  }
}

}  // namespace
}  // namespace tuneplane::slurm
