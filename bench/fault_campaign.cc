// The long fault campaign (issue 21; `make campaign`): runs of tests/campaign (the real
// `tuneplane-slurmsim` and `tuneplane serve`, a seeded schedule of faults, the invariants)
// one seed after another, TUNEPLANE_CAMPAIGN_PARALLEL (2) at a time, until
// TUNEPLANE_CAMPAIGN_FAULTS (1,000) faults have struck across at least
// TUNEPLANE_CAMPAIGN_JOBS (500) jobs, then prints "N faults, M jobs, L lost, T run twice" with
// the time and the load average, and stops. Each run has TUNEPLANE_CAMPAIGN_RUN_JOBS (40)
// jobs and TUNEPLANE_CAMPAIGN_RUN_FAULTS (80) faults; its seed is the first seed
// (TUNEPLANE_CAMPAIGN_SEED, else random) plus its index. Exit status 1 when any run broke an
// invariant (each violation printed with the command that replays its seed), 0 otherwise.
// Not part of `make bench` (scripts/bench.sh runs *_bench only): it takes minutes.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_load.h"
#include "bench_measure.h"
#include "campaign/campaign_run.h"

namespace {

using namespace tuneplane;

uint64_t firstSeed() {
  if (const char* given = std::getenv("TUNEPLANE_CAMPAIGN_SEED"))
    return std::strtoull(given, nullptr, 10);
  return (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
}

}  // namespace

int main() {
  const int want_faults = bench::envInt("TUNEPLANE_CAMPAIGN_FAULTS", 1000);
  const int want_jobs = bench::envInt("TUNEPLANE_CAMPAIGN_JOBS", 500);
  const int parallel = bench::envInt("TUNEPLANE_CAMPAIGN_PARALLEL", 2);
  const campaign::ScheduleSize size{bench::envInt("TUNEPLANE_CAMPAIGN_RUN_JOBS", 40),
                                    bench::envInt("TUNEPLANE_CAMPAIGN_RUN_FAULTS", 80)};
  const uint64_t first = firstSeed();
  const double load_before = bench::loadAverage();
  const auto began = std::chrono::steady_clock::now();
  std::printf(
      "fault campaign: until %d faults across >= %d jobs; %d jobs and %d faults per run, %d "
      "runs at once, first seed %llu; load average %.2f\n",
      want_faults, want_jobs, size.jobs, size.faults, parallel,
      static_cast<unsigned long long>(first), load_before);
  std::fflush(stdout);

  std::mutex mu;
  int faults = 0, jobs = 0, lost = 0, twice = 0, abandoned = 0, skipped = 0, runs = 0, refused = 0;
  int broken = 0;
  std::atomic<uint64_t> next{0};
  auto enough = [&] { return faults >= want_faults && jobs >= want_jobs; };
  auto worker = [&] {
    for (;;) {
      {
        std::lock_guard lock(mu);
        if (enough()) return;
      }
      const uint64_t seed = first + next++;
      const campaign::CampaignOutcome o = campaign::runCampaign({seed, size, false});
      std::lock_guard lock(mu);
      ++runs;
      faults += o.faults_injected;
      jobs += o.verdict.jobs;
      lost += o.verdict.lost;
      twice += o.verdict.run_twice;
      refused += o.verdict.refused_starts;
      abandoned += o.abandoned;
      skipped += o.faults_skipped;
      std::cout << "run " << runs << ": " << campaign::summarize(o) << "\n";
      if (!o.started || !o.verdict.violations.empty()) {
        ++broken;
        std::cout << "  replay: TUNEPLANE_CAMPAIGN_SEED=" << seed
                  << " TUNEPLANE_CAMPAIGN_FAULTS=1 TUNEPLANE_CAMPAIGN_JOBS=1"
                     " TUNEPLANE_CAMPAIGN_PARALLEL=1 TUNEPLANE_CAMPAIGN_RUN_JOBS="
                  << size.jobs << " TUNEPLANE_CAMPAIGN_RUN_FAULTS=" << size.faults
                  << " build/bench/fault_campaign\n";
      }
      std::cout << "  so far: " << faults << " faults, " << jobs << " jobs" << std::endl;
    }
  };
  std::vector<std::thread> workers;
  for (int i = 0; i < parallel; ++i) workers.emplace_back(worker);
  for (auto& w : workers) w.join();

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::printf(
      "\n%d faults, %d jobs, %d lost, %d run twice\n"
      "  %d runs in %.0f s (%.1f min); %d runs broke an invariant; %d lost receipts of submits "
      "that never reached Slurm abandoned (as an operator would); %d targeted faults found no "
      "target; %d starts refused by the script (a requeued job Slurm started again, or a "
      "doubled submit's copy, that TunePlane did not stop in time); load average %.2f before, "
      "%.2f after\n",
      faults, jobs, lost, twice, runs, seconds, seconds / 60, broken, abandoned, skipped, refused,
      load_before, bench::loadAverage());
  return broken == 0 ? 0 : 1;
}
