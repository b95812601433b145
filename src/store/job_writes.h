// The store's writes, as functions over the writer connection. Each runs inside a write
// transaction the caller holds (Transaction::Kind::kWrite), so a failure anywhere leaves
// nothing behind once the caller rolls back. The column ownership that lets two writers
// share a job without undoing each other is kept here:
//   commit (applyChange)  writes every jobs column but cancel_*, every attempts column but
//                         abandon_*, and replaces the attempt's components;
//   markCancelRequested   writes only jobs.cancel_*;
//   markAbandonRequested  writes only attempts.abandon_*.
// Thread-safety: none beyond the Connection's (one thread at a time).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/job_store.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

// The rules a record must meet before any of it is written ("store.invalid", naming the
// field): non-empty ids, attempt numbers from 1, a submit token on every attempt,
// component indexes from 0.
Status validateJob(const JobRecord& job, const std::string& field);
Status validateChange(const Change& change);

// A new job, its labels and its creation event. Errors: "store.job_exists".
Status insertNewJob(Connection& connection, const JobRecord& job, const EventRecord& created);
Status applyChange(Connection& connection, const Change& change);
// A job exactly as another database held it (store_copy.h): every column of the job, its
// labels and attempts (the cancel_* and abandon_* request columns included), the attempts'
// components, and `events` with their seq numbers as they were. Errors: "store.invalid" (as
// commit), "store.constraint" (the job, an attempt's token or an event's seq exists).
Status insertCopiedJob(Connection& connection, const JobView& view,
                       const std::vector<EventRecord>& events);
// After insertCopiedJob: the next event the store appends gets a seq above every copied one
// (PostgreSQL's identity sequence is moved past them; SQLite's AUTOINCREMENT does it itself).
Status continueEventSequence(Connection& connection);

// Errors: "store.not_found", "store.already_terminal". Idempotent: a job already marked
// keeps its first requester and gets no second event.
Status markCancelRequested(Connection& connection, const std::string& job_id,
                           const std::string& actor, int64_t now_ms);
// Errors: "store.not_found", "store.not_submit_unknown". Idempotent like cancel.
Status markAbandonRequested(Connection& connection, const std::string& job_id, int attempt,
                            const std::string& actor, const std::string& reason, int64_t now_ms);

}  // namespace tuneplane::store
