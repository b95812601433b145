// Looking at a store's database without changing it: `tuneplane store copy` reads its source
// this way, and `tuneplane doctor` judges the site's database from a StoreProbe. Nothing here
// migrates, takes the leader lease or writes a row: SQLite is opened SQLITE_OPEN_READONLY
// (and query_only), PostgreSQL with default_transaction_read_only, and the schema is judged
// by inspectDatabase (schema.h), which only reads.
// Thread-safety: pure functions (they read the password file and the database).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

// The leader_lease row (leader_lease.h) as a replica last wrote it.
struct LeaseRow {
  int64_t epoch = 0;
  std::string holder;  // the replica's name (host:pid)
  int64_t holder_pid = 0;
  int64_t expires_ms = 0;  // by the database server's clock

  bool operator==(const LeaseRow&) const = default;
};

// What a look at a database found.
struct StoreProbe {
  std::string description;  // describeDb(db): a URI without its password
  Dialect dialect = Dialect::kSqlite;
  int64_t version = 0;            // the schema version found; 0 for a new, empty database
  int current_version = 0;        // the schema this build writes (currentSchemaVersion())
  std::optional<Error> refusal;   // why this build would refuse it (inspectDatabase's error)
  std::optional<LeaseRow> lease;  // PostgreSQL: the row, once a replica has taken the lease
  int64_t now_ms = 0;             // PostgreSQL: the server's clock, to judge the lease by
};

// A connection that can only read `db` (a SQLite path or a postgresql:// URI), with the
// password from `password_file` (PostgreSQL only; otherwise PGPASSFILE / ~/.pgpass).
// Errors: "store.invalid" (field `password_field`) for an unusable password file or one
// given with a SQLite path; "store.io" for a SQLite file that does not exist or a server
// that cannot be reached.
Result<std::unique_ptr<Connection>> openReadOnly(const std::string& db,
                                                 const std::optional<std::string>& password_file,
                                                 const std::string& password_field);

// Opens `db` read-only and reports its schema version and, on PostgreSQL, the lease row.
// A database this build would refuse (newer, corrupt, another program's) is a probe with
// `refusal` set, not an error. Errors: those of openReadOnly, and of reading the lease row.
Result<StoreProbe> probeStore(const std::string& db,
                              const std::optional<std::string>& password_file,
                              const std::string& password_field);

}  // namespace tuneplane::store
