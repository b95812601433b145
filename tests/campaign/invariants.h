// The fault campaign's invariants (issues 21 and 37), checked after every run from both
// sides: what TunePlane's API says (every job, its attempts and its event log) against the
// simulator's full history of Slurm jobs (purged ones included: the ground truth), the
// attempts' directories on the staging filesystem and what the jobs themselves recorded on
// the node (each job's ledger, ledger.h). Reads files, no network: the run gathers what it
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
};

struct Verdict {
  int jobs = 0;
  int lost = 0;       // not found, or not terminal once the faults stopped
  int run_twice = 0;  // attempts whose work started more than once
  // From the jobs' own ledgers: jobs two of whose runs (of any attempts, in any Slurm jobs)
  // ran at the same time, and jobs an attempt of which started after a later attempt's had.
  int overlapping = 0;
  int out_of_order = 0;
  int commands_run = 0;  // runs of the jobs' commands, as their ledgers recorded them
  // Starts the script refused, having run nothing: a requeued Slurm job started again
  // before TunePlane cancelled it, or a copy of a doubled submit that found the attempt
  // claimed. Not runs; each is a Slurm job TunePlane did not stop before it started.
  int refused_starts = 0;
  std::map<std::string, int> phases;
  std::vector<std::string> violations;  // one line each, naming the job and the attempt
};

// Every job terminal without an operator (lost otherwise: a campaign abandons nothing); no
// attempt's submit token carried by two Slurm jobs that both started, nor one Slurm job
// started twice (a start the script refused having run nothing — exiting kExitRestartRefused
// on a restart, kExitAlreadyClaimed, kExitCannotClaim or kExitSuperseded — is not a run), nor
// its command run twice (the attempt's output/runs, one line per run, and the job's ledger);
// from the job's ledger, no two runs of its command at once and no attempt's run after a
// later attempt's, each run in a Slurm job that carries its attempt's token; every Slurm job
// carries the token of a known attempt; every Slurm job of a terminal job has ended; a
// Succeeded job's last attempt ran in exactly one Slurm job, its command once; every staged
// attempt directory intact (manifest hashes) and read-only, with no half-written stage of it
// left beside it; each job's and each attempt's events chain from phase to phase and end at
// the phase the API shows.
Verdict checkInvariants(const Observed& observed);

// The Slurm jobs in `slurm` (the simulator's history) whose comment is `token`.
std::vector<nlohmann::json> slurmJobsWithToken(const nlohmann::json& slurm,
                                               const std::string& token);

}  // namespace tuneplane::campaign
