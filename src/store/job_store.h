// JobStore: TunePlane's durable state — jobs, their attempts (one row per attempt, with one
// row per het component), and the event log of every transition. The store keeps what it
// is told and decides nothing: control/ owns the state machine and computes each Change,
// which the store applies atomically (one transaction), so a crash leaves either all of a
// decision or none of it. SqliteJobStore (sqlite_job_store.h) is the implementation.
//
// Two kinds of writer share it: the reconciler (one thread, through commit()) and the API
// (createJob, requestCancel, requestAbandon). The requests are narrow atomic updates of
// their own columns, which commit() never writes, so neither writer can undo the other.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "phase/phases.h"
#include "store/error_codes.h"

namespace tuneplane::store {

// The phase vocabulary (phase/phases.h) is what the records below hold; within the store it
// is used by its plain names, and the store persists each as its stable string.
using phase::AttemptPhase;
using phase::EndCause;
using phase::isTerminal;
using phase::JobPhase;
using phase::parseAttemptPhase;
using phase::parseEndCause;
using phase::parseJobPhase;
using phase::toString;

// One het component of an attempt (a single-pool job has one, index 0), as Slurm last
// reported it.
struct ComponentRecord {
  int index = 0;                   // het offset; pool order of the spec
  std::string pool;                // the spec pool's name
  uint64_t slurm_job_id = 0;       // numeric id; 0 until known
  std::string sluid;               // empty until resolved; every lifecycle call uses it
  std::vector<std::string> state;  // Slurm's job_state: base first, then flags
  std::string reason;              // Slurm's state_reason ("Resources", "None", …)
  std::optional<int> exit_code;    // return code when Slurm reported one
  std::optional<int> signal;       // signal number when the job was signalled
  std::string nodes;               // allocated node list, e.g. "gpu[1-2]"
  int64_t start_time = 0;          // Unix seconds from Slurm; 0 unknown
  int64_t end_time = 0;            // while being preempted: when Slurm ends it
  int64_t preempt_time = 0;        // when Slurm chose to preempt it; 0 when it has not

  bool operator==(const ComponentRecord&) const = default;
};

struct AttemptRecord {
  std::string job_id;
  int number = 1;  // 1-based
  AttemptPhase phase = AttemptPhase::kStaging;
  std::string reason;  // for people: Slurm's pending reason, why it failed, …
  EndCause cause = EndCause::kNone;
  std::string submit_token;   // "tp-…"; carried in the Slurm job's comment
  std::string staging_dir;    // the attempt dir on the shared filesystem
  uint64_t slurm_job_id = 0;  // from the submit receipt (the het leader's); 0 unknown
  std::vector<ComponentRecord> components;
  int64_t created_ms = 0;
  int64_t submitted_ms = 0;  // when the submit was sent; 0 before
  int64_t ended_ms = 0;      // when it reached a terminal phase; 0 before
  // Lost-receipt lookups (SubmitUnknown) and missing-record polls.
  int lookups = 0;
  int64_t next_lookup_ms = 0;
  int missing_polls = 0;  // consecutive polls in which Slurm had no record of it
  // Set by requestAbandon (an operator); commit() never writes these.
  bool abandon_requested = false;
  std::string abandoned_by;
  std::string abandon_reason;

  bool operator==(const AttemptRecord&) const = default;
};

struct JobRecord {
  std::string id;  // "<name>-<8 hex>" (launch::isValidJobId)
  std::string name;
  std::string owner;
  std::map<std::string, std::string> labels;
  std::string spec;  // the spec exactly as submitted (YAML or JSON text)
  JobPhase phase = JobPhase::kPending;
  std::string reason;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  int64_t next_attempt_ms = 0;  // Retrying: when the next attempt may start
  // Set by requestCancel; commit() never writes these.
  bool cancel_requested = false;
  std::string cancel_requested_by;
  // Set by the store. `version` counts the job's commits: a Change carries the version its
  // job record was read at, and commit() refuses it ("store.stale") once the row moved on.
  // `change_seq` is the store's change sequence at the job's last write of any kind.
  int64_t version = 0;
  int64_t change_seq = 0;
  // The Unix user Slurm runs the job as under slurm.identity per_user, fixed when the job is
  // accepted; "" under shared (the site's slurm.user). Every request about this job's Slurm
  // jobs (submit, cancel, read) goes as this user.
  std::string run_as = {};

