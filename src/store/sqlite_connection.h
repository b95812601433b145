// One SQLite connection, owned (sqlite3* and every sqlite3_stmt* in unique_ptrs with their
// own deleters), with its prepared statements cached by SQL text so a hot query is prepared
// once per connection. SQLite result codes become Errors here, where they enter:
// SQLITE_CORRUPT / SQLITE_NOTADB → "store.corrupt", SQLITE_CONSTRAINT → "store.constraint",
// anything else → "store.io"; the message carries SQLite's own text.
// Thread-safety: none. A Connection (and every Query from it) is used by one thread at a
// time; SqliteJobStore guarantees that with a mutex (writer) or a lease (readers).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"

namespace tuneplane::store {

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StatementFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using DbHandle = std::unique_ptr<sqlite3, SqliteCloser>;
using StatementHandle = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// The Error for SQLite result code `rc` (extended codes welcome) met while `doing`.
Error sqliteError(int rc, std::string_view sqlite_message, std::string_view doing);

// One use of a cached prepared statement: bind, step, read columns. Ending the Query
// (destruction) resets the statement and clears its bindings, so it is ready for the next
// use and holds no read snapshot open. Parameters and columns are numbered as in SQLite
// (parameters from 1, columns from 0); named parameters (":owner") bind by name.
// Text is bound with its length (SQLITE_TRANSIENT), so embedded NULs and any UTF-8 survive.
class Query {
 public:
  Query(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Query(Query&& other) noexcept;
  Query& operator=(Query&&) = delete;
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  ~Query();

  Query& bind(int index, int64_t value);
  Query& bind(int index, std::string_view value);
  Query& bind(int index, std::optional<int> value);  // nullopt → NULL
  Query& bind(const char* name, int64_t value);
  Query& bind(const char* name, std::string_view value);

  // The next row: true when there is one, false when done. REQUIRES: every bind succeeded
  // (a failed bind is reported here, so callers check once).
  Result<bool> step();
  // Steps to the end, for statements that return no rows.
  Status run();
  // Calls `each(*this)` on every row; `each` returns a Status. Stops at the first error,
  // SQLite's or `each`'s.
  template <typename Each>
  Status forEachRow(Each&& each) {
    for (;;) {
      auto row = step();
      if (!row) return fail(row.error());
      if (!*row) return ok();
      if (Status done = each(*this); !done) return done;
    }
  }

  int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  std::string text(int column) const;
  bool isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::optional<int> optionalInt(int column) const;

 private:
  void noteBind(int rc);

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int bind_rc_ = SQLITE_OK;
};

class Connection {
 public:
  // Opens `path` (":memory:" for a private in-memory database) with SQLITE_OPEN_* `flags`
  // plus extended result codes and a busy timeout. Nothing is read or written yet.
  static Result<std::unique_ptr<Connection>> open(const std::string& path, int flags,
                                                  int busy_timeout_ms);

  // Runs SQL that returns no rows we need (DDL, PRAGMA settings, several statements).
  Status exec(std::string_view sql);
  // The cached statement for `sql`, prepared on first use.
  Result<Query> query(std::string_view sql);
  // The cached statement for `sql`, stepped to its first row ("store.io" when it has none).
  Result<Query> firstRow(std::string_view sql);
  // A single integer or text answer (PRAGMA user_version, journal_mode, …).
  Result<int64_t> queryInteger(std::string_view sql);
  Result<std::string> queryText(std::string_view sql);

  sqlite3* raw() const { return db_.get(); }
  const std::string& path() const { return path_; }

 private:
  Connection(DbHandle db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  DbHandle db_;
  std::string path_;
  // Declared after db_, so the statements are finalized before the connection closes.
  std::unordered_map<std::string, StatementHandle, Hash, std::equal_to<>> statements_;
};

// A transaction on one connection: BEGIN (reads: a consistent snapshot across several
// queries) or BEGIN IMMEDIATE (writes: takes the write lock up front, so a write never fails
// half way on a lock). Rolled back when destroyed without commit().
class Transaction {
 public:
  enum class Kind { kRead, kWrite };
  static Result<Transaction> begin(Connection& connection, Kind kind);
  Transaction(Transaction&& other) noexcept : connection_(other.connection_) {
    other.connection_ = nullptr;
  }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  Status commit();

 private:
  explicit Transaction(Connection& connection) : connection_(&connection) {}
  Connection* connection_;
};

}  // namespace tuneplane::store
