#include "store/open_store.h"

#include <sys/stat.h>

#include <fstream>
#include <iterator>

#include "store/error_codes.h"
#include "store/pg_connection.h"
#include "store/postgres_job_store.h"
#include "store/sqlite_job_store.h"

namespace tuneplane::store {
Result<std::string> readPasswordFile(const std::string& path, const std::string& field) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return fail(codes::kInvalid, field, "cannot read the password file " + path);
  }
  // Like libpq's ~/.pgpass: a secret others can read is refused, not used.
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return fail(
        codes::kInvalid, field,
        "the password file " + path + " is readable by others than its owner; chmod 600 it");
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  if (!in.good() && !in.eof()) {
    return fail(codes::kInvalid, field, "cannot read the password file " + path);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) {
    return fail(codes::kInvalid, field, "the password file " + path + " is empty");
  }
  return text;
}

std::string describeDb(const std::string& db) {
  return PostgresJobStore::isUri(db) ? redactUri(db) : db;
}

Result<OpenedStore> openJobStore(const std::string& db,
                                 const std::optional<std::string>& password_file,
                                 LeaseOptions lease) {
  if (!PostgresJobStore::isUri(db)) {
    if (password_file) {
      return fail(codes::kInvalid, kDbPasswordField,
                  "a password file is for a PostgreSQL server.db (postgresql://…), not a "
                  "SQLite file");
    }
    auto store = SqliteJobStore::open(db);
    if (!store) return fail(store.error());
    return OpenedStore{std::move(*store), nullptr, nullptr};
  }
  PostgresJobStoreOptions options;
  options.application_name = sessionName(lease.holder);
  if (password_file) {
    auto password = readPasswordFile(*password_file);
    if (!password) return fail(password.error());
    options.password = std::move(*password);
  }
  auto store = PostgresJobStore::open(db, options);
  if (!store) return fail(store.error());
  if (auto enabled = (*store)->enableLeadership(std::move(lease)); !enabled) {
    return fail(enabled.error());
  }
  LeaderLease* replica_lease = (*store)->lease();
  PostgresJobStore* postgres = store->get();
  return OpenedStore{std::move(*store), replica_lease, postgres};
}

std::string renderLeaseMetrics(const LeaderLease& lease) {
  return "# HELP tuneplane_leader 1 on the replica that runs the control loop, 0 on standbys.\n"
         "# TYPE tuneplane_leader gauge\n"
         "tuneplane_leader " +
         std::to_string(lease.isLeader() ? 1 : 0) +
         "\n# HELP tuneplane_lease_epoch The fencing epoch this replica holds (0: none).\n"
         "# TYPE tuneplane_lease_epoch gauge\n"
         "tuneplane_lease_epoch " +
         std::to_string(lease.epoch()) +
         "\n# HELP tuneplane_lease_transitions_total Leases this replica took or lost.\n"
         "# TYPE tuneplane_lease_transitions_total counter\n"
         "tuneplane_lease_transitions_total " +
         std::to_string(lease.transitions()) +
         "\n# HELP tuneplane_store_fenced_writes_total Control-loop writes refused because "
         "this replica's epoch was no longer current.\n"
         "# TYPE tuneplane_store_fenced_writes_total counter\n"
         "tuneplane_store_fenced_writes_total " +
         std::to_string(lease.fencedWrites()) + "\n";
}

}  // namespace tuneplane::store