  bool operator==(const JobRecord&) const = default;
};

struct EventRecord {
  int64_t seq = 0;  // assigned by the store, increasing
  std::string job_id;
  int attempt = 0;  // 0: about the job itself
  int64_t time_ms = 0;
  std::string from;    // the phase before ("" for a creation)
  std::string to;      // the phase after
  std::string reason;  // why, for people
  std::string actor;   // "reconciler", or the user who asked (cancel, abandon)

  bool operator==(const EventRecord&) const = default;
};

// An Idempotency-Key of POST /v1/jobs bound to the job its first request created
// (idempotency_keys.h): per owner, so two users' equal keys never meet.
struct IdempotencyRecord {
  std::string owner;
  std::string key;             // as the client sent it (the API checked its form)
  std::string request_sha256;  // of the first request's body: a retry must match it
  std::string job_id;
  int64_t created_ms = 0;  // the API's clock when the job was created; the retention counts from it

  bool operator==(const IdempotencyRecord&) const = default;
};

// A job with all of its attempts, oldest first.
struct JobView {
  JobRecord job;
  std::vector<AttemptRecord> attempts;

  bool operator==(const JobView&) const = default;
};

// One decision of the reconciler, applied in one transaction.
// The fence by the read: `job->version` is the version the decision was built from; the
// commit is refused ("store.stale", nothing written) when the stored row has another, so a
// decision made from a stale read — a paused leader's, a replica's that lost the lease —
// changes nothing. `read_epoch`, when not 0, is the leader lease's epoch under which the
// job was read: the commit is refused ("store.fenced") unless it is still the lease's.
struct Change {
  std::optional<JobRecord> job;         // upserted, except the cancel_* columns
  std::vector<AttemptRecord> attempts;  // upserted with their components, except abandon_*
  std::vector<EventRecord> events;      // appended (seq assigned)
  // false: a change the reconciler makes again if a crash of the machine loses it (a receipt:
  // the attempt is then found by its submit token; SLUIDs: read again), so its commit does
  // not wait for the store's log to reach the disk (TransactionKind::kWriteUnsynced). It is
  // visible at once, survives a crash of the process, and is made durable, in order, by the
  // next synced commit.
  bool synced = true;
  int64_t read_epoch = 0;
};

// What changed among the active jobs since a change sequence (JobStore::activeJobsSince).
struct ActiveJobsDelta {
  // true: `active` is every active job (a first read, or a store that cannot tell changes):
  // the caller replaces what it holds. false: `active` is the active jobs written after the
  // sequence asked for, and `ended` the jobs written after it that are no longer active.
  bool full = true;
  std::vector<JobView> active;
  std::vector<std::string> ended;
  int64_t through_seq = 0;  // the newest change sequence this read saw: ask from it next
};

struct JobQuery {
  std::optional<std::string> owner;  // only this owner's jobs
  std::optional<JobPhase> phase;
  std::optional<std::string> name;                           // exact metadata.name
  std::optional<std::pair<std::string, std::string>> label;  // key=value
  int limit = 100;                                           // 1..1000
  std::string continue_token;  // from the previous page; "" for the first
};

// What a listing says of a job's attempts: how many, and the last one (without its
// components), read in the listing's own snapshot.
struct AttemptSummary {
  int count = 0;
  std::optional<AttemptRecord> last;
};

struct JobPage {
  std::vector<JobRecord> jobs;           // newest first
  std::vector<AttemptSummary> attempts;  // attempts[i] is jobs[i]'s
  std::string continue_token;            // "" when this was the last page
};

class JobStore {
 public:
  virtual ~JobStore() = default;

