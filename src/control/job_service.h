// JobService: the small library interface the API (`tuneplane serve`, next issue) calls.
// submit() validates a spec exactly as `tuneplane validate` does — every error in one list,
// each with its field and code — and, only when it passes, makes the job durable as
// Pending; nothing is staged or submitted here: the reconciler does that on its next tick.
// cancel() and abandon() record a request (who, and for abandon why) that the reconciler
// honours; get/list/events read the store. Thread-safety: every method may be called from
// any thread, concurrently with the reconciler.
#pragma once

#include <chrono>
#include <cstdint>
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

  // An Idempotency-Key of POST /v1/jobs and what identifies its request.
  struct SubmitKey {
    std::string key;             // its form checked by the caller (api::checkIdempotencyKey)
    std::string request_sha256;  // of the request's body, as sent
  };
  struct Submitted {
    store::JobView view;    // created: the job as stored; replayed: the job as it is now
    bool replayed = false;  // the key's first request created it
  };
  // How long a key stands for its first request: longer than any client keeps retrying
  // (the CLI gives up within minutes), short enough that the table stays small. Counted on
  // this service's clock from the job's creation.
  static constexpr std::chrono::hours kIdempotencyRetention{24};
  // submit() under `key`, per owner: when the owner bound the key within the retention, the
  // job it was bound to comes back (replayed) whatever the spec says now — nothing is
  // validated or created — if `key.request_sha256` matches, else
  // "control.idempotency_key_reused". Otherwise as submit(), the key bound to the new job in
  // the job's own transaction: a refused spec binds nothing, so a corrected request may
  // reuse the key. Two requests with one key at once create one job (the store checks the
  // key under its write lock; the loser replays the winner's job).
  Checked<Submitted> submit(std::string_view spec_text, const std::string& owner,
                            const std::string& unix_user, const SubmitKey& key);

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
  // The job submit() would store (without id), or every problem with the spec.
  Checked<store::JobRecord> prepare(std::string_view spec_text, const std::string& owner,
                                    const std::string& unix_user) const;
  // Stores `job` under a fresh id (bound to `key` when not null).
  Checked<store::JobRecord> create(store::JobRecord job, const SubmitKey* key);
  // The job the owner's key was bound to within the retention; nullopt when none.
  Result<std::optional<store::JobView>> replay(const std::string& owner, const SubmitKey& key);
  static constexpr int64_t retentionMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(kIdempotencyRetention).count();
  }

  store::JobStore& store_;
  pipeline::AttemptLauncher& launcher_;
  const Clock& clock_;
  ControlObserver* const observer_;
  staging::PosixOsUsers host_users_;
  staging::OsUsers& users_;
};

}  // namespace tuneplane::control
