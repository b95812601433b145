// One run of the fault campaign (issue 21): the real `tuneplane-slurmsim` and the real
// `tuneplane serve` (SQLite, its default store) as processes on loopback
// (support/serve_harness.h), the seed's schedule (schedule.h) played against them through
// serve's /v1 API and the simulator's admin route, then every fault cleared, the jobs
// waited for (bounded) and the invariants checked (invariants.h). serve is SIGKILLed and
// restarted on the same database and port when the schedule says. A lost receipt whose
// submit never reached Slurm (no Slurm job has its token after two lookups) is abandoned as
// an operator would, and counted apart. Thread-safety: one run per thread; runs with
// different directories may go side by side.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "campaign/invariants.h"
#include "campaign/schedule.h"

namespace tuneplane::campaign {

struct CampaignOptions {
  uint64_t seed = 1;
  ScheduleSize size;
  bool verbose = true;  // print the schedule and each fault as it strikes (stdout)
};

struct CampaignOutcome {
  uint64_t seed = 0;
  int faults_injected = 0;  // faults that struck (a targeted fault with no target is skipped)
  int faults_skipped = 0;
  std::map<std::string, int> by_fault;  // injected, by describe(Fault)
  int user_cancels = 0;
  int stages_refused = 0;  // kStagingFull's jobs whose stage failed with ENOSPC while full
  int abandoned = 0;       // lost receipts of submits that never reached Slurm, abandoned
  bool started = false;    // the processes came up (else nothing else here means anything)
  Verdict verdict;
  double seconds = 0;
};

CampaignOutcome runCampaign(const CampaignOptions& options);

// How to replay `seed`: the environment variable and the command line.
std::string replayCommand(uint64_t seed);

// "N faults, M jobs, L lost, T run twice" and the rest of the outcome, one paragraph.
std::string summarize(const CampaignOutcome& outcome);

}  // namespace tuneplane::campaign
