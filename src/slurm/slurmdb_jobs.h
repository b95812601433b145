// slurmdbd's job records, read through slurmrestd's /slurmdb/<version>/jobs/ (the
// openapi/slurmdbd plugin; tests/data/slurm/transcripts/21_slurmdb_jobs.json and v0.0.44's):
// the query's path, the decoder of its answer, and the one read a caller makes.
//
// One record per RUN: a job requeued once has two records with the same job_id — the first
// run's state reads [PENDING, REQUEUED] with restart_cnt 0, the next run's restart_cnt 1 —
// and each holds that run's own start, end and allocation. A het job's components and an
// array's tasks are records of their own too. `users` is sent as a REPEATED query parameter
// (`users=alice&users=bob`): a comma list answers HTTP 500 "Unspecified error" on 26.05.3.
//
// A slurmrestd that does not load openapi/slurmdbd (a site without slurmdbd: transcript
// 22_no_slurmdbd) answers every /slurmdb/ path with HTTP 404 and a text body; readSlurmdbJobs
// turns that into kErrAccountingUnavailable and never into an empty list.
// Decoding follows answer_decoder.h's rules (lenient about types, strict about JSON).
// Thread-safety: pure functions; readSlurmdbJobs is as thread-safe as the client.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "slurm/answer_decoder.h"
#include "slurm/rest_error.h"

namespace tuneplane::slurm {

class SlurmRestClient;

// The answer was a 404 without Slurm's JSON: this slurmrestd has no /slurmdb/ routes.
inline constexpr std::string_view kErrAccountingUnavailable = "slurm.accounting_unavailable";

// What usage needs of one slurmdbd job record (one run).
struct AccountingRun {
  uint64_t job_id = 0;
  std::string sluid;    // v0.0.45; "" on v0.0.44, whose records have none
  std::string cluster;  // the record's `cluster`
  std::string user;     // `user`: the Unix user the run ran as
  std::string account;  // `account`: the Slurm account it was charged to (a team)
  std::string partition;
  std::string name;
  std::vector<std::string> state;  // state.current, verbatim: ["COMPLETED"], ["PENDING","REQUEUED"]
  int64_t restart_count = 0;       // restart_cnt: how many requeues came before this run
  int64_t submit_time = 0;         // time.submission (Unix seconds)
  int64_t start_time = 0;          // time.start; 0 when the run never started
  int64_t end_time = 0;            // time.end; 0 while it runs
  int64_t elapsed = 0;             // time.elapsed: seconds run, suspended time not counted
  int64_t suspended = 0;           // time.suspended (seconds)
  int64_t cpus = 0;                // tres.allocated's `cpu` count
  // tres.allocated's `gres`/`gpu` count; without it (AccountingStorageTRES lists only typed
  // GPUs), the sum of the `gres`/`gpu:<type>` counts. 0: none, or GPUs not accounted.
  int64_t gpus = 0;
  std::string working_directory;  // the job's cwd: TunePlane's attempt directory for its jobs
  uint64_t het_job_id = 0;        // het.job_id: the leader's id for a het component, else 0
  uint64_t array_job_id = 0;      // array.job_id: the array's id for an array task, else 0
  bool operator==(const AccountingRun&) const = default;
};

struct SlurmdbJobsQuery {
  std::vector<std::string> users =
      {};                  // empty: every user's records (as far as the caller may see)
  int64_t start_time = 0;  // Unix seconds; the runs that overlap [start, end]
  int64_t end_time = 0;
};

// "/slurmdb/<api_version>/jobs/?users=a&users=b&start_time=S&end_time=E&show_duplicates=true
// &skip_steps=true": every run (show_duplicates), no step records (skip_steps: a usage read
// needs the job's allocation only, and steps are most of a record's bytes). User names are
// percent-encoded. Pure.
std::string slurmdbJobsPath(std::string_view api_version, const SlurmdbJobsQuery& query);

// GET /slurmdb/<version>/jobs/ and /job/{id}: `jobs[]`, one AccountingRun per record, in the
// answer's order. A record without a usable `job_id`, or an answer without a `jobs` array, is
// an error; Slurm's `errors[]` in a 200 answer are an error too ("slurm.rejected", its first).
// Errors: "slurm.bad_response" naming where ("jobs[3].tres"), or "slurm.rejected".
Result<std::vector<AccountingRun>> decodeSlurmdbJobs(AnswerBytes answer,
                                                     const DecodeOptions& options = {});

// Whether `error` is slurmrestd saying that it has no such route: HTTP 404 with no Slurm error
// number (its text body), as every /slurmdb/ path answers without openapi/slurmdbd.
bool isMissingRoute(const SlurmError& error);

// The runs of `query` from slurmdbd, through `client` (its auth, retries; the REST API version
// it negotiated). Errors: kErrAccountingUnavailable (no /slurmdb/ routes), the client's own
// (slurm.auth_failed, slurm.server_error, …), slurm.bad_response.
SlurmResult<std::vector<AccountingRun>> readSlurmdbJobs(SlurmRestClient& client,
                                                        const SlurmdbJobsQuery& query);
// The runs of one job, GET /slurmdb/<version>/job/{job_id}: every run of it slurmdbd holds (a
// requeued job's earlier runs too). Errors: as readSlurmdbJobs.
SlurmResult<std::vector<AccountingRun>> readSlurmdbJob(SlurmRestClient& client, uint64_t job_id);

}  // namespace tuneplane::slurm
