// Issue 37's case on the simulator (the live suite plays the same scenario on a real cluster:
// tests/live/live_lying_reads_test.cc): the real `tuneplane serve` reaches the simulator
// through the lying HTTP proxy; a retryable job waits PENDING behind a job that holds the CPU
// node while Slurm's reads lie (an empty state poll, bare 404s, a 502 listing); once they heal
// and the node is let go, exactly one Slurm job of that job ran, once, and it Succeeded after
// one attempt (campaign/lying_reads.h). Named FaultCampaign* so that ctest gives it the long
// bound.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "../pipeline/site_fixture.h"
#include "campaign/lying_reads.h"
#include "staging/stager.h"

namespace tuneplane::campaign {
namespace {

using namespace std::chrono_literals;

constexpr const char* kToken = "lying-reads-token-3f9a";

TEST(FaultCampaignLyingReads, ARetryableJobWaitingBehindAnotherRunsOnceThroughReadsThatLie) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "tp-lies-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::string scratch = tmpl;
  test::writeFile(scratch + "/jwt.key", pipeline::testing::kJwtKey);
  // The test cluster's CPU node: 4 CPUs, 4 GiB.
  test::writeFile(scratch + "/cluster.yaml",
                  "nodes:\n"
                  "  - {name: gpu1, cpus: 4, memory_mb: 4096, gpus: 2, gpu_type: h100, "
                  "features: [h100]}\n"
                  "  - {name: cpu1, cpus: 4, memory_mb: 4096}\n"
                  "partitions:\n"
                  "  - {name: gpu, nodes: [gpu1]}\n"
                  "  - {name: cpu, nodes: [cpu1], default: true}\n");
  auto sim = test::SlurmSimProcess::start(
      scratch, scratch + "/jwt.key",
      {"--cluster", scratch + "/cluster.yaml", "--epilog-ms", "300", "--min-job-age", "3600"});
  ASSERT_NE(sim, nullptr);
  std::string error;
  auto proxy =
      test::FaultProxy::start({.upstream = upstreamOfUrl(sim->url()), .http = true}, error);
  ASSERT_NE(proxy, nullptr) << error;
  pipeline::testing::SiteDir site(
      "http://" + proxy->address(), false, "",
      "server:\n  poll_interval: 200ms\n  tokens:\n    - user: alice\n      token_sha256: " +
          staging::sha256Hex(kToken) + "\n");
  const std::string direct = siteWithUrl(site.site(), sim->url(), "direct.yaml");
  auto serve = test::ServeProcess::start(site.site(), site.dir() + "/tuneplane.db", site.dir());
  ASSERT_NE(serve, nullptr);
  const test::CliRunner cli(serve->url(), kToken, site.dir());

  LyingReadsJobs jobs;
  lieWhileARetryableJobWaits({.cli = cli,
                              .proxy = *proxy,
                              .direct_site = direct,
                              .api = "/slurm/v0.0.45",
                              .lie_for = 8s,
                              .limit = 90s,
                              .node_cpus = 4,
                              .node_memory_gb = 3,
                              .time_limit = "5m"},
                             jobs);
  EXPECT_EQ(serve->stop(), 0) << serve->process().err();
  serve.reset();
  sim.reset();
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
}

}  // namespace
}  // namespace tuneplane::campaign
