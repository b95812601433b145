// The long fault campaign (issues 21, 37; `make campaign`): runs of tests/campaign (the real
// `tuneplane-slurmsim` and `tuneplane serve`, a seeded schedule of faults, the invariants) one
// seed after another, TUNEPLANE_CAMPAIGN_PARALLEL (2) at a time, until
// TUNEPLANE_CAMPAIGN_FAULTS (1,000) faults have struck across at least
// TUNEPLANE_CAMPAIGN_JOBS (500) jobs, then prints "N faults, M jobs, L lost, T run twice, O
// overlapping runs" with the time and the load average, and stops. The runs alternate between
// the two modes (TUNEPLANE_CAMPAIGN_MODES: "both", the default — even runs one serve on SQLite,
// odd runs three replicas on PostgreSQL through fault proxies — or "sqlite", or "replicas").
// Each run has TUNEPLANE_CAMPAIGN_RUN_JOBS (40) jobs and TUNEPLANE_CAMPAIGN_RUN_FAULTS (80)
// faults; its seed is the first seed (TUNEPLANE_CAMPAIGN_SEED, else random) plus its index.
// Exit status 1 when any run broke an invariant (each violation printed with the command that
// replays its seed), 0 otherwise. Not part of `make bench` (scripts/bench.sh runs *_bench
// only): it takes minutes.
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
using campaign::CampaignMode;

uint64_t firstSeed() {
  if (const char* given = std::getenv("TUNEPLANE_CAMPAIGN_SEED"))
    return std::strtoull(given, nullptr, 10);
  return (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
}

// The mode of run `index` (0-based, in seed order).
CampaignMode modeOf(const std::string& modes, uint64_t index) {
  if (modes == "sqlite") return CampaignMode::kSingleSqlite;
  if (modes == "replicas") return CampaignMode::kReplicasPostgres;
  return index % 2 == 0 ? CampaignMode::kSingleSqlite : CampaignMode::kReplicasPostgres;
}

// What the runs of one mode added up to.
struct Totals {
  int runs = 0, faults = 0, jobs = 0, lost = 0, twice = 0, overlapping = 0, out_of_order = 0;
  int refused = 0, skipped = 0, commands = 0, takeovers = 0, retried = 0, listed = 0;
  int broken = 0;
  void add(const campaign::CampaignOutcome& o) {
    ++runs;
    faults += o.faults_injected;
    jobs += o.verdict.jobs;
    lost += o.verdict.lost;
    twice += o.verdict.run_twice;
    overlapping += o.verdict.overlapping;
    out_of_order += o.verdict.out_of_order;
    refused += o.verdict.refused_starts;
    skipped += o.faults_skipped;
    commands += o.verdict.commands_run;
    takeovers += o.takeovers;
    retried += o.submits_retried;
    listed += o.found_by_listing;
    broken += (!o.started || !o.verdict.violations.empty()) ? 1 : 0;
  }
  Totals& operator+=(const Totals& t) {
    runs += t.runs;
    faults += t.faults;
    jobs += t.jobs;
    lost += t.lost;
    twice += t.twice;
    overlapping += t.overlapping;
    out_of_order += t.out_of_order;
    refused += t.refused;
    skipped += t.skipped;
    commands += t.commands;
    takeovers += t.takeovers;
    retried += t.retried;
    listed += t.listed;
    broken += t.broken;
    return *this;
  }
};

}  // namespace

