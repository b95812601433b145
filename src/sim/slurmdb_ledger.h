// What the simulator's slurmdbd holds: one job record per RUN, as slurmctld reports each run
// to slurmdbd (transcript 21_slurmdb_jobs). A job's record is kept up to date while the run
// lasts; a requeue ends the run (the record keeps its SLUID, start and end, and reads state
// [PENDING, REQUEUED] with the restart_cnt it ran with) and the next run, under the job's new
// SLUID, is a record of its own. Records outlive slurmctld's purge (MinJobAge), as slurmdbd's
// do. The records are rendered in the shape of the real /slurmdb/<version>/jobs/ answer,
// copied from one real record of each version. Pure, plain values; the Simulator owns the
// ledger under its lock (slurmdb_routes.cc serves it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/job.h"

namespace tuneplane::sim {

// One run of one job (one het component), as slurmdbd records it.
struct SlurmdbRun {
  uint32_t job_id = 0;
  uint64_t sluid = 0;
  std::string name;
  std::string user;
  std::string group;
  std::string account;
  std::string qos;
  uint32_t association_id = 0;
  std::string partition;
  std::string constraints;
  std::string working_directory;
  std::string standard_output;  // patterns as submitted, and their expansions
  std::string standard_error;
  std::string stdout_expanded;
  std::string stderr_expanded;
  std::string state = "PENDING";  // the base state slurmdbd stores
  bool requeued = false;          // the run a requeue ended: [PENDING, REQUEUED]
  std::string reason = "None";
  int restart_count = 0;  // requeues before this run
  int64_t submit_time = 0;
  int64_t start_time = 0;  // 0: never started
  int64_t end_time = 0;    // 0: still running (or never started)
  std::optional<int64_t> time_limit_min;
  ExitCode exit_code;
  bool hold = false;
  uint32_t het_job_id = 0;
  uint32_t het_offset = 0;
  bool het = false;
  // The run's allocation (kept when the job gives it up).
  std::vector<std::string> nodes;
  int cpus = 0;        // on all its nodes
  int64_t mem_mb = 0;  // on all its nodes
  int gpus = 0;        // on all its nodes
  int requested_cpus = 1;
  std::optional<int64_t> memory_per_cpu_mb;
  std::optional<int64_t> memory_per_node_mb;
};

// A job's current run as slurmdbd would record it now.
SlurmdbRun runOf(const Job& job);

class SlurmdbLedger {
 public:
  // Records `job`'s current run: a new record for a SLUID not seen yet, else that record
  // updated. An allocation the job no longer holds stays on the record.
  void observe(const Job& job);
  // Every record, oldest first.
  const std::vector<SlurmdbRun>& runs() const { return runs_; }

 private:
  std::vector<SlurmdbRun> runs_;
  std::map<uint64_t, size_t> by_sluid_;
};

// Whether GET /slurmdb/<v>/jobs/ selects `run`: `users` empty or naming its user, and with a
// window (`start` > 0) a run eligible before its end (`end`, 0: `now`) that had not ended
// before its start, as slurmdbd's usage_start/usage_end select.
bool selectsRun(const SlurmdbRun& run, const std::vector<std::string>& users, int64_t start,
                int64_t end, int64_t now);

// The record in the shape of `version`'s (v0.0.44 or v0.0.45) /slurmdb/ answers; `now` gives a
// running run's elapsed time; `with_steps` false: no steps (skip_steps).
nlohmann::json slurmdbRecord(const SlurmdbRun& run, const std::string& version,
                             const std::string& cluster, int64_t now, bool with_steps);

}  // namespace tuneplane::sim
