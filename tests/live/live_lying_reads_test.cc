// Live, issue 37: the case that was met on the real Slurm 26.05.3 test cluster, played again
// (campaign/lying_reads.h). `tuneplane serve` reaches the real slurmrestd through a lying HTTP
// proxy in this process (support/fault_proxy.h); a job with `retry: {max_attempts: 2}` waits
// PENDING behind a job that holds the CPU node (all its CPUs); for 40 s the proxy answers the
// state poll with no jobs, `GET /job/{id}` with a bare 404 and `GET /jobs/` with a 502; then
// it heals and the node is let go. Slurm's own listing (asked directly) must show exactly one
// Slurm job of that TunePlane job, COMPLETED; its claim, sentinels and ledger (one run, of
// attempt 1, in that Slurm job) must agree; TunePlane must report it Succeeded with one
// attempt. Skipped unless TUNEPLANE_LIVE_* is set. The node's size: TUNEPLANE_LIVE_NODE_CPUS
// (4) and TUNEPLANE_LIVE_NODE_MEMORY_GB (3, under the test cluster's RealMemory=4096) — the
// holder must take the whole of the cpu partition's node. Waits are bounded (kLiveLimit).
#include <httplib.h>
#include <cstdlib>

#include "campaign/lying_reads.h"
#include "live_serve_fixture.h"

namespace tuneplane::live {
namespace {

using namespace std::chrono_literals;

int envInt(const char* name, int fallback) {
  const auto value = env(name);
  return value ? std::atoi(value->c_str()) : fallback;
}

class LiveLyingReads : public LiveServeRun {
 protected:
  void SetUp() override {
    configure();
    if (IsSkipped() || HasFatalFailure()) return;
    std::string error;
    proxy_ = test::FaultProxy::start({.upstream = campaign::upstreamOfUrl(live_.url), .http = true},
                                     error);
    ASSERT_NE(proxy_, nullptr) << error;
    auto dir = makeLiveSite(site(), "tp-live-lies-", "http://" + proxy_->address(), identityLines(),
                            stagingAndServerSections());
    ASSERT_TRUE(dir) << "cannot make a directory in " << live_.shared_dir;
    dir_ = *dir;
    userStep();
    if (HasFatalFailure()) return;
    direct_ = campaign::siteWithUrl(dir_ + "/site.yaml", live_.url, "direct.yaml");
    serve_ = test::ServeProcess::start(dir_ + "/site.yaml", dir_ + "/tuneplane.db", dir_);
    ASSERT_NE(serve_, nullptr);
    cli_ = std::make_unique<test::CliRunner>(serve_->url(), kToken, dir_);
  }
  void TearDown() override {
    if (proxy_) proxy_->stopLying();
    if (cli_ && !jobs_.blocker.empty()) {
      const json job = cli_->job(jobs_.blocker);
      if (job.is_object() && !job.value("terminal", false))
        (void)cli_->run({"cancel", jobs_.blocker});
    }
    id_ = jobs_.target;  // LiveServeRun cancels it unless it Succeeded
    LiveServeRun::TearDown();
  }

  std::unique_ptr<test::FaultProxy> proxy_;
  std::string direct_;
  campaign::LyingReadsJobs jobs_;
};

// The REST API version serve speaks (negotiated or set), from its /v1/capabilities: the
// proxy lies on that version's paths.
std::string spokenApiPath(const std::string& serve_url) {
  httplib::Client client(serve_url);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(10, 0);
  auto res = client.Get("/v1/capabilities", {{"Authorization", std::string("Bearer ") + kToken}});
  if (!res || res->status != 200) return "";
  const json caps = json::parse(res->body, nullptr, false);
  if (!caps.is_object() || !caps["slurm_api_version"].is_string()) return "";
  return "/slurm/" + caps["slurm_api_version"].get<std::string>();
}

TEST_F(LiveLyingReads, ARetryableJobWaitingBehindAnotherRunsOnceWhileSlurmsReadsLie) {
  const std::string api = spokenApiPath(serve_->url());
  ASSERT_FALSE(api.empty()) << "serve does not say which REST API version it speaks";
  campaign::lieWhileARetryableJobWaits(
      {.cli = *cli_,
       .proxy = *proxy_,
       .direct_site = direct_,
       .api = api,
       .lie_for = 40s,
       .limit = kLiveLimit,
       .node_cpus = envInt("TUNEPLANE_LIVE_NODE_CPUS", 4),
       .node_memory_gb = envInt("TUNEPLANE_LIVE_NODE_MEMORY_GB", 3),
       .time_limit = "5m"},
      jobs_);
}

}  // namespace
}  // namespace tuneplane::live
