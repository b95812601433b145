// JobService: the small library interface the API (`tuneplane serve`, next issue) calls.
// submit() validates a spec exactly as `tuneplane validate` does — every error in one list,
// each with its field and code — and, only when it passes, makes the job durable as
// Pending; nothing is staged or submitted here: the reconciler does that on its next tick.
// cancel() and abandon() record a request (who, and for abandon why) that the reconciler
// honours; get/list/events read the store. Thread-safety: every method may be called from
// any thread, concurrently with the reconciler.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "control/control_observer.h"
#include "pipeline/attempt_launcher.h"
#include "staging/os_users.h"
#include "store/job_store.h"

namespace tuneplane::control {

class JobService {
 public:
  // REQUIRES: every collaborator outlives the service. `observer` (may be null) is told of
  // each job's creation.
  // `users` (may be null: this host's) is where a per_user site's Unix users are looked up.
  JobService(store::JobStore& store, pipeline::AttemptLauncher& launcher, const Clock& clock,
             ControlObserver* observer = nullptr, staging::OsUsers* users = nullptr);

  // `unix_user`: the Unix user `owner` maps to (server.tokens[].unix_user), which the job
  // runs as when the site's slurm.identity is per_user (pipeline/run_as.h); "" for callers
  // on a shared site. Errors: every problem prepareText finds (the list `tuneplane validate`
  // prints), "control.no_owner", run_as.h's codes, and the store's ("store.io"). Returns
  // the job as stored (Pending), its run_as set.
  Checked<store::JobRecord> submit(std::string_view spec_text, const std::string& owner,
                                   const std::string& unix_user = {});

  // Asks for the job's end: before submission it just ends; afterwards every component is
  // cancelled by SLUID; a lost receipt is cancelled as soon as it is found.
  // Errors: "store.not_found", "store.already_terminal", "store.io".
  Status cancel(const std::string& job_id, const std::string& actor);

  // Gives up looking for a lost receipt (attempt SubmitUnknown), recorded with who and why.
  // Errors: "control.no_reason", and the store's ("store.not_found",
  // "store.not_submit_unknown", "store.io").
  Status abandon(const std::string& job_id, int attempt, const std::string& actor,
                 const std::string& reason);

  Result<std::optional<store::JobView>> get(const std::string& job_id);
  Result<store::JobPage> list(const store::JobQuery& query);
  Result<std::vector<store::EventRecord>> events(const std::string& job_id);

  // Fresh ids collide with an existing job only by chance (32 random bits); this many
  // tries before giving up.
  static constexpr int kJobIdTries = 4;

 private:
  store::JobStore& store_;
  pipeline::AttemptLauncher& launcher_;
  const Clock& clock_;
  ControlObserver* const observer_;
  staging::PosixOsUsers host_users_;
  staging::OsUsers& users_;
};

}  // namespace tuneplane::control
