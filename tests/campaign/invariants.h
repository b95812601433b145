// The fault campaign's invariants (issue 21), checked after every run from both sides: what
// TunePlane's API says (every job, its attempts and its event log) against the simulator's
// full history of Slurm jobs (purged ones included: the ground truth) and the attempts'
// directories on the staging filesystem. Reads files, no network: the run gathers what it
// checks (campaign_run.h).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tuneplane::campaign {

struct Observed {
  std::vector<std::string> ids;                // every job the campaign submitted (201)
  std::map<std::string, nlohmann::json> jobs;  // GET /v1/jobs/{id}; absent or discarded: not found
  std::map<std::string, nlohmann::json> events;    // GET /v1/jobs/{id}/events' items
  nlohmann::json slurm = nlohmann::json::array();  // the simulator's history (GET /sim/admin/jobs)
  std::set<std::string> abandoned;                 // jobs whose lost receipt the campaign abandoned
};

struct Verdict {
  int jobs = 0;
  int lost = 0;       // not found, or not terminal once the faults stopped
  int run_twice = 0;  // attempts whose work started more than once
  // Starts the script refused, having run nothing: a requeued Slurm job started again
  // before TunePlane cancelled it, or a copy of a doubled submit that found the attempt
  // claimed. Not runs; each is a Slurm job TunePlane did not stop before it started.
  int refused_starts = 0;
  std::map<std::string, int> phases;
  std::vector<std::string> violations;  // one line each, naming the job and the attempt
};

// Every job terminal (lost otherwise); no attempt's submit token carried by two Slurm jobs
// that both started, nor one Slurm job started twice (a start the script refused, exiting
// kExitRestartRefused on a restart or kExitAlreadyClaimed, is not a run), nor its command run
// twice (the
// attempt's output/runs ledger, one line per run); every Slurm job carries the token of a
// known attempt; every Slurm job of a terminal job has ended; a Succeeded job's last attempt
// ran in exactly one Slurm job; every staged attempt directory intact (manifest hashes) and
// read-only, with no half-written stage of it left beside it; each job's and each attempt's events
// chain from phase to phase and end at the phase the API shows.
Verdict checkInvariants(const Observed& observed);

// The Slurm jobs in `slurm` (the simulator's history) whose comment is `token`.
std::vector<nlohmann::json> slurmJobsWithToken(const nlohmann::json& slurm,
                                               const std::string& token);

}  // namespace tuneplane::campaign
