// One SQLite connection (the Connection of sql_connection.h), owned (sqlite3* and every
// sqlite3_stmt* in unique_ptrs with their own deleters), with its prepared statements
// cached by SQL text so a hot query is prepared once per connection. SQLite result codes
// become Errors here, where they enter: SQLITE_CORRUPT / SQLITE_NOTADB → "store.corrupt",
// SQLITE_CONSTRAINT → "store.constraint", anything else → "store.io"; the message carries
// SQLite's own text.
// Thread-safety: none (see sql_connection.h).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbHandle = std::unique_ptr<sqlite3, SqliteCloser>;

// The Error for SQLite result code `rc` (extended codes welcome) met while `doing`.
Error sqliteError(int rc, std::string_view sqlite_message, std::string_view doing);

class SqliteConnection final : public Connection {
 public:
  // Opens `path` (":memory:" for a private in-memory database) with SQLITE_OPEN_* `flags`
  // plus extended result codes and a busy timeout. Nothing is read or written yet.
  static Result<std::unique_ptr<SqliteConnection>> open(const std::string& path, int flags,
                                                        int busy_timeout_ms);
  ~SqliteConnection() override;

  Status exec(std::string_view sql) override;
  Result<Query> query(std::string_view sql) override;
  Dialect dialect() const override { return Dialect::kSqlite; }
  const std::string& path() const override { return path_; }
  // BEGIN (reads) or BEGIN IMMEDIATE (writes: takes the write lock up front).
  Status beginTransaction(TransactionKind kind) override;

  // A statement outside the cache, the caller's to keep (a benchmark's naive baseline).
  Result<std::unique_ptr<Statement>> prepare(std::string_view sql);

  sqlite3* raw() const { return db_.get(); }

 private:
  SqliteConnection(DbHandle db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  DbHandle db_;
  std::string path_;
  // PRAGMA synchronous as the last write transaction set it: FULL (true) or NORMAL (false);
  // unset until the first.
  std::optional<bool> synced_commits_;
  // Finalized (in the destructor) before the connection closes.
  std::unordered_map<std::string, std::unique_ptr<Statement>, Hash, std::equal_to<>> statements_;
};

}  // namespace tuneplane::store

namespace tuneplane::store {

// A read-only (query_only) connection to the database file at `path`, for a ReaderPool.
Result<std::unique_ptr<Connection>> openSqliteReader(const std::string& path, int busy_timeout_ms);

}  // namespace tuneplane::store
