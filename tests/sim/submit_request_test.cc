#include "sim/submit_request.h"

#include <gtest/gtest.h>

namespace tuneplane::sim {
namespace {

using nlohmann::json;

json job(json extra = json::object()) {
  json j = {{"name", "e"},
            {"partition", "cpu"},
            {"current_working_directory", "/tmp"},
            {"environment", {"PATH=/bin"}},
            {"script", "#!/bin/bash\ntrue\n"}};
  for (auto& [k, v] : extra.items()) {
    if (v.is_null()) {
      j.erase(k);
    } else {
      j[k] = v;
    }
  }
  return j;
}

struct Case {
  const char* name;
  json body;
  int http;
  int error_number;
  Leftover leftover;
};

TEST(PlanSubmit, RejectionsMatchTheRealServer) {
  const ClusterConfig c = defaultCluster();
  const Case cases[] = {
      {"no script", {{"job", job({{"script", nullptr}})}}, 422, 9000, Leftover::kNone},
      {"no cwd",
       {{"job", job({{"current_working_directory", nullptr}})}},
       422,
       2063,
       Leftover::kNone},
      {"no environment", {{"job", job({{"environment", nullptr}})}}, 422, 2127, Leftover::kNone},
      {"empty environment",
       {{"job", job({{"environment", json::array()}})}},
       422,
       2127,
       Leftover::kNone},
      {"unknown partition", {{"job", job({{"partition", "nosuch"}})}}, 422, 2000, Leftover::kNone},
      {"unknown feature",
       {{"job", job({{"partition", "gpu"}, {"constraints", "v100"}})}},
       422,
       2029,
       Leftover::kNone},
      {"feature not in partition",
       {{"job", job({{"constraints", "h100"}})}},
       422,
       2014,
       Leftover::kFailedRecord},
      {"too many gpus",
       {{"job", job({{"partition", "gpu"}, {"tres_per_node", "gres/gpu:3"}})}},
       422,
       2014,
       Leftover::kFailedRecord},
      {"job and jobs", {{"job", job()}, {"jobs", {job()}}}, 422, 9000, Leftover::kNone},
      {"het component without cwd",
       {{"jobs", {job(), job({{"current_working_directory", nullptr}, {"script", nullptr}})}}},
       422,
       2063,
       Leftover::kCancelledLeader},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const SubmitOutcome out = planSubmit(k.body, c);
    ASSERT_FALSE(out.accepted);
    EXPECT_EQ(out.rejection.error.http_status, k.http);
    EXPECT_EQ(out.rejection.error.error_number, k.error_number);
    EXPECT_EQ(out.rejection.leftover, k.leftover);
  }
}

TEST(PlanSubmit, UnknownFieldIsAWarningNotAnError) {
  const SubmitOutcome out = planSubmit({{"job", job({{"not_a_field", 1}})}}, defaultCluster());
  ASSERT_TRUE(out.accepted);
  ASSERT_EQ(out.plan.warnings.size(), 1u);
  EXPECT_EQ(out.plan.warnings[0]["description"],
            "Ignoring unknown field \"not_a_field\" of type 64 bit integer in "
            "DATA_PARSER_JOB_DESC_MSG");
  EXPECT_EQ(out.plan.warnings[0]["source"], "#/job/not_a_field/");
}

TEST(PlanSubmit, TooManyCpusIsAcceptedButCanNeverStart) {
  const SubmitOutcome out = planSubmit({{"job", job({{"cpus_per_task", 64}})}}, defaultCluster());
  ASSERT_TRUE(out.accepted);
  EXPECT_EQ(out.plan.pending_reason, "PartitionConfig");
  EXPECT_EQ(out.plan.warnings.size(), 2u);
}

TEST(PlanSubmit, HetJobTakesTopLevelScriptAndDefaultsPartition) {
  json c1 = job({{"script", "ignored"}, {"partition", nullptr}});
  const SubmitOutcome out =
      planSubmit({{"script", "#!/bin/sh\necho top\n"}, {"jobs", {job({{"script", nullptr}}), c1}}},
                 defaultCluster());
  ASSERT_TRUE(out.accepted);
  ASSERT_EQ(out.plan.components.size(), 2u);
  EXPECT_TRUE(out.plan.het);
  EXPECT_EQ(out.plan.components[0].script, "#!/bin/sh\necho top\n");
  EXPECT_EQ(out.plan.components[1].script, "");
  EXPECT_EQ(out.plan.components[1].partition, "cpu");
}

TEST(PlanSubmit, NumbersComeInBothForms) {
  const SubmitOutcome out = planSubmit(
      {{"job", job({{"time_limit", {{"set", true}, {"number", 7}}}, {"memory_per_node", 256}})}},
      defaultCluster());
  ASSERT_TRUE(out.accepted);
  EXPECT_EQ(out.plan.components[0].time_limit_min, 7);
  EXPECT_EQ(out.plan.components[0].memory_per_node_mb, 256);
}

// --signal=SIG@T as TunePlane sends it (slurm/submit_body.cc), on both versions: accepted with
// no unknown-field warning, and kept for tests to read.
TEST(PlanSubmit, KeepsTheKillWarningFields) {
  const json fields = {
      {"kill_warning_signal", "USR2"},
      {"kill_warning_delay", {{"set", true}, {"infinite", false}, {"number", 120}}},
      {"kill_warning_flags", json::array()}};
  ASSERT_EQ(simApis().size(), 2u);  // v0.0.44, v0.0.45
  for (const SimApi* api : simApis()) {
    const SubmitOutcome out =
        planSubmit({{"job", job(fields)}}, defaultCluster(), *api, api->release);
    ASSERT_TRUE(out.accepted) << api->name;
    EXPECT_TRUE(out.plan.warnings.empty()) << api->name << ": " << out.plan.warnings.dump();
    EXPECT_EQ(out.plan.components[0].kill_warning_signal, "USR2");
    EXPECT_EQ(out.plan.components[0].kill_warning_delay, 120);
    EXPECT_TRUE(out.plan.components[0].kill_warning_flags.empty());
  }
  const SubmitOutcome batch = planSubmit({{"job", job({{"kill_warning_signal", "USR1"},
                                                       {"kill_warning_delay", 60},
                                                       {"kill_warning_flags", {"BATCH_JOB"}}})}},
                                         defaultCluster());
  ASSERT_TRUE(batch.accepted);
  EXPECT_EQ(batch.plan.components[0].kill_warning_delay, 60);
  EXPECT_EQ(batch.plan.components[0].kill_warning_flags, std::vector<std::string>{"BATCH_JOB"});
}

TEST(GpuTres, ParsesCountAndType) {
  std::string type;
  EXPECT_EQ(parseGpuTres("gres/gpu:2", &type), 2);
  EXPECT_EQ(type, "");
  EXPECT_EQ(parseGpuTres("gres/gpu:h100:2", &type), 2);
  EXPECT_EQ(type, "h100");
  EXPECT_EQ(parseGpuTres("", nullptr), 0);
}

TEST(Features, AndOrExpressions) {
  EXPECT_TRUE(featuresMatch("h100", {"h100"}));
  EXPECT_FALSE(featuresMatch("a100", {"h100"}));
  EXPECT_TRUE(featuresMatch("a100|h100", {"h100"}));
  EXPECT_FALSE(featuresMatch("a100&h100", {"h100"}));
  EXPECT_TRUE(featuresMatch("", {}));
}

}  // namespace
}  // namespace tuneplane::sim
