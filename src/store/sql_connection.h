// The store's view of one database connection, whatever the database: SQL text in, rows
// out. SqliteConnection (sqlite_connection.h) and PgConnection (pg_connection.h) implement
// it, so the reads, writes and migrations (job_reads.h, job_writes.h, schema.h) are written
// once for both. The SQL they send is the common subset both accept: numbered parameters
// "?1" and named ones ":owner" (PgConnection renumbers them to "$n"), ON CONFLICT upserts,
// row-value comparisons, window functions. What differs (DDL, the schema version's home,
// how a write transaction is serialized) is behind dialect() or inside the implementations.
// Errors: "store.constraint" for a violated constraint, "store.corrupt" for a damaged
// database, "store.io" for anything else; the message carries the database's own text.
// Thread-safety: none. A Connection (and every Query from it) is used by one thread at a
// time; the job store guarantees that with a mutex (writer) or a lease (readers).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tuneplane::store {

enum class Dialect { kSqlite, kPostgres };

// A prepared statement, owned and cached by its connection. Query is its one user at a time.
class Statement {
 public:
  virtual ~Statement() = default;
  // Binds return the error, if any, that step() then reports.
  virtual Status bindInteger(int index, int64_t value) = 0;
  virtual Status bindText(int index, std::string_view value) = 0;
  virtual Status bindNull(int index) = 0;
  // The number of parameter ":name" (name with its colon); 0 when the SQL has none.
  virtual int parameterIndex(const char* name) const = 0;
  virtual Result<bool> step() = 0;  // true: a row is current
  virtual int64_t integer(int column) const = 0;
  virtual std::string text(int column) const = 0;
  virtual bool isNull(int column) const = 0;
  // Ready for the next use: no row, no bindings, no snapshot held.
  virtual void reset() = 0;
  virtual bool busy() const = 0;  // between the first step and reset
};

// One use of a cached prepared statement: bind, step, read columns. Ending the Query
// (destruction) resets the statement. Parameters are numbered from 1, columns from 0.
// Text is bound with its length, so embedded NULs and any UTF-8 survive.
class Query {
 public:
  explicit Query(Statement* stmt) : stmt_(stmt) {}
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

  // The next row: true when there is one, false when done. A failed bind is reported here,
  // so callers check once.
  Result<bool> step();
  // Steps to the end, for statements that return no rows.
  Status run();
  // Calls `each(*this)` on every row; `each` returns a Status. Stops at the first error,
  // the database's or `each`'s.
  template <typename Each>
  Status forEachRow(Each&& each) {
    for (;;) {
      auto row = step();
      if (!row) return fail(row.error());
      if (!*row) return ok();
      if (Status done = each(*this); !done) return done;
    }
  }

  int64_t integer(int column) const { return stmt_->integer(column); }
  std::string text(int column) const { return stmt_->text(column); }
  bool isNull(int column) const { return stmt_->isNull(column); }
  std::optional<int> optionalInt(int column) const;

 private:
  void note(Status bound);
  int indexOf(const char* name);

  Statement* stmt_;
  std::optional<Error> bind_error_;
};

// kWriteUnsynced: a write whose commit does not wait for the log to reach the disk (SQLite:
// synchronous=NORMAL for it; PostgreSQL: synchronous_commit off). A crash of the machine may
// lose it, never tear it: the log is written in order, so the next synced commit makes it
// durable too, and a crash loses at most the unsynced commits since the last synced one.
// kLeaseWrite: a write of the leader lease's row alone (leader_lease.h). On PostgreSQL it is
// not serialized with the store's writers, so a writer that is stuck inside its transaction
// never holds up the lease's renewal or a takeover; on SQLite it is kWrite.
enum class TransactionKind { kRead, kWrite, kWriteUnsynced, kLeaseWrite };

class Connection {
 public:
  virtual ~Connection() = default;

  // Runs SQL that returns no rows we need (DDL, settings, several statements).
  virtual Status exec(std::string_view sql) = 0;
  // The cached statement for `sql`, prepared on first use.
  virtual Result<Query> query(std::string_view sql) = 0;
  virtual Dialect dialect() const = 0;
  // Names the database in messages (a file name; a URI without its password).
  virtual const std::string& path() const = 0;
  // BEGIN for a read (one consistent snapshot across several queries) or a write (which
  // holds the database's write serialization from the start, so a write never fails half
  // way on a lock or a serialization conflict). Used through Transaction.
  virtual Status beginTransaction(TransactionKind kind) = 0;

  // The cached statement for `sql`, stepped to its first row ("store.io" when it has none).
  Result<Query> firstRow(std::string_view sql);
  // A single integer or text answer.
  Result<int64_t> queryInteger(std::string_view sql);
  Result<std::string> queryText(std::string_view sql);
};

// A transaction on one connection, rolled back when destroyed without commit().
class Transaction {
 public:
  using Kind = TransactionKind;
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
