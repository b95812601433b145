// `tuneplane store copy`: moves a site's state from one database to another (SQLite to
// PostgreSQL, when a site grows into several `serve` replicas). Every job is copied with
// every column — its labels, the cancel request, each attempt with its abandon request and
// het components, and every event with its seq number — so every read of the store (getJob,
// listJobs and its keyset pages, events) answers the same on the target as on the source.
// The leader lease row is not copied: it belongs to the replicas of the target.
//
// All or nothing: the source is read in one read transaction (one snapshot) on a connection
// that cannot write, and the target is written in one write transaction (which holds the
// writers' lock of pg_connection.h), so a failure anywhere leaves the target without a row.
// A target that already holds a job is refused, checked before anything is written and again
// under the writers' lock. Stop `serve` on the source first: jobs it changes after the
// snapshot are not copied.
// Thread-safety: functions over connections the caller uses alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

struct CopyCounts {
  int64_t jobs = 0;
  int64_t attempts = 0;
  int64_t components = 0;
  int64_t events = 0;

  bool operator==(const CopyCounts&) const = default;
};

// Copies every job of `source` into `target`. REQUIRES: inspectDatabase accepted both, the
// source has a schema (version 1 or later), the target is migrated to the current one, and
// no transaction is open on either. Errors: "store.target_not_empty" (nothing written),
// "store.corrupt" (a source row the reads cannot decode, or rows that belong to no job),
// and those of the reads and writes; on any error the target is left as it was.
Result<CopyCounts> copyJobs(Connection& source, Connection& target);

struct CopyRequest {
  std::string from;  // a SQLite file: "sqlite:PATH" or PATH
  std::string to;    // a postgresql:// URI (its password, if any, is never printed)
  std::optional<std::string> password_file;        // the target's password; else PGPASSFILE
  std::string password_field = "--password-file";  // names the file's setting in errors
};

// Opens the source read-only (never changing it: a newer, damaged or foreign file is
// refused, an older schema is read as it is), opens the target, refuses it if it holds a job
// or is newer or foreign, migrates it to the current schema, and copies (copyJobs).
// Errors: "store.invalid" (a source that is not a SQLite file or has no schema, a target that
// is not a PostgreSQL URI, an unusable password file), "store.target_not_empty", and those
// of opening, inspecting and copying. Messages name the target without its password.
Result<CopyCounts> copyStore(const CopyRequest& request);

}  // namespace tuneplane::store
