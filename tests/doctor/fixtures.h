// Values the doctor tests build their tables from: slurmrestd answers (ping, partitions,
// nodes) shaped like the simulator's default cluster, Slurm errors of each transport class,
// and a site whose GPU series match that cluster.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog/site_config.h"
#include "doctor/check.h"
#include "doctor/facts.h"
#include "slurm/job_record.h"
#include "slurm/rest_error.h"

namespace tuneplane::doctor::testing {

inline slurm::PingResult pingOk(std::vector<slurm::ControllerPing> controllers = {
                                    {"ctl1", true, true, 500, "No error"}}) {
  slurm::PingResult p;
  p.controllers = std::move(controllers);
  p.release = "26.05.3";
  p.cluster = "tp";
  p.data_parser = "data_parser/v0.0.45";
  return p;
}

inline slurm::SlurmError slurmError(std::string_view code, slurm::TransportClass transport,
                                    int http_status, std::string message = "boom") {
  slurm::SlurmError e = slurm::makeSlurmError(code, "ping", std::move(message), transport);
  e.http_status = http_status;
  return e;
}

inline slurm::NodeInfo node(std::string name, std::vector<std::string> partitions,
                            std::vector<std::string> features, std::string gres,
                            std::vector<std::string> state = {"IDLE"}) {
  slurm::NodeInfo n;
  n.name = std::move(name);
  n.partitions = std::move(partitions);
  n.features = std::move(features);
  n.gres = std::move(gres);
  n.state = std::move(state);
  return n;
}

inline slurm::PartitionInfo partition(std::string name, std::string nodes, int64_t total,
                                      std::vector<std::string> state = {"UP"}) {
  slurm::PartitionInfo p;
  p.name = std::move(name);
  p.nodes = std::move(nodes);
  p.total_nodes = total;
  p.state = std::move(state);
  return p;
}

// gpu1 (h100, ib; 8×H100) and gpu2 (a100; 4×A100) in partition gpu, gpu3 (h100; 8×H100) in
// gpu-spot only, cpu1 in cpu.
inline std::vector<slurm::NodeInfo> defaultNodes() {
  return {node("gpu1", {"gpu"}, {"h100", "ib"}, "gpu:h100:8(S:0-1)"),
          node("gpu2", {"gpu"}, {"a100"}, "gpu:a100:4(S:0)"),
          node("gpu3", {"gpu-spot"}, {"h100", "spot"}, "gpu:h100:8"),
          node("cpu1", {"cpu"}, {}, "")};
}

inline std::vector<slurm::PartitionInfo> defaultPartitions() {
  return {partition("gpu", "gpu[1-2]", 2), partition("gpu-spot", "gpu3", 1),
          partition("cpu", "cpu1", 1)};
}

// A cluster that answered everything.
inline SlurmFacts answered(std::vector<slurm::PartitionInfo> partitions = defaultPartitions(),
                           std::vector<slurm::NodeInfo> nodes = defaultNodes()) {
  SlurmFacts f;
  f.url = "http://slurm:6820";
  f.ping = pingOk();
  f.partitions = std::move(partitions);
  f.nodes = std::move(nodes);
  return f;
}

inline catalog::GpuSeries series(std::string name, std::optional<std::string> constraint, int gpus,
                                 std::string gres_type) {
  return catalog::GpuSeries{std::move(name), std::move(constraint), gpus, std::move(gres_type)};
}

inline catalog::SiteConfig site(std::vector<catalog::GpuSeries> gpu_series = {
                                    series("h100", "h100", 8, "h100")}) {
  catalog::SiteConfig s;
  s.slurm.url = "http://slurm:6820";
  s.slurm.user = "tpuser";
  s.partitions = {"gpu", "cpu"};
  s.gpu_series = std::move(gpu_series);
  s.staging_root = "/shared/attempts";
  return s;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// One row of a judgement table: facts in, the status out, words the message and the fix say.
template <typename Facts>
struct CheckRow {
  const char* name;
  Facts facts;
  CheckStatus status;
  std::string says;
  std::string fix;
};

template <typename Facts, typename Check>
void expectCheckRows(const std::vector<CheckRow<Facts>>& rows, Check check) {
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const CheckResult r = check(row.facts);
    EXPECT_EQ(toString(r.status), std::string(toString(row.status))) << r.message;
    EXPECT_TRUE(contains(r.message, row.says)) << r.message;
    EXPECT_TRUE(contains(r.fix, row.fix)) << r.fix;
  }
}

}  // namespace tuneplane::doctor::testing
