// Which JobStore a `server.db` / `serve --db` value names: a PostgreSQL connection URI
// (postgresql://… or postgres://…) opens a PostgresJobStore, anything else is a SQLite file
// path. The PostgreSQL password comes from a file (`server.db_password_file`) or libpq's own
// PGPASSFILE / ~/.pgpass — never from the command line, so it is never in `ps`; and since a
// URI may still carry one, describeDb() is what messages and logs print.
// Thread-safety: pure functions (openJobStore reads the password file).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "store/job_store.h"
#include "store/leader_lease.h"
#include "store/postgres_job_store.h"

namespace tuneplane::store {

// For logs and messages: a path as it is, a URI with any password replaced by "***".
std::string describeDb(const std::string& db);

inline constexpr const char* kDbPasswordField = "server.db_password_file";

// The PostgreSQL password kept in `path`, its trailing newline dropped. Errors:
// "store.invalid" (field `field`) for a file that cannot be read, is empty, or is readable by
// others than its owner; the message names the file, never its content.
Result<std::string> readPasswordFile(const std::string& path,
                                     const std::string& field = kDbPasswordField);

struct OpenedStore {
  std::unique_ptr<JobStore> store;
  LeaderLease* lease = nullptr;          // PostgreSQL: this replica's lease (owned by the store)
  PostgresJobStore* postgres = nullptr;  // PostgreSQL: the store, for its wake-ups
};

// PostgreSQL stores are opened as replicas (PostgresJobStore::enableLeadership with `lease`);
// SQLite is one process, always the leader.
// Errors: those of SqliteJobStore::open / PostgresJobStore::open; "store.invalid" (field
// "server.db_password_file") for a password file that cannot be read, is empty, or is
// readable by others than its owner (the message names the file, never its content), or
// for a password file given with a SQLite path.
Result<OpenedStore> openJobStore(const std::string& db,
                                 const std::optional<std::string>& password_file,
                                 LeaseOptions lease = {});

// /metrics text for a replica's lease: tuneplane_leader (1 on the leader),
// tuneplane_lease_epoch, tuneplane_lease_transitions_total and
// tuneplane_store_fenced_writes_total (reconciler writes refused by the epoch).
std::string renderLeaseMetrics(const LeaderLease& lease);

}  // namespace tuneplane::store
