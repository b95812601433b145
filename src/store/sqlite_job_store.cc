#include "store/sqlite_job_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "store/error_codes.h"
#include "store/reader_pool.h"
#include "store/schema.h"
#include "store/sqlite_connection.h"

namespace tuneplane::store {
namespace {

// WAL so that readers never wait for the writer; FULL so that a commit has reached the disk
// when it returns (in WAL mode NORMAL may lose the last commits on power loss, which would
// lose a submit intent that Slurm already acted on — see docs/decisions.md).
Status configureWriter(SqliteConnection& writer, bool in_memory) {
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

// A commit's cost is its WAL fdatasync, not its statements (microseconds each, in process):
// every write waiting for the writer shares the next one (group_commit.h).
constexpr std::size_t kGroupWritesWithoutLimit = 0;

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
      SqliteConnection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             options.busy_timeout_ms);
  if (!writer) return fail(writer.error());
  SqliteConnection& connection = **writer;

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
    readers = std::make_unique<ReaderPool>(
        [path, timeout = options.busy_timeout_ms] { return openSqliteReader(path, timeout); },
        options.reader_connections);
  }
  return std::unique_ptr<SqliteJobStore>(
      new SqliteJobStore(std::unique_ptr<Connection>(std::move(*writer)), std::move(readers),
                         kGroupWritesWithoutLimit));
}

}  // namespace tuneplane::store
