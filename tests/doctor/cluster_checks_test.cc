// Partitions and GPU series judged against slurmrestd's partitions and nodes, from tables.
#include "doctor/cluster_checks.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace tuneplane::doctor {
namespace {

using testing::answered;
using testing::contains;
using testing::defaultNodes;
using testing::defaultPartitions;
using testing::node;
using testing::partition;
using testing::series;
using testing::site;

const CheckResult* find(const std::vector<CheckResult>& checks, const std::string& name) {
  for (const auto& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(ClusterChecksTest, ConfiguredPartitionsAreListedOnceWithWhoNamesThem) {
  catalog::SiteConfig s = site();
  s.partitions = {"batch", "batch"};
  const auto parts = configuredPartitions(s);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].name, "batch");
  EXPECT_EQ(parts[0].named_by, (std::vector<std::string>{"partitions.gpu", "partitions.cpu"}));
}

// What a preempted job gets, by the partition's PreemptMode and GraceTime (v0.0.44 reports
// no PreemptMode) and the site's warning.
TEST(ClusterChecksTest, WhatAPreemptedJobGets) {
  struct Row {
    const char* name;
    std::optional<int64_t> grace_time;
    std::optional<std::vector<std::string>> preempt_mode;
    bool warning_on;
    const char* says;
  };
  using Modes = std::vector<std::string>;
  const Row rows[] = {
      {"grace and the warning", 30, Modes{"CANCEL"}, true,
       "gets USR2 and 30 s to save where PreemptParameters has send_user_signal"},
      {"grace, otherwise TERM", 30, Modes{"CANCEL"}, true, "else TERM and 30 s (GraceTime)"},
      {"v0.0.44: no mode reported", 45, std::nullopt, true, "gets USR2 and 45 s to save"},
      {"requeue mode", 10, Modes{"REQUEUE"}, true, "gets USR2 and 10 s to save"},
      {"no grace time", 0, Modes{"CANCEL"}, true, "gets no warning: GraceTime 0 ends it at once"},
      {"sim and v0.0.45 default", 0, Modes{}, true, "gets no warning: GraceTime 0"},
      {"preemption off", 30, Modes{"DISABLED"}, true, "not preempted (PreemptMode OFF)"},
      {"suspended", 30, Modes{"SUSPEND"}, true, "suspended, not ended, and gets no warning"},
      {"warning off", 30, Modes{"CANCEL"}, false,
       "gets TERM and 30 s before it ends (GraceTime; slurm.preemption_warning is off)"},
      {"nothing reported", std::nullopt, std::nullopt, true, "is not known (no GraceTime"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    slurm::PartitionInfo p = testing::partition("cpu", "cpu1", 1);
    p.grace_time = row.grace_time;
    p.preempt_mode = row.preempt_mode;
    catalog::PreemptionWarning warning;
    warning.enabled = row.warning_on;
    const std::string said = preemptionOutcome(warning, p);
    EXPECT_TRUE(contains(said, row.says)) << said;
  }
  // The partition check ends with it, and keeps the two facts in its details.
  slurm::PartitionInfo cpu = testing::partition("cpu", "cpu1", 1);
  cpu.grace_time = 30;
  cpu.preempt_mode = std::vector<std::string>{"CANCEL"};
  const auto checks =
      checkPartitions(site(), answered({testing::partition("gpu", "gpu[1-2]", 2), cpu}));
  const CheckResult* check = find(checks, "partition/cpu");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check->status, CheckStatus::kOk);
  EXPECT_TRUE(contains(check->message, "exists (UP, 1 node: cpu1); if Slurm preempts a job here"))
      << check->message;
  EXPECT_EQ(check->details["grace_time"], 30);
  EXPECT_EQ(check->details["preempt_mode"], nlohmann::json({"CANCEL"}));
}

TEST(ClusterChecksTest, Partitions) {
  struct Row {
    const char* name;
    catalog::SiteConfig site;
    SlurmFacts facts;
    const char* check;
    CheckStatus status;
    const char* says;
  };
  catalog::SiteConfig missing_cpu = site();
  missing_cpu.partitions.cpu = "batch";
  catalog::SiteConfig missing_gpu = site();
  missing_gpu.partitions.gpu = "gpus";
  catalog::SiteConfig cpu_only = site({});
  cpu_only.partitions.gpu = "gpus";
  SlurmFacts cpu_down =
      answered({partition("gpu", "gpu[1-2]", 2), partition("cpu", "cpu1", 1, {"DOWN"})});
  SlurmFacts cpu_empty = answered({partition("gpu", "gpu[1-2]", 2), partition("cpu", "", 0)});
  SlurmFacts list_failed = answered();
  list_failed.partitions = tl::unexpected(testing::slurmError(
      slurm::kErrServerError, slurm::TransportClass::kRejected, 500, "slurmctld is busy"));
  SlurmFacts unreachable;
  unreachable.ping =
      tl::unexpected(testing::slurmError(slurm::kErrNotSent, slurm::TransportClass::kNotSent, 0));
  const Row rows[] = {
      {"both exist", site(), answered(), "partition/gpu", CheckStatus::kOk,
       "partition 'gpu' exists (UP, 2 nodes: gpu[1-2])"},
      {"cpu missing", missing_cpu, answered(), "partition/batch", CheckStatus::kFail,
       "partition 'batch' (named by partitions.cpu) does not exist on tp; it has: gpu, gpu-spot, "
       "cpu"},
      {"gpu missing", missing_gpu, answered(), "partition/gpus", CheckStatus::kFail,
       "does not exist"},
      {"gpu missing, no GPU series", cpu_only, answered(), "partition/gpus", CheckStatus::kWarn,
       "defines no GPU series"},
      {"down", site(), cpu_down, "partition/cpu", CheckStatus::kWarn, "is DOWN"},
      {"no nodes", site(), cpu_empty, "partition/cpu", CheckStatus::kWarn, "has no nodes"},
      {"listing failed", site(), list_failed, "partition/gpu", CheckStatus::kFail,
       "cannot list the partitions"},
      {"unreachable", site(), unreachable, "partition/cpu", CheckStatus::kSkip, "did not answer"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const auto checks = checkPartitions(row.site, row.facts);
    const CheckResult* r = find(checks, row.check);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(toString(r->status), std::string(toString(row.status))) << r->message;
    EXPECT_TRUE(contains(r->message, row.says)) << r->message;
    if (r->status == CheckStatus::kFail || r->status == CheckStatus::kWarn) {
      EXPECT_FALSE(r->fix.empty());
    }
  }
}

TEST(ClusterChecksTest, GpuSeries) {
  struct Row {
    const char* name;
    catalog::GpuSeries series;
    std::vector<slurm::NodeInfo> nodes;
    CheckStatus status;
    const char* says;
    const char* fix;
  };
  std::vector<slurm::NodeInfo> drained = defaultNodes();
  drained[0].state = {"IDLE", "DRAIN"};
  std::vector<slurm::NodeInfo> active_only = defaultNodes();
  active_only[1].features.clear();
  active_only[1].active_features = {"a100"};
  const Row rows[] = {
      {"plain feature", series("h100", "h100", 8, "h100"), defaultNodes(), CheckStatus::kOk,
       "slurm_constraint 'h100' selects gpu1 in partition gpu, with GRES gpu:h100 (up to 8 per "
       "node; the series needs 8)",
       ""},
      {"a&b", series("h100", "h100&ib", 8, "h100"), defaultNodes(), CheckStatus::kOk,
       "selects gpu1", ""},
      {"a|b", series("any", "a100|h100", 4, ""), defaultNodes(), CheckStatus::kOk,
       "selects gpu1, gpu2", ""},
      {"active features count", series("a100", "a100", 4, "a100"), active_only, CheckStatus::kOk,
       "selects gpu2", ""},
      {"no constraint", series("l40s", std::nullopt, 4, "l40s"), defaultNodes(), CheckStatus::kWarn,
       "has no slurm_constraint", "add `slurm_constraint: FEATURE`"},
      {"no constraint, suggestion", series("a100", std::nullopt, 4, "a100"), defaultNodes(),
       CheckStatus::kWarn, "fail-closed", "nodes with gpu:a100 — gpu2 — have the features: a100"},
      {"feature no node has", series("v100", "v100", 4, "v100"), defaultNodes(), CheckStatus::kFail,
       "names a feature no node has (v100)", "a100, h100, ib, spot"},
      {"features never together", series("x", "a100&ib", 4, "a100"), defaultNodes(),
       CheckStatus::kFail, "no node satisfies slurm_constraint 'a100&ib'", ""},
      {"wrong GRES type", series("h100", "h100", 8, "h100-sxm"), defaultNodes(), CheckStatus::kFail,
       "has GRES gpu:h100-sxm: gpu1 (gpu:h100:8(S:0-1))", "set gres_type"},
      {"too many GPUs per node", series("a100", "a100", 8, "a100"), defaultNodes(),
       CheckStatus::kFail, "at most 4 GPUs of GRES gpu:a100", "set gpus_per_node: 4"},
      {"only in another partition", series("spot", "spot", 8, "h100"), defaultNodes(),
       CheckStatus::kWarn, "nodes gpu3 (partition gpu-spot) do", "partition:"},
      {"all drained", series("h100", "h100&ib", 8, "h100"), drained, CheckStatus::kWarn,
       "unavailable (gpu1 IDLE,DRAIN)", "state=resume"},
      {"unreadable syntax", series("h100", "!a100", 8, "h100"), defaultNodes(), CheckStatus::kWarn,
       "cannot evaluate", "sinfo"},
      {"counts judged per feature", series("h100", "[h100*2&ib*1]", 8, "h100"), defaultNodes(),
       CheckStatus::kOk, "selects gpu1", ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const auto checks =
        checkGpuSeries(site({row.series}), answered(defaultPartitions(), row.nodes));
    ASSERT_EQ(checks.size(), 1u);
    const CheckResult& r = checks[0];
    EXPECT_EQ(r.name, "gpu_series/" + row.series.name);
    EXPECT_EQ(toString(r.status), std::string(toString(row.status))) << r.message;
    EXPECT_TRUE(contains(r.message, row.says)) << r.message;
    EXPECT_TRUE(contains(r.fix, row.fix)) << r.fix;
  }
}

TEST(ClusterChecksTest, GpuSeriesDetailsNameTheMatchingNodes) {
  const auto checks = checkGpuSeries(site(), answered());
  ASSERT_EQ(checks.size(), 1u);
  const auto& nodes = checks[0].details["matching_nodes"];
  ASSERT_EQ(nodes.size(), 1u) << checks[0].details.dump();
  EXPECT_EQ(nodes[0]["name"], "gpu1");
  EXPECT_EQ(nodes[0]["gpus_of_type"], 8);
  EXPECT_EQ(checks[0].details["constraint"], "h100");
}

TEST(ClusterChecksTest, GpuSeriesWithoutClusterFactsIsSkippedButAMissingConstraintIsNot) {
  SlurmFacts refused;
  refused.ping = tl::unexpected(
      testing::slurmError(slurm::kErrAuthFailed, slurm::TransportClass::kRejected, 511));
  const auto checks = checkGpuSeries(
      site({series("h100", "h100", 8, "h100"), series("l40s", std::nullopt, 4, "l40s")}), refused);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].status, CheckStatus::kSkip);
  EXPECT_TRUE(contains(checks[0].message, "refused the token")) << checks[0].message;
  EXPECT_EQ(checks[1].status, CheckStatus::kWarn);  // judged from the site file alone
}

}  // namespace
}  // namespace tuneplane::doctor
