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
#include "store/job_store.h"

namespace tuneplane::control {

class JobService {
 public:
  // REQUIRES: every collaborator outlives the service. `observer` (may be null) is told of
  // each job's creation.
  JobService(store::JobStore& store, pipeline::AttemptLauncher& launcher, const Clock& clock,
             ControlObserver* observer = nullptr);

  // Errors: every problem prepareText finds (the list `tuneplane validate` prints),
  // "control.no_owner", and the store's ("store.io"). Returns the job as stored (Pending).
  Checked<store::JobRecord> submit(std::string_view spec_text, const std::string& owner);

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
};

}  // namespace tuneplane::control
