// See job_service.h.
#include "control/job_service.h"

#include "control/error_codes.h"
#include "control/state_machine.h"
#include "pipeline/run_as.h"
#include "spec/spec_parser.h"
#include "store/error_codes.h"

namespace tuneplane::control {

JobService::JobService(store::JobStore& store, pipeline::AttemptLauncher& launcher,
                       const Clock& clock, ControlObserver* observer, staging::OsUsers* users)
    : store_(store),
      launcher_(launcher),
      clock_(clock),
      observer_(observer),
      users_(users != nullptr ? *users : host_users_) {}

Checked<store::JobRecord> JobService::submit(std::string_view spec_text, const std::string& owner,
                                             const std::string& unix_user) {
  Errors errors;
  if (owner.empty()) errors.push_back({codes::kNoOwner, "owner", "a job needs an owner"});
  // Whom Slurm runs it as, fixed now: never someone else than the owner's Unix user.
  auto run_as = pipeline::runAsFor(launcher_.site().site, owner, unix_user, users_);
  if (!run_as) errors.push_back(run_as.error());
  auto validated = launcher_.validate(spec_text);
  if (!validated) errors.insert(errors.end(), validated.error().begin(), validated.error().end());
  if (!errors.empty()) return failAll(std::move(errors));
  auto spec = spec::parseJobSpec(spec_text);  // passed validation: it parses
  if (!spec) return failAll(spec.error());

  store::JobRecord job;
  job.name = spec->metadata.name;
  job.owner = owner;
  job.run_as = *run_as;
  job.labels = spec->metadata.labels;
  job.spec = std::string(spec_text);
  job.phase = phase::JobPhase::kPending;
  job.created_ms = job.updated_ms = clock_.nowMs();
  job.reason = "accepted; waiting for the control loop to stage the first attempt";
  for (int i = 0; i < kJobIdTries; ++i) {
    auto id = launcher_.newJobId(job.name);
    if (!id) return failAll({id.error()});
    job.id = *id;
    const store::EventRecord event = makeEvent(job.id, 0, "", phase::toString(job.phase),
                                               job.created_ms, "submitted by " + owner, owner);
    auto created = store_.createJob(job, event);
    if (created) {
      if (observer_ != nullptr) observer_->transition(event);
      return job;
    }
    if (created.error().code != store::codes::kJobExists) return failAll({created.error()});
  }
  return failAll({Error{store::codes::kJobExists, "id", "no unused job id after several tries"}});
}

Status JobService::cancel(const std::string& job_id, const std::string& actor) {
  return store_.requestCancel(job_id, actor, clock_.nowMs());
}

Status JobService::abandon(const std::string& job_id, int attempt, const std::string& actor,
                           const std::string& reason) {
  if (reason.empty()) {
    return fail(codes::kNoReason, "reason",
                "say why the attempt is abandoned: it is recorded with who did it");
  }
  return store_.requestAbandon(job_id, attempt, actor, reason, clock_.nowMs());
}

Result<std::optional<store::JobView>> JobService::get(const std::string& job_id) {
  return store_.getJob(job_id);
}

Result<store::JobPage> JobService::list(const store::JobQuery& query) {
  return store_.listJobs(query);
}

Result<std::vector<store::EventRecord>> JobService::events(const std::string& job_id) {
  return store_.events(job_id);
}

}  // namespace tuneplane::control
