#include "store/job_writes.h"

#include <set>
#include <utility>

#include "store/error_codes.h"
#include "store/record_rows.h"

namespace tuneplane::store {
namespace {

// The store's change sequence after this write: one more than any job's (writes are
// serialized, so every write gets its own, in commit order; jobs_by_change makes it a seek).
#define TP_NEXT_CHANGE_SEQ "(SELECT coalesce(max(change_seq), 0) + 1 FROM jobs)"

constexpr const char* kInsertJobSql =
    "INSERT INTO jobs (id, name, owner, spec, phase, reason, created_ms, updated_ms,"
    " next_attempt_ms, version, run_as, change_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
    " ?9, ?10, ?11, " TP_NEXT_CHANGE_SEQ ")";

// A copied job keeps its version and change sequence (store_copy.h: every read answers the
// same on the copy).
constexpr const char* kInsertCopiedJobSql =
    "INSERT INTO jobs (id, name, owner, spec, phase, reason, created_ms, updated_ms,"
    " next_attempt_ms, version, run_as, change_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
    " ?9, ?10, ?11, ?12)";

// Every column but cancel_requested / cancel_requested_by: those are requestCancel's, and a
// commit carrying a JobRecord read before the request must not clear it. Compare-and-set on
// the version the record was read at (?10): a row that moved on is left alone and no row
// comes back, which the caller reports as stale.
const std::string& upsertJobSql() {
  static const std::string sql =
      std::string(kInsertJobSql) +
      " ON CONFLICT (id) DO UPDATE SET name = excluded.name, owner = excluded.owner,"
      " spec = excluded.spec, phase = excluded.phase, reason = excluded.reason,"
      " created_ms = excluded.created_ms, updated_ms = excluded.updated_ms,"
      " next_attempt_ms = excluded.next_attempt_ms, run_as = excluded.run_as,"
      " version = jobs.version + 1,"
      " change_seq = " TP_NEXT_CHANGE_SEQ " WHERE jobs.version = ?10 RETURNING version";
  return sql;
}

// A cancel request moves the job's change sequence, not its version: it writes a column no
// commit writes and the control loop reads it on every cycle whatever the job's phase, so a
// decision read before it may still be committed.
constexpr const char* kTouchJobSql =
    "UPDATE jobs SET change_seq = " TP_NEXT_CHANGE_SEQ " WHERE id = ?1";
// An abandon request moves the version too: it is read only while its attempt is
// SubmitUnknown, so a decision read before it that moves the attempt on (found by its
// token, sent again) would leave the accepted request unread for good. That decision is
// refused as stale instead, and the next cycle reads the abandon (issue 45).
constexpr const char* kTouchAndMoveJobSql =
    "UPDATE jobs SET version = version + 1, change_seq = " TP_NEXT_CHANGE_SEQ " WHERE id = ?1";
#undef TP_NEXT_CHANGE_SEQ

// Every column but the abandon_* ones, which are requestAbandon's.
constexpr const char* kUpsertAttemptSql =
    "INSERT INTO attempts (job_id, number, phase, reason, cause, submit_token, staging_dir,"
    " slurm_job_id, created_ms, submitted_ms, ended_ms, lookups, next_lookup_ms, missing_polls)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
    " ON CONFLICT (job_id, number) DO UPDATE SET phase = excluded.phase,"
    " reason = excluded.reason, cause = excluded.cause, submit_token = excluded.submit_token,"
    " staging_dir = excluded.staging_dir, slurm_job_id = excluded.slurm_job_id,"
    " created_ms = excluded.created_ms, submitted_ms = excluded.submitted_ms,"
    " ended_ms = excluded.ended_ms, lookups = excluded.lookups,"
    " next_lookup_ms = excluded.next_lookup_ms, missing_polls = excluded.missing_polls";

constexpr const char* kInsertComponentSql =
    "INSERT INTO components (job_id, attempt, idx, pool, slurm_job_id, sluid, state, reason,"
    " exit_code, signal, nodes, start_time, end_time, preempt_time)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";

constexpr const char* kInsertEventSql =
    "INSERT INTO events (job_id, attempt, time_ms, from_phase, to_phase, reason, actor)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

// Events keep their seq. PostgreSQL's seq is GENERATED ALWAYS, which takes a value only
// when the insert says it overrides the generator.
constexpr const char* kInsertSqliteEventWithSeqSql =
    "INSERT INTO events (seq, job_id, attempt, time_ms, from_phase, to_phase, reason, actor)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
constexpr const char* kInsertPostgresEventWithSeqSql =
    "INSERT INTO events (seq, job_id, attempt, time_ms, from_phase, to_phase, reason, actor)"
    " OVERRIDING SYSTEM VALUE VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

tl::unexpected<Error> invalid(std::string field, std::string message) {
  return fail(codes::kInvalid, std::move(field), std::move(message));
}

Status run(Result<Query>& q) {
  if (!q) return fail(q.error());
  return q->run();
}

Status writeJob(Connection& connection, const std::string& sql, const JobRecord& job,
                bool compare_version = false) {
  {
    auto q = connection.query(sql);
    if (!q) return fail(q.error());
    q->bind(1, job.id).bind(2, job.name).bind(3, job.owner).bind(4, job.spec);
    q->bind(5, toString(job.phase)).bind(6, job.reason).bind(7, job.created_ms);
    q->bind(8, job.updated_ms).bind(9, job.next_attempt_ms).bind(10, job.version);
    q->bind(11, job.run_as);
    if (sql == kInsertCopiedJobSql) q->bind(12, job.change_seq);
    auto row = q->step();
    if (!row) return fail(row.error());
    if (compare_version && !*row) {
      return fail(codes::kStale, "job.version",
                  "job " + job.id + " changed since it was read (at version " +
                      std::to_string(job.version) + "): this write was built from a stale read");
    }
    if (*row) {
      if (auto done = q->run(); !done) return done;  // the rest of RETURNING's one row
    }
  }

  // Labels are replaced as a whole: the record is the truth.
  auto clear = connection.query("DELETE FROM job_labels WHERE job_id = ?1");
  if (clear) clear->bind(1, job.id);
  if (auto done = run(clear); !done) return done;
  for (const auto& [key, value] : job.labels) {
    auto insert =
        connection.query("INSERT INTO job_labels (job_id, key, value) VALUES (?1, ?2, ?3)");
    if (insert) insert->bind(1, job.id).bind(2, key).bind(3, value);
    if (auto done = run(insert); !done) return done;
  }
  return ok();
}

Status writeAttempt(Connection& connection, const AttemptRecord& a) {
  {
    auto q = connection.query(kUpsertAttemptSql);
    if (!q) return fail(q.error());
    q->bind(1, a.job_id).bind(2, int64_t{a.number}).bind(3, toString(a.phase));
    q->bind(4, a.reason).bind(5, toString(a.cause)).bind(6, a.submit_token);
    q->bind(7, a.staging_dir).bind(8, toStored(a.slurm_job_id)).bind(9, a.created_ms);
    q->bind(10, a.submitted_ms).bind(11, a.ended_ms).bind(12, int64_t{a.lookups});
    q->bind(13, a.next_lookup_ms).bind(14, int64_t{a.missing_polls});
    if (auto done = q->run(); !done) return done;
  }
  auto clear = connection.query("DELETE FROM components WHERE job_id = ?1 AND attempt = ?2");
  if (clear) clear->bind(1, a.job_id).bind(2, int64_t{a.number});
  if (auto done = run(clear); !done) return done;
  for (const ComponentRecord& c : a.components) {
    auto q = connection.query(kInsertComponentSql);
    if (!q) return fail(q.error());
    q->bind(1, a.job_id).bind(2, int64_t{a.number}).bind(3, int64_t{c.index}).bind(4, c.pool);
    q->bind(5, toStored(c.slurm_job_id)).bind(6, c.sluid).bind(7, encodeState(c.state));
    q->bind(8, c.reason).bind(9, c.exit_code).bind(10, c.signal).bind(11, c.nodes);
    q->bind(12, c.start_time).bind(13, c.end_time).bind(14, c.preempt_time);
    if (auto done = q->run(); !done) return done;
  }
  return ok();
}

Status appendEvent(Connection& connection, const EventRecord& e) {
  auto q = connection.query(kInsertEventSql);
  if (!q) return fail(q.error());
  q->bind(1, e.job_id).bind(2, int64_t{e.attempt}).bind(3, e.time_ms).bind(4, e.from);
  q->bind(5, e.to).bind(6, e.reason).bind(7, e.actor);
  return q->run();
}

}  // namespace

Status validateJob(const JobRecord& job, const std::string& field) {
  if (job.id.empty()) return invalid(field + ".id", "a job needs an id");
  return ok();
}

Status validateChange(const Change& change) {
  if (change.job) {
    if (auto valid = validateJob(*change.job, "job"); !valid) return valid;
  }
  for (std::size_t i = 0; i < change.attempts.size(); ++i) {
    const AttemptRecord& a = change.attempts[i];
    const std::string field = "attempts[" + std::to_string(i) + "]";
    if (a.job_id.empty()) return invalid(field + ".job_id", "an attempt needs its job's id");
    if (a.number < 1) return invalid(field + ".number", "attempt numbers start at 1");
    if (a.submit_token.empty()) {
      return invalid(field + ".submit_token", "an attempt is stored with its submit token");
    }
    std::set<int> indexes;
    for (std::size_t k = 0; k < a.components.size(); ++k) {
      const int index = a.components[k].index;
      if (index < 0 || !indexes.insert(index).second) {
        return invalid(field + ".components[" + std::to_string(k) + "].index",
                       "component indexes are distinct and start at 0");
      }
    }
  }
  for (std::size_t i = 0; i < change.events.size(); ++i) {
    if (change.events[i].job_id.empty()) {
      return invalid("events[" + std::to_string(i) + "].job_id", "an event names its job");
    }
  }
  return ok();
}

Status insertNewJob(Connection& connection, const JobRecord& job, const EventRecord& created) {
  if (auto valid = validateJob(job, "job"); !valid) return valid;
  if (!created.job_id.empty() && created.job_id != job.id) {
    return invalid("created.job_id", "the creation event must be the new job's");
  }
  {
    auto exists = connection.query("SELECT 1 FROM jobs WHERE id = ?1");
    if (!exists) return fail(exists.error());
    exists->bind(1, job.id);
    auto row = exists->step();
    if (!row) return fail(row.error());
    if (*row) return fail(codes::kJobExists, "id", "a job with id " + job.id + " exists");
  }
  if (auto done = writeJob(connection, kInsertJobSql, job); !done) return done;
  EventRecord event = created;
  event.job_id = job.id;
  return appendEvent(connection, event);
}

Status applyChange(Connection& connection, const Change& change) {
  if (auto valid = validateChange(change); !valid) return valid;
  if (change.job) {
    if (auto done = writeJob(connection, upsertJobSql(), *change.job, /*compare_version=*/true);
        !done) {
      return done;
    }
  }
  for (const AttemptRecord& attempt : change.attempts) {
    if (auto done = writeAttempt(connection, attempt); !done) return done;
  }
  for (const EventRecord& event : change.events) {
    if (auto done = appendEvent(connection, event); !done) return done;
  }
  return ok();
}

Status insertCopiedJob(Connection& connection, const JobView& view,
                       const std::vector<EventRecord>& events) {
  Change change;
  change.job = view.job;
  change.attempts = view.attempts;
  if (auto valid = validateChange(change); !valid) return valid;
  if (auto done = writeJob(connection, kInsertCopiedJobSql, view.job); !done) return done;
  // The request columns, which neither the insert nor commit writes.
  auto cancel = connection.query(
      "UPDATE jobs SET cancel_requested = ?2, cancel_requested_by = ?3 WHERE id = ?1");
  if (cancel) {
    cancel->bind(1, view.job.id).bind(2, int64_t{view.job.cancel_requested ? 1 : 0});
    cancel->bind(3, view.job.cancel_requested_by);
  }
  if (auto done = run(cancel); !done) return done;
  for (const AttemptRecord& a : view.attempts) {
    if (auto done = writeAttempt(connection, a); !done) return done;
    auto abandon = connection.query(
        "UPDATE attempts SET abandon_requested = ?3, abandoned_by = ?4, abandon_reason = ?5"
        " WHERE job_id = ?1 AND number = ?2");
    if (abandon) {
      abandon->bind(1, a.job_id).bind(2, int64_t{a.number});
      abandon->bind(3, int64_t{a.abandon_requested ? 1 : 0}).bind(4, a.abandoned_by);
      abandon->bind(5, a.abandon_reason);
    }
    if (auto done = run(abandon); !done) return done;
  }
  const char* sql = connection.dialect() == Dialect::kPostgres ? kInsertPostgresEventWithSeqSql
                                                               : kInsertSqliteEventWithSeqSql;
  for (const EventRecord& e : events) {
    auto q = connection.query(sql);
    if (!q) return fail(q.error());
    q->bind(1, e.seq).bind(2, e.job_id).bind(3, int64_t{e.attempt}).bind(4, e.time_ms);
    q->bind(5, e.from).bind(6, e.to).bind(7, e.reason).bind(8, e.actor);
    if (auto done = q->run(); !done) return done;
  }
  return ok();
}

Status continueEventSequence(Connection& connection) {
  if (connection.dialect() != Dialect::kPostgres) return ok();
  // setval with is_called true: the next value is max + 1. No events: nothing to move.
  auto q = connection.query(
      "SELECT setval(pg_get_serial_sequence('events', 'seq'), max(seq)) FROM events"
      " HAVING count(*) > 0");
  return run(q);
}

Status markCancelRequested(Connection& connection, const std::string& job_id,
                           const std::string& actor, int64_t now_ms) {
  std::string phase;
  {
    auto q = connection.query("SELECT phase, cancel_requested FROM jobs WHERE id = ?1");
    if (!q) return fail(q.error());
    q->bind(1, job_id);
    auto row = q->step();
    if (!row) return fail(row.error());
    if (!*row) return fail(codes::kNotFound, "job_id", "no job has id " + job_id);
    phase = q->text(0);
    if (q->integer(1) != 0) return ok();  // already requested: nothing changes
  }
  const auto parsed = parseJobPhase(phase);
  if (parsed && isTerminal(*parsed)) {
    return fail(codes::kAlreadyTerminal, "job_id",
                "job " + job_id + " has already ended (" + phase + ")");
  }
  auto mark = connection.query(
      "UPDATE jobs SET cancel_requested = 1, cancel_requested_by = ?2 WHERE id = ?1");
  if (mark) mark->bind(1, job_id).bind(2, actor);
  if (auto done = run(mark); !done) return done;
  auto touch = connection.query(kTouchJobSql);
  if (touch) touch->bind(1, job_id);
  if (auto done = run(touch); !done) return done;
  return appendEvent(connection, EventRecord{0, job_id, 0, now_ms, phase, phase,
                                             "cancel requested by " + actor, actor});
}

Status markAbandonRequested(Connection& connection, const std::string& job_id, int attempt,
                            const std::string& actor, const std::string& reason, int64_t now_ms) {
  std::string phase;
  {
    auto q = connection.query(
        "SELECT phase, abandon_requested FROM attempts WHERE job_id = ?1 AND number = ?2");
    if (!q) return fail(q.error());
    q->bind(1, job_id).bind(2, int64_t{attempt});
    auto row = q->step();
    if (!row) return fail(row.error());
    if (!*row) {
      return fail(codes::kNotFound, "attempt",
                  "job " + job_id + " has no attempt " + std::to_string(attempt));
    }
    phase = q->text(0);
    if (phase != toString(AttemptPhase::kSubmitUnknown)) {
      return fail(codes::kNotSubmitUnknown, "attempt",
                  "attempt " + std::to_string(attempt) + " of job " + job_id + " is " + phase +
                      ", not SubmitUnknown: only a lost receipt can be abandoned");
    }
    if (q->integer(1) != 0) return ok();  // already requested: the first request stands
  }
  auto mark = connection.query(
      "UPDATE attempts SET abandon_requested = 1, abandoned_by = ?3, abandon_reason = ?4"
      " WHERE job_id = ?1 AND number = ?2");
  if (mark) mark->bind(1, job_id).bind(2, int64_t{attempt}).bind(3, actor).bind(4, reason);
  if (auto done = run(mark); !done) return done;
  auto touch = connection.query(kTouchAndMoveJobSql);
  if (touch) touch->bind(1, job_id);
  if (auto done = run(touch); !done) return done;
  return appendEvent(connection,
                     EventRecord{0, job_id, attempt, now_ms, phase, phase,
                                 "abandon requested by " + actor + ": " + reason, actor});
}

}  // namespace tuneplane::store
