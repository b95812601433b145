#include "store/sqlite_connection.h"

#include <utility>

#include "store/error_codes.h"

namespace tuneplane::store {

Error sqliteError(int rc, std::string_view sqlite_message, std::string_view doing) {
  const int primary = rc & 0xff;
  std::string code = codes::kIo;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) code = codes::kCorrupt;
  if (primary == SQLITE_CONSTRAINT) code = codes::kConstraint;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) code = codes::kBusy;
  std::string message = "SQLite: ";
  message += sqlite_message.empty() ? std::string_view(sqlite3_errstr(rc)) : sqlite_message;
  message += " (code " + std::to_string(rc) + ") while " + std::string(doing);
  return Error{std::move(code), "", std::move(message)};
}

namespace {

Error connectionError(sqlite3* db, int rc, std::string_view doing) {
  return sqliteError(rc, db != nullptr ? sqlite3_errmsg(db) : "", doing);
}

struct StatementFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};

class SqliteStatement final : public Statement {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  Status bindInteger(int index, int64_t value) override {
    return check(sqlite3_bind_int64(stmt_.get(), index, value));
  }
  Status bindText(int index, std::string_view value) override {
    return check(sqlite3_bind_text64(stmt_.get(), index, value.data(), value.size(),
                                     SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  Status bindNull(int index) override { return check(sqlite3_bind_null(stmt_.get(), index)); }
  int parameterIndex(const char* name) const override {
    return sqlite3_bind_parameter_index(stmt_.get(), name);
  }
  Result<bool> step() override {
    const int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return fail(connectionError(db_, rc, sqlite3_sql(stmt_.get())));
  }
  int64_t integer(int column) const override { return sqlite3_column_int64(stmt_.get(), column); }
  std::string text(int column) const override {
    // sqlite3_column_text before sqlite3_column_bytes, so the length is the text's.
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), column));
    if (data == nullptr) return {};
    return std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), column)));
  }
  bool isNull(int column) const override {
    return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
  }
  void reset() override {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }
  bool busy() const override { return sqlite3_stmt_busy(stmt_.get()) != 0; }

 private:
  Status check(int rc) {
    if (rc == SQLITE_OK) return ok();
    return fail(connectionError(db_, rc, "binding parameters"));
  }

  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, StatementFinalizer> stmt_;
};

}  // namespace

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::open(const std::string& path, int flags,
                                                                 int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  DbHandle db(raw);  // sqlite3_open_v2 may hand back a handle even when it fails
  if (rc != SQLITE_OK) return fail(connectionError(raw, rc, "opening " + path));
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return std::unique_ptr<SqliteConnection>(new SqliteConnection(std::move(db), path));
}

SqliteConnection::~SqliteConnection() {
  statements_.clear();  // finalized before db_ closes
}

Status SqliteConnection::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return ok();
  Error error = sqliteError(rc, message != nullptr ? message : "", text);
  sqlite3_free(message);
  return fail(std::move(error));
}

Result<std::unique_ptr<Statement>> SqliteConnection::prepare(std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  auto stmt = std::make_unique<SqliteStatement>(db_.get(), raw);
  if (rc != SQLITE_OK) return fail(connectionError(db_.get(), rc, sql));
  return std::unique_ptr<Statement>(std::move(stmt));
}

Result<Query> SqliteConnection::query(std::string_view sql) {
  auto found = statements_.find(sql);
  if (found == statements_.end()) {
    auto stmt = prepare(sql);
    if (!stmt) return fail(stmt.error());
    found = statements_.emplace(std::string(sql), std::move(*stmt)).first;
  } else if (found->second->busy()) {
    // A programming error (two live Queries of one statement would share its cursor).
    return fail(codes::kIo, "", "statement already in use: " + std::string(sql));
  }
  return Query(found->second.get());
}

Status SqliteConnection::beginTransaction(TransactionKind kind) {
  if (kind != TransactionKind::kRead) {
    // The setting the commit reads; changed only between transactions, and only when the
    // kind of write changes (a PRAGMA per transaction would cost a statement each). exec,
    // not a cached statement: SQLite applies PRAGMA synchronous when it compiles it.
    const bool synced = kind != TransactionKind::kWriteUnsynced;
    if (synced_commits_ != synced) {
      if (auto set = exec(synced ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
          !set) {
        return set;
      }
      synced_commits_ = synced;
    }
  }
  auto q = query(kind == TransactionKind::kRead ? "BEGIN" : "BEGIN IMMEDIATE");
  if (!q) return fail(q.error());
  return q->run();
}

}  // namespace tuneplane::store

namespace tuneplane::store {

Result<std::unique_ptr<Connection>> openSqliteReader(const std::string& path, int busy_timeout_ms) {
  // NOMUTEX: a leased connection is only ever used by one thread at a time.
  auto connection =
      SqliteConnection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, busy_timeout_ms);
  if (!connection) return fail(connection.error());
  if (auto configured = (*connection)->exec("PRAGMA query_only = ON"); !configured) {
    return fail(configured.error());
  }
  return std::unique_ptr<Connection>(std::move(*connection));
}

}  // namespace tuneplane::store
