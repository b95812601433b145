// The operations TunePlane needs from a Slurm site, as an interface: SlurmRestClient
// (rest_client.h) implements it over slurmrestd's REST API (v0.0.44 or v0.0.45: slurm_api.h);
// the reconciler's tests use a fake. A job is named by its key (job_key.h): its SLUID, or on a
// version whose paths take no SLUID "<SLUID>@<numeric id>", which the client confirms against
// Slurm's answer before it reads or cancels by the numeric id.
// Every operation returns a typed value or a SlurmError whose transport class says whether
// the request may have been acted on. Implementations are safe to call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/controller_config.h"
#include "slurm/job_record.h"
#include "slurm/rest_error.h"
#include "slurm/slurmdb_jobs.h"

namespace tuneplane::slurm {

class SlurmClient {
 public:
  virtual ~SlurmClient() = default;

  // GET /ping/: per controller, with the server's release and cluster name.
  virtual SlurmResult<PingResult> ping() = 0;
  // POST /job/submit with a body from buildSubmitBody() (`job` or het `jobs[]`). Never
  // retried: a failure of class kUnknown means the job may exist (lost receipt).
  virtual SlurmResult<SubmitReceipt> submit(const nlohmann::json& body) = 0;
  // GET /job/{id}: every het component when `job` is a het leader (key or numeric id); the
  // records carry keys in the form `job` was given in.
  // A job slurmctld does not know (any more) → kErrJobNotFound, and only on Slurm's own
  // error 2017 in the answer: a bare 404 (a proxy's) or an answer with no job and no error
  // is another error, which proves nothing about the job.
  virtual SlurmResult<std::vector<JobRecord>> getJob(const std::string& job) = 0;
  // GET /jobs/[?update_time=T]: all jobs, or nothing-changed (listing.unchanged).
  virtual SlurmResult<JobListing> listJobs(std::optional<int64_t> update_time) = 0;
  // GET /jobs/state/?job_id=A&job_id=B… (numeric ids; the real server ignores SLUIDs there).
  // An empty `job_ids` asks for every job.
  virtual SlurmResult<JobStateList> listJobStates(const std::vector<uint64_t>& job_ids) = 0;
  // DELETE /job/{sluid}[?signal=SIG] (`sluid`: the job's key). Slurm's refusals (in
  // `status[]`) become errors: kErrJobNotFound (2017), kErrAlreadyCompleting (2021), else
  // kErrRejected (a bare 404 included: not Slurm's word). By numeric id, the job is read and
  // confirmed first: another job under the id → kErrJobNotFound, an ended one →
  // kErrAlreadyCompleting, both without a DELETE.
  virtual SlurmStatus cancel(const std::string& sluid,
                             const std::optional<std::string>& signal) = 0;
  virtual SlurmResult<std::vector<PartitionInfo>> listPartitions() = 0;
  virtual SlurmResult<std::vector<NodeInfo>> listNodes() = 0;
  // slurmdbd's records of job `job_id` (numeric), one per run, through slurmrestd's /slurmdb/
  // routes (slurmdb_jobs.h): what Slurm recorded of a job slurmctld has already forgotten
  // (MinJobAge). kErrAccountingUnavailable when the site has no slurmdbd — and from a client
  // that cannot read them at all (this default: a test's fake).
  virtual SlurmResult<std::vector<AccountingRun>> accountingRuns(uint64_t job_id) {
    return slurmFail(
        makeSlurmError(kErrAccountingUnavailable, "slurmdb_job",
                       "this client reads no slurmdbd records (job " + std::to_string(job_id) + ")",
                       TransportClass::kRejected));
  }

  // GET /conf: the controller's preemption settings (controller_config.h). kErrConfUnavailable
  // without asking on a version that has no such route (SlurmApi::controller_config) — and
  // from a client that cannot read it at all (this default: a test's fake).
  virtual SlurmResult<ControllerConfig> controllerConfig() {
    return slurmFail(makeSlurmError(kErrConfUnavailable, "controller_config",
                                    "this client reads no controller configuration",
                                    TransportClass::kNotSent));
  }

  // The same operations, sent to Slurm as `user` (slurm.identity per_user: a job's run_as):
  // the job is then that user's in Slurm, and Slurm's own rules (associations, who may
  // cancel) apply to it. "" is this client's own identity. The returned client lives as long
  // as this one. A client with one identity only (a test's fake) returns itself.
  virtual SlurmClient& as(const std::string& user) {
    (void)user;
    return *this;
  }
};

}  // namespace tuneplane::slurm
