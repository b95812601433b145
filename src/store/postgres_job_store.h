// PostgresJobStore: the JobStore in a PostgreSQL 15+ database, for sites that run several
// `serve` replicas or keep their state in the database they already operate.
//
//   open(uri)   connect (libpq URI; the password from options, PGPASSFILE or ~/.pgpass,
//               never from the command line) → refuse a database that has tables TunePlane
//               did not make or a newer schema (schema.h) → migrate under the writers' lock.
//
// The same reads, writes and migrations as SqliteJobStore (sql_job_store.h), so listings,
// keyset pages, events and the requests behave identically; see pg_connection.h for how
// writes are serialized across replicas and how NUL bytes are kept.
// Durability: a commit returns once PostgreSQL has it (synchronous_commit is the server's).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "store/leader_lease.h"
#include "store/pg_connection.h"
#include "store/sql_job_store.h"
#include "store/wakeup_listener.h"

namespace tuneplane::store {

struct PostgresJobStoreOptions {
  int reader_connections = 4;                          // the most reads that run at once
  std::optional<std::string> password = std::nullopt;  // e.g. from server.db_password_file
  // Every session's application_name (sessionName of the replica's lease holder), so that a
  // replica taking the lease over can end the ones that hold the others up (leader_lease.h).
  std::string application_name = "tuneplane";
  // Every session's bounds (PgConnectionOptions): the defaults, unless a test needs them short.
  int lock_timeout_ms = PgConnectionOptions{}.lock_timeout_ms;
  int statement_timeout_ms = PgConnectionOptions{}.statement_timeout_ms;
  int idle_in_transaction_timeout_ms = PgConnectionOptions{}.idle_in_transaction_timeout_ms;
};

class PostgresJobStore final : public SqlJobStore {
 public:
  // True when `db` names a PostgreSQL database (a postgresql:// or postgres:// URI) rather
  // than a SQLite file.
  static bool isUri(const std::string& db);

  // Errors: "store.io" (unreachable, authentication, older than 15), "store.not_tuneplane",
  // "store.newer_version" (nothing is changed), "store.invalid" (bad options).
  static Result<std::unique_ptr<PostgresJobStore>> open(const std::string& uri,
                                                        PostgresJobStoreOptions options = {});

  ~PostgresJobStore() override;

  // Makes this store one replica among several (leader_lease.h): starts the lease; from then
  // on commit() and commitAll() are refused ("store.fenced") unless this replica holds the
  // lease's current epoch, and activeJobs() — what the reconciler works on — is empty while
  // it is a standby, so a standby's control loop has nothing to do. The API's reads and
  // requests are served by every replica. Errors: those of LeaderLease::open.
  Status enableLeadership(LeaseOptions options);
  // Calls `on_wake` whenever an API request commits on any replica of this database
  // (wakeup_listener.h), until stopWakeups() or the store's end. Errors: those of connecting.
  Status listenForWakeups(std::function<void()> on_wake);
  void stopWakeups() { listener_.reset(); }
  // Null until enableLeadership.
  LeaderLease* lease() { return lease_.get(); }

  Result<std::vector<JobView>> activeJobs() override;
  Result<ActiveJobsDelta> activeJobsSince(int64_t since_seq) override;
  int64_t fenceEpoch() const override { return lease_ ? lease_->epoch() : 0; }

 private:
  PostgresJobStore(std::unique_ptr<Connection> writer, std::unique_ptr<ReaderPool> readers,
                   std::string uri, PgConnectionOptions connection);

  const std::string uri_;
  const PgConnectionOptions connection_;
  std::unique_ptr<LeaderLease> lease_;
  std::unique_ptr<WakeupListener> listener_;
};

}  // namespace tuneplane::store
