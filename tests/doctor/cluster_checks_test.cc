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

// What a preempted job gets, by the cluster's settings (GET /conf), the partition's
// PreemptMode and GraceTime (v0.0.44 reports no PreemptMode) and the site's warning.
TEST(ClusterChecksTest, WhatAPreemptedJobGets) {
  using Modes = std::vector<std::string>;
  using Conf = std::optional<slurm::SlurmResult<slurm::ControllerConfig>>;
  const auto conf = [](std::string type, Modes mode, Modes parameters) -> Conf {
    return slurm::SlurmResult<slurm::ControllerConfig>(
        slurm::ControllerConfig{std::move(type), std::move(mode), std::move(parameters)});
  };
  // The real test cluster's (transcript 24_conf), and the same without send_user_signal.
  const Conf signal = conf("preempt/partition_prio", {"CANCEL"}, {"send_user_signal"});
  const Conf no_signal = conf("preempt/partition_prio", {"CANCEL"}, {});
  const Conf on_v0044 = slurm::SlurmResult<slurm::ControllerConfig>(slurm::slurmFail(
      slurm::makeSlurmError(slurm::kErrConfUnavailable, "controller_config",
                            "REST API v0.0.44 has no GET /conf (the controller's configuration)",
                            slurm::TransportClass::kNotSent)));
  const Conf failed = slurm::SlurmResult<slurm::ControllerConfig>(slurm::slurmFail(
      testing::slurmError(slurm::kErrServerError, slurm::TransportClass::kRejected, 500)));
  struct Row {
    const char* name;
    Conf conf;
    std::optional<int64_t> grace_time;
    std::optional<Modes> preempt_mode;
    bool warning_on;
    const char* says;
  };
  const Row rows[] = {
      // The cluster's settings known.
      {"the warning: send_user_signal", signal, 30, Modes{"CLUSTER_GLOBAL"}, true,
       "if Slurm preempts a job here, it gets USR2 and 30 s to save (GraceTime; "
       "PreemptParameters has send_user_signal)"},
      {"TERM: no send_user_signal", no_signal, 30, Modes{"CLUSTER_GLOBAL"}, true,
       "it gets TERM and 30 s (GraceTime), not the warning: PreemptParameters lacks "
       "send_user_signal"},
      {"no grace time", signal, 0, Modes{"CLUSTER_GLOBAL"}, true,
       "gets no warning: GraceTime 0 ends it at once"},
      {"preempt/none", conf("preempt/none", {"DISABLED"}, {}), 30, Modes{"CLUSTER_GLOBAL"}, true,
       "jobs here are not preempted (PreemptType preempt/none)"},
      {"partition OFF (the real urgent)", signal, 0, Modes{"DISABLED"}, true,
       "jobs here are not preempted (PreemptMode OFF)"},
      {"cluster OFF, partition global", conf("preempt/partition_prio", {"DISABLED"}, {}), 30,
       Modes{"CLUSTER_GLOBAL"}, true, "jobs here are not preempted (PreemptMode OFF)"},
      {"cluster SUSPEND", conf("preempt/partition_prio", {"SUSPEND", "GANG"}, {}), 30, Modes{},
       true, "suspended, not ended, and gets no warning (PreemptMode SUSPEND)"},
      {"partition SUSPEND over cluster CANCEL", signal, 30, Modes{"SUSPEND"}, true,
       "suspended, not ended"},
      {"partition REQUEUE", signal, 10, Modes{"REQUEUE"}, true, "gets USR2 and 10 s to save"},
      {"warning off", signal, 30, Modes{"CLUSTER_GLOBAL"}, false,
       "gets TERM and 30 s before it ends (GraceTime; slurm.preemption_warning is off)"},
      {"preempt/qos, send_user_signal", conf("preempt/qos", {"CANCEL"}, {"send_user_signal"}), 30,
       Modes{"CLUSTER_GLOBAL"}, true,
       "gets USR2 and its QOS's GraceTime before it ends (PreemptParameters has "
       "send_user_signal); with PreemptType preempt/qos the QOS's GraceTime applies, which "
       "doctor does not read"},
      {"preempt/qos, no send_user_signal", conf("preempt/qos", {"CANCEL"}, {}), 0,
       Modes{"CLUSTER_GLOBAL"}, true,
       "gets TERM and its QOS's GraceTime before it ends (not the warning: PreemptParameters "
       "lacks send_user_signal)"},
      {"preempt/qos, warning off", conf("preempt/qos", {"CANCEL"}, {"send_user_signal"}), 30,
       Modes{}, false,
       "gets TERM and its QOS's GraceTime before it ends "
       "(slurm.preemption_warning is off)"},
      {"settings known, no GraceTime reported", signal, std::nullopt, std::nullopt, true,
       "is not known (no GraceTime reported)"},
      // Not known: both outcomes, and why.
      {"v0.0.44: no /conf, no mode", on_v0044, 45, std::nullopt, true,
       "gets USR2 and 45 s to save where PreemptParameters has send_user_signal, else TERM and "
       "45 s (GraceTime); the cluster's PreemptType and PreemptParameters are not known: REST "
       "API v0.0.44 has no GET /conf"},
      {"/conf failed", failed, 30, Modes{"CLUSTER_GLOBAL"}, true,
       "are not known: GET /conf failed: "},
      {"not asked", std::nullopt, 30, Modes{"CANCEL"}, true,
       "are not known: GET /conf was not asked"},
      {"unknown, partition OFF", on_v0044, 30, Modes{"DISABLED"}, true,
       "not preempted (PreemptMode OFF)"},
      {"unknown, SUSPEND", on_v0044, 30, Modes{"SUSPEND"}, true, "suspended, not ended"},
      {"unknown, GraceTime 0", on_v0044, 0, std::nullopt, true, "GraceTime 0 ends it at once"},
      {"unknown, warning off", on_v0044, 30, std::nullopt, false,
       "gets TERM and 30 s before it ends (GraceTime; slurm.preemption_warning is off)"},
      {"unknown, nothing reported", on_v0044, std::nullopt, std::nullopt, true,
       "is not known (no GraceTime"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    slurm::PartitionInfo p = testing::partition("cpu", "cpu1", 1);
    p.grace_time = row.grace_time;
    p.preempt_mode = row.preempt_mode;
    catalog::PreemptionWarning warning;
    warning.enabled = row.warning_on;
    const std::string said = preemptionOutcome(warning, p, row.conf);
    EXPECT_TRUE(contains(said, row.says)) << said;
  }
  // The partition check ends with it, and keeps the facts in its details.
  slurm::PartitionInfo cpu = testing::partition("cpu", "cpu1", 1);
  cpu.grace_time = 30;
  cpu.preempt_mode = std::vector<std::string>{"CLUSTER_GLOBAL"};
  SlurmFacts facts = answered({testing::partition("gpu", "gpu[1-2]", 2), cpu});
  facts.conf = signal;
  const auto checks = checkPartitions(site(), facts);
  const CheckResult* check = find(checks, "partition/cpu");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check->status, CheckStatus::kOk);
  EXPECT_TRUE(contains(check->message,
                       "exists (UP, 1 node: cpu1); if Slurm preempts a job here, it gets USR2 "
                       "and 30 s to save"))
      << check->message;
  EXPECT_EQ(check->details["grace_time"], 30);
  EXPECT_EQ(check->details["preempt_mode"], nlohmann::json({"CLUSTER_GLOBAL"}));
  EXPECT_EQ(check->details["cluster_preemption"]["preempt_type"], "preempt/partition_prio");
  EXPECT_EQ(check->details["cluster_preemption"]["preempt_parameters"],
            nlohmann::json({"send_user_signal"}));
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
