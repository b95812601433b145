#include "store/sqlite_connection.h"
#include "store/error_codes.h"

#include <utility>

namespace tuneplane::store {

Error sqliteError(int rc, std::string_view sqlite_message, std::string_view doing) {
  const int primary = rc & 0xff;
  std::string code = codes::kIo;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) code = codes::kCorrupt;
  if (primary == SQLITE_CONSTRAINT) code = codes::kConstraint;
  std::string message = "SQLite: ";
  message += sqlite_message.empty() ? std::string_view(sqlite3_errstr(rc)) : sqlite_message;
  message += " (code " + std::to_string(rc) + ") while " + std::string(doing);
  return Error{std::move(code), "", std::move(message)};
}

namespace {

Error connectionError(sqlite3* db, int rc, std::string_view doing) {
  return sqliteError(rc, db != nullptr ? sqlite3_errmsg(db) : "", doing);
}

}  // namespace

// ---- Query ----

Query::Query(Query&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), bind_rc_(other.bind_rc_) {
  other.stmt_ = nullptr;
}

Query::~Query() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Query::noteBind(int rc) {
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

Query& Query::bind(int index, int64_t value) {
  noteBind(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Query& Query::bind(int index, std::string_view value) {
  noteBind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Query& Query::bind(int index, std::optional<int> value) {
  noteBind(value ? sqlite3_bind_int64(stmt_, index, *value) : sqlite3_bind_null(stmt_, index));
  return *this;
}

Query& Query::bind(const char* name, int64_t value) {
  const int index = sqlite3_bind_parameter_index(stmt_, name);
  if (index == 0) {
    noteBind(SQLITE_RANGE);
    return *this;
  }
  return bind(index, value);
}

Query& Query::bind(const char* name, std::string_view value) {
  const int index = sqlite3_bind_parameter_index(stmt_, name);
  if (index == 0) {
    noteBind(SQLITE_RANGE);
    return *this;
  }
  return bind(index, value);
}

Result<bool> Query::step() {
  if (bind_rc_ != SQLITE_OK) return fail(connectionError(db_, bind_rc_, "binding parameters"));
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return fail(connectionError(db_, rc, sqlite3_sql(stmt_)));
}

Status Query::run() {
  return forEachRow([](Query&) { return ok(); });
}

std::string Query::text(int column) const {
  // sqlite3_column_text before sqlite3_column_bytes, so the length is the text's.
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (data == nullptr) return {};
  return std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<int> Query::optionalInt(int column) const {
  if (isNull(column)) return std::nullopt;
  return sqlite3_column_int(stmt_, column);
}

// ---- Connection ----

Result<std::unique_ptr<Connection>> Connection::open(const std::string& path, int flags,
                                                     int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  DbHandle db(raw);  // sqlite3_open_v2 may hand back a handle even when it fails
  if (rc != SQLITE_OK) return fail(connectionError(raw, rc, "opening " + path));
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return std::unique_ptr<Connection>(new Connection(std::move(db), path));
}

Status Connection::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return ok();
  Error error = sqliteError(rc, message != nullptr ? message : "", text);
  sqlite3_free(message);
  return fail(std::move(error));
}

Result<Query> Connection::query(std::string_view sql) {
  auto found = statements_.find(sql);
  if (found == statements_.end()) {
    sqlite3_stmt* raw = nullptr;
    const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    StatementHandle stmt(raw);
    if (rc != SQLITE_OK) return fail(connectionError(db_.get(), rc, sql));
    found = statements_.emplace(std::string(sql), std::move(stmt)).first;
  } else if (sqlite3_stmt_busy(found->second.get()) != 0) {
    // A programming error (two live Queries of one statement would share its cursor).
    return fail(codes::kIo, "", "statement already in use: " + std::string(sql));
  }
  return Query(db_.get(), found->second.get());
}

Result<Query> Connection::firstRow(std::string_view sql) {
  auto q = query(sql);
  if (!q) return q;
  auto row = q->step();
  if (!row) return fail(row.error());
  if (!*row) return fail(codes::kIo, "", std::string(sql) + " returned no row");
  return q;
}

Result<int64_t> Connection::queryInteger(std::string_view sql) {
  auto q = firstRow(sql);
  if (!q) return fail(q.error());
  return q->integer(0);
}

Result<std::string> Connection::queryText(std::string_view sql) {
  auto q = firstRow(sql);
  if (!q) return fail(q.error());
  return q->text(0);
}

// ---- Transaction ----

Result<Transaction> Transaction::begin(Connection& connection, Kind kind) {
  auto q = connection.query(kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN");
  if (!q) return fail(q.error());
  if (auto done = q->run(); !done) return fail(done.error());
  return Transaction(connection);
}

Transaction::~Transaction() {
  if (connection_ == nullptr) return;
  if (auto q = connection_->query("ROLLBACK")) (void)q->run();
}

Status Transaction::commit() {
  auto q = connection_->query("COMMIT");
  if (!q) return fail(q.error());
  auto done = q->run();
  if (!done) return done;  // still open: the destructor rolls it back
  connection_ = nullptr;
  return ok();
}

}  // namespace tuneplane::store
