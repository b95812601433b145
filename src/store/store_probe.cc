#include "store/store_probe.h"

#include <sys/stat.h>

#include "store/error_codes.h"
#include "store/open_store.h"
#include "store/pg_connection.h"
#include "store/postgres_job_store.h"
#include "store/schema.h"
#include "store/sqlite_connection.h"

namespace tuneplane::store {
namespace {

constexpr int kReadOnlyBusyTimeoutMs = 5000;
// The version that added leader_lease (migrations.cc).
constexpr int64_t kLeaseSchemaVersion = 2;

Result<std::optional<LeaseRow>> readLease(Connection& connection) {
  auto q = connection.query(
      "SELECT epoch, holder, holder_pid, expires_ms FROM leader_lease"
      " WHERE id = 1");
  if (!q) return fail(q.error());
  auto row = q->step();
  if (!row) return fail(row.error());
  if (!*row) return std::optional<LeaseRow>{};
  return std::optional<LeaseRow>{LeaseRow{q->integer(0), q->text(1), q->integer(2), q->integer(3)}};
}

}  // namespace

Result<std::unique_ptr<Connection>> openReadOnly(const std::string& db,
                                                 const std::optional<std::string>& password_file,
                                                 const std::string& password_field) {
  if (db.empty()) return fail(codes::kInvalid, "db", "the database is not named");
  if (!PostgresJobStore::isUri(db)) {
    if (password_file) {
      return fail(codes::kInvalid, password_field,
                  "a password file is for a PostgreSQL database (postgresql://…), not a "
                  "SQLite file");
    }
    // SQLITE_OPEN_READONLY never creates the file; say so plainly rather than "unable to
    // open database file".
    struct stat info {};
    if (::stat(db.c_str(), &info) != 0) {
      return fail(codes::kIo, "db", "the database " + db + " does not exist");
    }
    auto connection = SqliteConnection::open(db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                                             kReadOnlyBusyTimeoutMs);
    if (!connection) return fail(connection.error());
    if (auto guarded = (*connection)->exec("PRAGMA query_only = ON"); !guarded) {
      return fail(guarded.error());
    }
    return std::unique_ptr<Connection>(std::move(*connection));
  }
  PgConnectionOptions options;
  options.read_only = true;
  if (password_file) {
    auto password = readPasswordFile(*password_file, password_field);
    if (!password) return fail(password.error());
    options.password = std::move(*password);
  }
  auto connection = PgConnection::open(db, options);
  if (!connection) return fail(connection.error());
  return std::unique_ptr<Connection>(std::move(*connection));
}

Result<StoreProbe> probeStore(const std::string& db,
                              const std::optional<std::string>& password_file,
                              const std::string& password_field) {
  auto connection = openReadOnly(db, password_file, password_field);
  if (!connection) return fail(connection.error());
  Connection& c = **connection;
  StoreProbe probe;
  probe.description = describeDb(db);
  probe.dialect = c.dialect();
  probe.current_version = currentSchemaVersion();
  if (auto version = inspectDatabase(c, knownMigrations())) {
    probe.version = *version;
  } else {
    probe.refusal = version.error();
    // A newer schema still says which; a damaged or foreign database has no version to tell.
    if (version.error().code == codes::kNewerVersion) {
      if (auto stored = storedSchemaVersion(c)) probe.version = *stored;
    }
    return probe;
  }
  if (probe.dialect == Dialect::kPostgres && probe.version >= kLeaseSchemaVersion) {
    auto lease = readLease(c);
    if (!lease) return fail(lease.error());
    probe.lease = std::move(*lease);
    auto now = c.queryInteger("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint");
    if (!now) return fail(now.error());
    probe.now_ms = *now;
  }
  return probe;
}

}  // namespace tuneplane::store
