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

Checked<store::JobRecord> JobService::prepare(std::string_view spec_text, const std::string& owner,
                                              const std::string& unix_user) const {
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
  return job;
}

Checked<store::JobRecord> JobService::create(store::JobRecord job, const SubmitKey* key) {
  for (int i = 0; i < kJobIdTries; ++i) {
    auto id = launcher_.newJobId(job.name);
    if (!id) return failAll({id.error()});
    job.id = *id;
    const store::EventRecord event =
        makeEvent(job.id, 0, "", phase::toString(job.phase), job.created_ms,
                  "submitted by " + job.owner, job.owner);
    const auto created =
        key == nullptr
            ? store_.createJob(job, event)
            : store_.createKeyedJob(
                  job, event, {job.owner, key->key, key->request_sha256, job.id, job.created_ms},
                  job.created_ms - retentionMs());
    if (created) {
      if (observer_ != nullptr) observer_->transition(event);
      return job;
    }
    if (created.error().code != store::codes::kJobExists) return failAll({created.error()});
  }
  return failAll({Error{store::codes::kJobExists, "id", "no unused job id after several tries"}});
}

Checked<store::JobRecord> JobService::submit(std::string_view spec_text, const std::string& owner,
                                             const std::string& unix_user) {
  auto job = prepare(spec_text, owner, unix_user);
  if (!job) return job;
  return create(std::move(*job), nullptr);
}

Checked<JobService::Submitted> JobService::submit(std::string_view spec_text,
                                                  const std::string& owner,
                                                  const std::string& unix_user,
                                                  const SubmitKey& key) {
  // Twice at most: a first look that finds no key, then a create that finds the key bound
  // meanwhile by a request that ran beside this one (the store's check is under its write
  // lock), after which the second look finds that request's job.
  for (int look = 0; look < 2; ++look) {
    auto bound = replay(owner, key);
    if (!bound) return failAll({bound.error()});
    if (*bound) return Submitted{std::move(**bound), /*replayed=*/true};
    auto job = prepare(spec_text, owner, unix_user);
    if (!job) return tl::unexpected(std::move(job.error()));
    auto created = create(std::move(*job), &key);
    if (created) return Submitted{store::JobView{std::move(*created), {}}, /*replayed=*/false};
    const Errors& errors = created.error();
    if (errors.size() != 1 || errors.front().code != store::codes::kKeyExists) {
      return tl::unexpected(std::move(created.error()));
    }
  }
  return failAll({Error{store::codes::kKeyExists, "Idempotency-Key",
                        "the key was bound and then not found; send the request again"}});
}

Result<std::optional<store::JobView>> JobService::replay(const std::string& owner,
                                                         const SubmitKey& key) {
  auto bound = store_.findIdempotencyKey(owner, key.key, clock_.nowMs() - retentionMs());
  if (!bound) return fail(bound.error());
  if (!*bound) return std::optional<store::JobView>();
  const store::IdempotencyRecord& record = **bound;
  if (record.request_sha256 != key.request_sha256) {
    return fail(codes::kIdempotencyKeyReused, "Idempotency-Key",
                "the key '" + key.key + "' was used for job " + record.job_id +
                    " with another request body; a key stands for one request: send that "
                    "request again to get its job, or use a new key for a new request");
  }
  auto view = store_.getJob(record.job_id);
  if (!view) return fail(view.error());
  if (!*view) {
    return fail(store::codes::kNotFound, "Idempotency-Key",
                "the key '" + key.key + "' names job " + record.job_id + ", which is gone");
  }
  return view;
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
