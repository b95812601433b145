// Issue 37's case, as a scenario both the live suite (a real slurmrestd) and `make test` (the
// simulator) play: `tuneplane serve` reaches slurmrestd through a lying HTTP proxy
// (support/fault_proxy.h, slurmReadLies); a job with `retry: {max_attempts: 2}` waits PENDING
// behind a job that holds the CPU node; for a while every state poll answers no jobs, every
// `GET /job/{id}` a bare 404 and every `GET /jobs/` a 502; then the reads heal and the node is
// let go. What must hold, from Slurm's own listing (asked directly, not through the proxy)
// and the job's own sentinels and ledger (ledger.h): exactly one Slurm job of that TunePlane
// job ran — the one its only attempt submitted, COMPLETED — its command ran once, and
// TunePlane reports it Succeeded after one attempt. Every wait is bounded; the assertions are
// GoogleTest's (the caller's test fails). Thread-safety: one caller.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "support/fault_proxy.h"
#include "support/serve_harness.h"

namespace tuneplane::campaign {

struct LyingReadsSetup {
  const test::CliRunner& cli;  // the `tuneplane` CLI against serve, whose slurmrestd is `proxy`
  test::FaultProxy& proxy;     // HTTP mode, in front of slurmrestd
  std::string direct_site;     // a site file naming slurmrestd itself: Slurm's own word
  std::string api = "/slurm/v0.0.45";
  std::chrono::milliseconds lie_for{40'000};
  std::chrono::milliseconds limit{180'000};  // a bound on each wait (a job's run, a submit)
  // The job that holds the CPU node: all of its CPUs, and memory to match.
  int node_cpus = 4;
  int node_memory_gb = 3;
  std::string time_limit = "5m";  // each job's resources.time_limit
};

// The job ids the scenario made, for the caller's teardown (cancelled if left running).
struct LyingReadsJobs {
  std::string blocker, target;
};

// Plays the scenario; `jobs` is filled as they are made.
void lieWhileARetryableJobWaits(const LyingReadsSetup& setup, LyingReadsJobs& jobs);

// The upstream of a slurmrestd URL "http://HOST:PORT" (HOST numeric IPv4 or localhost).
test::ProxyUpstream upstreamOfUrl(const std::string& url);

// `site_file`'s text with its slurm.url replaced by `url`, written beside it as `name`: the
// path. (Its credential paths are relative to its folder, so the copy stays valid.)
std::string siteWithUrl(const std::string& site_file, const std::string& url,
                        const std::string& name);

}  // namespace tuneplane::campaign
