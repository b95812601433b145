#include "store/sqlite_job_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "store/error_codes.h"
#include "store/job_reads.h"
#include "store/job_writes.h"
#include "store/reader_pool.h"
#include "store/schema.h"
#include "store/sqlite_connection.h"

namespace tuneplane::store {
namespace {

// WAL so that readers never wait for the writer; FULL so that a commit has reached the disk
// when it returns (in WAL mode NORMAL may lose the last commits on power loss, which would
// lose a submit intent that Slurm already acted on — see docs/decisions.md).
Status configureWriter(Connection& writer, bool in_memory) {
  if (!in_memory) {
    auto mode = writer.queryText("PRAGMA journal_mode = WAL");
    if (!mode) return fail(mode.error());
    if (*mode != "wal") {
      return fail(codes::kIo, "db",
                  "the database " + writer.path() +
                      " cannot use write-ahead logging (journal "
                      "mode stayed \"" +
                      *mode + "\"); put it on a local filesystem");
    }
  }
  return writer.exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
}

// The database holds every spec as submitted (environment values included), so a new file
// is readable by its owner only; SQLite gives the -wal and -shm files the database's mode.
void createPrivately(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);  // otherwise it exists already, or SQLite reports why not
}

}  // namespace

Result<std::unique_ptr<SqliteJobStore>> SqliteJobStore::open(const std::string& path,
                                                             SqliteJobStoreOptions options) {
  if (path.empty()) return fail(codes::kInvalid, "db", "the database path is empty");
  if (options.reader_connections < 1 || options.busy_timeout_ms < 0) {
    return fail(codes::kInvalid, "db",
                "reader_connections must be at least 1 and busy_timeout_ms not negative");
  }
  const bool in_memory = path == kInMemory;
  if (!in_memory) createPrivately(path);
  auto writer =
      Connection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                       options.busy_timeout_ms);
  if (!writer) return fail(writer.error());
  Connection& connection = **writer;

  auto version = inspectDatabase(connection, knownMigrations());
  if (!version) return fail(version.error());
  if (auto configured = configureWriter(connection, in_memory); !configured) {
    return fail(configured.error());
  }
  if (auto migrated = migrate(connection, knownMigrations()); !migrated) {
    return fail(migrated.error());
  }

  std::unique_ptr<ReaderPool> readers;
  if (!in_memory) {
    readers =
        std::make_unique<ReaderPool>(path, options.reader_connections, options.busy_timeout_ms);
  }
  return std::unique_ptr<SqliteJobStore>(
      new SqliteJobStore(std::move(*writer), std::move(readers)));
}

SqliteJobStore::SqliteJobStore(std::unique_ptr<Connection> writer,
                               std::unique_ptr<ReaderPool> readers)
    : writer_(std::move(writer)), readers_(std::move(readers)) {}

// Readers close first: the writer's is then the last connection, and closing it checkpoints
// the WAL into the database file.
SqliteJobStore::~SqliteJobStore() {
  readers_.reset();
  writer_.reset();
}

template <typename Read>
auto SqliteJobStore::read(Read&& read) -> decltype(read(std::declval<Connection&>())) {
  auto inTransaction = [&](Connection& connection) -> decltype(read(connection)) {
    auto transaction = Transaction::begin(connection, Transaction::Kind::kRead);
    if (!transaction) return fail(transaction.error());
    auto result = read(connection);
    if (!result) return result;  // the transaction rolls back as it ends
    if (auto done = transaction->commit(); !done) return fail(done.error());
    return result;
  };
  if (!readers_) {
    std::lock_guard lock(write_mutex_);
    return inTransaction(*writer_);
  }
  auto lease = readers_->acquire();
  if (!lease) return fail(lease.error());
  return inTransaction(lease->connection());
}

template <typename Write>
Status SqliteJobStore::write(Write&& write) {
  std::lock_guard lock(write_mutex_);
  auto transaction = Transaction::begin(*writer_, Transaction::Kind::kWrite);
  if (!transaction) return fail(transaction.error());
  if (auto done = write(*writer_); !done) return done;  // rolled back as it ends
  return transaction->commit();
}

Status SqliteJobStore::createJob(const JobRecord& job, const EventRecord& created) {
  return write([&](Connection& c) { return insertNewJob(c, job, created); });
}

Result<std::optional<JobView>> SqliteJobStore::getJob(const std::string& id) {
  return read([&](Connection& c) { return readJobView(c, id); });
}

Result<JobPage> SqliteJobStore::listJobs(const JobQuery& query) {
  return read([&](Connection& c) { return readJobPage(c, query); });
}

Result<std::vector<JobView>> SqliteJobStore::activeJobs() {
  return read([&](Connection& c) { return readActiveJobs(c); });
}

Result<std::vector<EventRecord>> SqliteJobStore::events(const std::string& job_id) {
  return read([&](Connection& c) { return readEvents(c, job_id); });
}

Result<std::map<JobPhase, int64_t>> SqliteJobStore::countJobsByPhase() {
  return read([&](Connection& c) { return readPhaseCounts(c); });
}

Result<std::map<std::pair<AttemptPhase, EndCause>, int64_t>> SqliteJobStore::countEndedAttempts() {
  return read([&](Connection& c) { return readEndedAttemptCounts(c); });
}

Status SqliteJobStore::commit(const Change& change) {
  if (auto valid = validateChange(change); !valid) return valid;  // before taking the lock
  return write([&](Connection& c) { return applyChange(c, change); });
}

Status SqliteJobStore::commitAll(const std::vector<Change>& changes) {
  for (std::size_t i = 0; i < changes.size(); ++i) {
    if (auto valid = validateChange(changes[i]); !valid) {
      Error error = valid.error();
      error.field = "changes[" + std::to_string(i) + "]." + error.field;
      return fail(std::move(error));
    }
  }
  return write([&](Connection& c) -> Status {
    for (const Change& change : changes) {
      if (auto done = applyChange(c, change); !done) return done;
    }
    return ok();
  });
}

Status SqliteJobStore::requestCancel(const std::string& job_id, const std::string& actor,
                                     int64_t now_ms) {
  return write([&](Connection& c) { return markCancelRequested(c, job_id, actor, now_ms); });
}

Status SqliteJobStore::requestAbandon(const std::string& job_id, int attempt,
                                      const std::string& actor, const std::string& reason,
                                      int64_t now_ms) {
  return write([&](Connection& c) {
    return markAbandonRequested(c, job_id, attempt, actor, reason, now_ms);
  });
}

}  // namespace tuneplane::store