int main() {
  const int want_faults = bench::envInt("TUNEPLANE_CAMPAIGN_FAULTS", 1000);
  const int want_jobs = bench::envInt("TUNEPLANE_CAMPAIGN_JOBS", 500);
  const int parallel = bench::envInt("TUNEPLANE_CAMPAIGN_PARALLEL", 2);
  const char* modes_given = std::getenv("TUNEPLANE_CAMPAIGN_MODES");
  const std::string modes = modes_given != nullptr ? modes_given : "both";
  if (modes != "both" && modes != "sqlite" && modes != "replicas") {
    std::fprintf(stderr, "TUNEPLANE_CAMPAIGN_MODES is both, sqlite or replicas, not %s\n",
                 modes.c_str());
    return 2;
  }
  const campaign::ScheduleSize size{bench::envInt("TUNEPLANE_CAMPAIGN_RUN_JOBS", 40),
                                    bench::envInt("TUNEPLANE_CAMPAIGN_RUN_FAULTS", 80)};
  const uint64_t first = firstSeed();
  const double load_before = bench::loadAverage();
  const auto began = std::chrono::steady_clock::now();
  std::printf(
      "fault campaign: until %d faults across >= %d jobs; %d jobs and %d faults per run, %d "
      "runs at once, modes %s, first seed %llu; load average %.2f\n",
      want_faults, want_jobs, size.jobs, size.faults, parallel, modes.c_str(),
      static_cast<unsigned long long>(first), load_before);
  std::fflush(stdout);

  std::mutex mu;
  Totals by_mode[2];
  std::atomic<uint64_t> next{0};
  auto all = [&] {
    Totals sum = by_mode[0];
    sum += by_mode[1];
    return sum;
  };
  auto enough = [&] {
    const Totals sum = all();
    return sum.faults >= want_faults && sum.jobs >= want_jobs;
  };
  auto worker = [&] {
    for (;;) {
      {
        std::lock_guard lock(mu);
        if (enough()) return;
      }
      const uint64_t index = next++;
      const uint64_t seed = first + index;
      const CampaignMode mode = modeOf(modes, index);
      const campaign::CampaignOutcome o = campaign::runCampaign({seed, size, false, mode});
      std::lock_guard lock(mu);
      by_mode[mode == CampaignMode::kSingleSqlite ? 0 : 1].add(o);
      const Totals sum = all();
      std::cout << "run " << sum.runs << ": " << campaign::summarize(o) << "\n";
      if (!o.started || !o.verdict.violations.empty()) {
        std::cout << "  replay (verbose): TUNEPLANE_CAMPAIGN_SEED=" << seed
                  << " TUNEPLANE_CAMPAIGN_MODE=" << campaign::modeName(mode)
                  << " TUNEPLANE_CAMPAIGN_RUN_JOBS=" << size.jobs
                  << " TUNEPLANE_CAMPAIGN_RUN_FAULTS=" << size.faults
                  << " build/tests/campaign_test --gtest_filter=FaultCampaign.Seed\n";
      }
      std::cout << "  so far: " << sum.faults << " faults, " << sum.jobs << " jobs" << std::endl;
    }
  };
  std::vector<std::thread> workers;
  for (int i = 0; i < parallel; ++i) workers.emplace_back(worker);
  for (auto& w : workers) w.join();

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  const Totals t = all();
  std::printf(
      "\n%d faults, %d jobs, %d lost, %d run twice, %d overlapping runs\n"
      "  %d runs in %.0f s (%.1f min), first seed %llu; %d runs broke an invariant; %d jobs "
      "whose attempts ran out of order; %d runs of the jobs' commands in their ledgers; %d "
      "targeted faults found no target; %d starts refused by the script (a requeued job Slurm "
      "started again, a doubled submit's copy, a claim that could not be made, a superseded "
      "attempt); load average %.2f before, %.2f after\n",
      t.faults, t.jobs, t.lost, t.twice, t.overlapping, t.runs, seconds, seconds / 60,
      static_cast<unsigned long long>(first), t.broken, t.out_of_order, t.commands, t.skipped,
      t.refused, load_before, bench::loadAverage());
  const char* names[2] = {"one serve on SQLite", "three replicas on PostgreSQL"};
  for (int m = 0; m < 2; ++m) {
    const Totals& b = by_mode[m];
    if (b.runs == 0) continue;
    std::printf(
        "  %s: %d runs, %d faults, %d jobs, %d lost, %d run twice, %d overlapping runs, %d "
        "broke an invariant",
        names[m], b.runs, b.faults, b.jobs, b.lost, b.twice, b.overlapping, b.broken);
    if (m == 1) {
      std::printf(
          "; %d takeovers, %d requests sent again to another replica, %d jobs found by "
          "listing",
          b.takeovers, b.retried, b.listed);
    }
    std::printf("\n");
  }
  return t.broken == 0 ? 0 : 1;
}
