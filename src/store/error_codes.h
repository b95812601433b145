// The stable error codes of the store (job_store.h), made here and branched on elsewhere (the
// API's statuses, the job service's retries, the schema's refusals). Scripts and tests match
// on these strings, so a code is never renamed or reused for another meaning.
#pragma once

#include <string_view>

namespace tuneplane::store::codes {

inline constexpr const char* kIo = "store.io";                  // SQLite failed (busy, disk, …)
inline constexpr const char* kCorrupt = "store.corrupt";        // not a database, or damaged
inline constexpr const char* kConstraint = "store.constraint";  // a write broke a rule
inline constexpr const char* kInvalid = "store.invalid";        // a value the store refuses
inline constexpr const char* kNotTuneplane = "store.not_tuneplane";  // another program's file
inline constexpr const char* kNewerVersion = "store.newer_version";  // a later schema
inline constexpr const char* kJobExists = "store.job_exists";
// createKeyedJob: the owner's Idempotency-Key is bound to a job already (idempotency_keys.h).
inline constexpr const char* kKeyExists = "store.key_exists";
inline constexpr const char* kNotFound = "store.not_found";
inline constexpr const char* kAlreadyTerminal = "store.already_terminal";
inline constexpr const char* kNotSubmitUnknown = "store.not_submit_unknown";
inline constexpr const char* kBadLimit = "store.bad_limit";
inline constexpr const char* kBadContinue = "store.bad_continue";
// `tuneplane store copy` refused a target that already holds jobs (store_copy.h).
inline constexpr const char* kTargetNotEmpty = "store.target_not_empty";
// A reconciler's write refused because its replica no longer holds the lease's epoch
// (leader_lease.h): another replica took over while it was paused or cut off.
inline constexpr const char* kFenced = "store.fenced";
// A reconciler's write refused because the job's row changed since the version the write was
// built from (JobRecord::version): the next cycle reads it again and decides anew.
inline constexpr const char* kStale = "store.stale";
// The database could not be had in time (PostgreSQL's lock_timeout or statement_timeout: a
// writer that holds it is stuck; SQLite's busy timeout). Nothing was written; try again.
inline constexpr const char* kBusy = "store.busy";

// True for every code above: the store could not do it.
inline bool isStoreCode(std::string_view code) {
  return code.starts_with("store.");
}

}  // namespace tuneplane::store::codes
