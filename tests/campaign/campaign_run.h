// One run of the fault campaign (issues 21 and 37): the real `tuneplane-slurmsim` and the real
// `tuneplane serve` as processes on loopback (support/serve_harness.h) — one serve on SQLite
// (CampaignMode::kSingleSqlite), or three replicas on one real PostgreSQL
// (support/pg_cluster.h), each reaching it through a fault proxy of its own
// (support/fault_proxy.h; kReplicasPostgres) — the seed's schedule (schedule.h) played against
// them through serve's /v1 API, the simulator's admin route, the host shim, the proxies and
// signals, then every fault cleared, the jobs waited for (bounded) and the invariants checked
// (invariants.h) from the API, the simulator's history and the jobs' own ledgers (ledger.h).
// Nothing is done for TunePlane that an operator would do: a job that does not end by itself
// once the faults stop is lost. Thread-safety: one run per thread; runs with different
// directories may go side by side.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "campaign/invariants.h"
#include "campaign/schedule.h"

namespace tuneplane::campaign {

struct CampaignOptions {
  uint64_t seed = 1;
  ScheduleSize size;
  bool verbose = true;  // print the schedule and each fault as it strikes (stdout)
  CampaignMode mode = CampaignMode::kSingleSqlite;
};

struct CampaignOutcome {
  uint64_t seed = 0;
  CampaignMode mode = CampaignMode::kSingleSqlite;
  int faults_injected = 0;  // faults that struck (a targeted fault with no target is skipped)
  int faults_skipped = 0;
  std::map<std::string, int> by_fault;  // injected, by describeStrike(Step)
  int user_cancels = 0;
  int stages_refused = 0;  // kStagingFull's jobs whose stage failed with ENOSPC while full
  // Replicas: POSTs answered 5xx (the store busy or cut off) or not at all, sent again to
  // another replica; jobs a POST made whose answer never came, found by listing them all.
  int submits_retried = 0;
  int found_by_listing = 0;
  int takeovers = 0;  // leader changes a fault waited for (replicas)
  // Starts of a restarted replica that exited at once (its store busy: a writer frozen
  // holding the writers' lock) and were tried again, as systemd's Restart=on-failure would.
  int serve_starts_refused = 0;
  bool started = false;     // the processes came up (else nothing else here means anything)
  std::string start_error;  // why not, when it is the machine's (no PostgreSQL)
  Verdict verdict;
  double seconds = 0;
};

CampaignOutcome runCampaign(const CampaignOptions& options);

// "replicas" or "sqlite": TUNEPLANE_CAMPAIGN_MODE's values, and back.
const char* modeName(CampaignMode mode);
std::optional<CampaignMode> modeNamed(const std::string& name);

// How to replay `seed` in `mode`: the environment variables and the command line.
std::string replayCommand(uint64_t seed, CampaignMode mode = CampaignMode::kSingleSqlite);

// "N faults, M jobs, L lost, T run twice, O overlapping runs" and the rest of the outcome, one
// paragraph.
std::string summarize(const CampaignOutcome& outcome);

}  // namespace tuneplane::campaign
