#include "store/postgres_job_store.h"

#include <utility>

#include "store/error_codes.h"
#include "store/pg_connection.h"
#include "store/reader_pool.h"
#include "store/schema.h"

namespace tuneplane::store {
namespace {

// Each write is a dozen round trips to the server, so a group lasts as long as its writes'
// statements, and a write in it waits for all of them; the sync a group would share is, on
// PostgreSQL, the server's own (and its commit_delay can group it). Measured in
// docs/decisions.md: grouped, POSTs over two replicas were half as fast.
constexpr std::size_t kOneWritePerTransaction = 1;

}  // namespace

bool PostgresJobStore::isUri(const std::string& db) {
  return db.starts_with("postgresql://") || db.starts_with("postgres://");
}

Result<std::unique_ptr<PostgresJobStore>> PostgresJobStore::open(const std::string& uri,
                                                                 PostgresJobStoreOptions options) {
  if (uri.empty()) return fail(codes::kInvalid, "db", "the database URI is empty");
  if (options.reader_connections < 1) {
    return fail(codes::kInvalid, "db", "reader_connections must be at least 1");
  }
  PgConnectionOptions writer_options;
  writer_options.password = options.password;
  writer_options.application_name = options.application_name;
  writer_options.lock_timeout_ms = options.lock_timeout_ms;
  writer_options.statement_timeout_ms = options.statement_timeout_ms;
  writer_options.idle_in_transaction_timeout_ms = options.idle_in_transaction_timeout_ms;
  auto writer = PgConnection::open(uri, writer_options);
  if (!writer) return fail(writer.error());
  if (auto version = inspectDatabase(**writer, knownMigrations()); !version) {
    return fail(version.error());
  }
  if (auto migrated = migrate(**writer, knownMigrations()); !migrated) {
    return fail(migrated.error());
  }
  PgConnectionOptions reader_options = writer_options;
  reader_options.read_only = true;
  auto readers = std::make_unique<ReaderPool>(
      [uri, reader_options]() -> Result<std::unique_ptr<Connection>> {
        auto connection = PgConnection::open(uri, reader_options);
        if (!connection) return fail(connection.error());
        return std::unique_ptr<Connection>(std::move(*connection));
      },
      options.reader_connections);
  return std::unique_ptr<PostgresJobStore>(new PostgresJobStore(
      std::unique_ptr<Connection>(std::move(*writer)), std::move(readers), uri, writer_options));
}

PostgresJobStore::PostgresJobStore(std::unique_ptr<Connection> writer,
                                   std::unique_ptr<ReaderPool> readers, std::string uri,
                                   PgConnectionOptions connection)
    : SqlJobStore(std::move(writer), std::move(readers), kOneWritePerTransaction),
      uri_(std::move(uri)),
      connection_(std::move(connection)) {
  // Every API request tells the other replicas when it commits (wakeup_listener.h).
  setRequestHook([](Connection& c) -> Status {
    auto q = c.query(std::string("SELECT pg_notify('") + kWakeChannel + "', '')");
    if (!q) return fail(q.error());
    return q->run();
  });
}

// The lease goes first: its session ends, and a standby takes over on its next round.
PostgresJobStore::~PostgresJobStore() {
  lease_.reset();
  listener_.reset();
}

Status PostgresJobStore::listenForWakeups(std::function<void()> on_wake) {
  auto listener = WakeupListener::open(uri_, connection_, std::move(on_wake));
  if (!listener) return fail(listener.error());
  listener_ = std::move(*listener);
  return ok();
}

Status PostgresJobStore::enableLeadership(LeaseOptions options) {
  auto lease = LeaderLease::open(uri_, connection_, std::move(options));
  if (!lease) return fail(lease.error());
  lease_ = std::move(*lease);
  setCommitFence([lease = lease_.get()](Connection& c, int64_t read_epoch) {
    return lease->checkFence(c, read_epoch);
  });
  lease_->start();
  return ok();
}

Result<std::vector<JobView>> PostgresJobStore::activeJobs() {
  if (lease_ && !lease_->isLeader()) return std::vector<JobView>{};
  return SqlJobStore::activeJobs();
}

Result<ActiveJobsDelta> PostgresJobStore::activeJobsSince(int64_t since_seq) {
  // A standby has nothing to reconcile; whoever leads next starts from a full read (its
  // epoch differs from the one its control loop last read under).
  if (lease_ && !lease_->isLeader()) return ActiveJobsDelta{};
  return SqlJobStore::activeJobsSince(since_seq);
}

}  // namespace tuneplane::store