  // A new job (phase Pending) and its creation event (its job_id may be left empty).
  // Errors: "store.job_exists", "store.invalid", "store.io".
  virtual Status createJob(const JobRecord& job, const EventRecord& created) = 0;
  // createJob, and `key` bound to the job in the same transaction: both or neither. Every
  // key (of any owner) created before `expired_before_ms` is deleted first, so the table
  // holds only the retention's keys plus those that expired since the last keyed submit.
  // Errors: createJob's, and "store.key_exists" (the owner bound this key at or after
  // `expired_before_ms`: nothing written; findIdempotencyKey reads it). This default, for
  // fakes, keeps no keys: "store.invalid".
  virtual Status createKeyedJob(const JobRecord& job, const EventRecord& created,
                                const IdempotencyRecord& key, int64_t expired_before_ms) {
    (void)job, (void)created, (void)key, (void)expired_before_ms;
    return fail(codes::kInvalid, "key", "this store keeps no idempotency keys");
  }
  // The owner's `key` bound at or after `not_before_ms` (an older one has expired, whether
  // or not it was pruned yet); nullopt when none. This default, for fakes: none.
  virtual Result<std::optional<IdempotencyRecord>> findIdempotencyKey(const std::string& owner,
                                                                      const std::string& key,
                                                                      int64_t not_before_ms) {
    (void)owner, (void)key, (void)not_before_ms;
    return std::optional<IdempotencyRecord>();
  }
  // nullopt when no job has that id.
  virtual Result<std::optional<JobView>> getJob(const std::string& id) = 0;
  // Errors: "store.bad_limit", "store.bad_continue" (field "continue"), "store.io".
  virtual Result<JobPage> listJobs(const JobQuery& query) = 0;
  // Every job not in a terminal phase, with its attempts: what the reconciler works on.
  virtual Result<std::vector<JobView>> activeJobs() = 0;
  // The active jobs written after change sequence `since_seq` (0: all of them, full), so a
  // control loop that keeps what it read reads only what changed. This default, for fakes,
  // always answers in full.
  virtual Result<ActiveJobsDelta> activeJobsSince(int64_t since_seq) {
    (void)since_seq;
    auto all = activeJobs();
    if (!all) return tl::unexpected(all.error());
    return ActiveJobsDelta{true, std::move(*all), {}, 0};
  }
  // The leader lease's epoch this replica holds (PostgreSQL replicas), 0 when it holds none or
  // the store has no lease: what a reconciler puts in Change::read_epoch.
  virtual int64_t fenceEpoch() const { return 0; }
  virtual Result<std::vector<EventRecord>> events(const std::string& job_id) = 0;
  // Jobs per phase, for /metrics (a phase without jobs is absent).
  virtual Result<std::map<JobPhase, int64_t>> countJobsByPhase() = 0;
  // Ended attempts per (terminal phase, end cause), for /metrics: a counter that survives
  // restarts, since attempts are never deleted (a pair without attempts is absent).
  virtual Result<std::map<std::pair<AttemptPhase, EndCause>, int64_t>> countEndedAttempts() = 0;

  // Atomic. Errors: "store.io"; "store.invalid" (a record the store cannot keep: an empty
  // id, an attempt number below 1, an attempt without submit token, a repeated component
  // index — nothing was written), "store.constraint" (a record refers to a job that does not
  // exist, or reuses another attempt's submit token — nothing was written), "store.stale"
  // (the job's row moved on since the version the change was built from), "store.fenced",
  // "store.busy" (the database could not be had in time: another writer holds it).
  virtual Status commit(const Change& change) = 0;
  // Several changes (e.g. one poll cycle's) in order. SqlJobStore applies them in one
  // transaction, and one fsync instead of one per change, which is what bounds a durable
  // store's commit rate. A change refused as stale is left out (the others are written) and
  // its index added to `stale` when given; without `stale`, it fails the whole call. Any
  // other error writes nothing. This default, for fakes, commits them one by one and stops
  // at the first error.
  virtual Status commitAll(const std::vector<Change>& changes,
                           std::vector<std::size_t>* stale = nullptr) {
    for (std::size_t i = 0; i < changes.size(); ++i) {
      auto done = commit(changes[i]);
      if (!done && stale != nullptr && done.error().code == codes::kStale) {
        stale->push_back(i);
        continue;
      }
      if (!done) return done;
    }
    return ok();
  }

  // Marks a job for cancellation (idempotent) with an event naming `actor`.
  // Errors: "store.not_found", "store.already_terminal", "store.io".
  virtual Status requestCancel(const std::string& job_id, const std::string& actor,
                               int64_t now_ms) = 0;
  // Marks a SubmitUnknown attempt for abandonment, recording who and why.
  // Errors: "store.not_found", "store.not_submit_unknown", "store.io".
  virtual Status requestAbandon(const std::string& job_id, int attempt, const std::string& actor,
                                const std::string& reason, int64_t now_ms) = 0;
};

}  // namespace tuneplane::store
