#include "store/sql_connection.h"

#include <utility>

#include "store/error_codes.h"

namespace tuneplane::store {

// ---- Query ----

Query::Query(Query&& other) noexcept
    : stmt_(other.stmt_), bind_error_(std::move(other.bind_error_)) {
  other.stmt_ = nullptr;
}

Query::~Query() {
  if (stmt_ != nullptr) stmt_->reset();
}

void Query::note(Status bound) {
  if (!bound && !bind_error_) bind_error_ = bound.error();
}

int Query::indexOf(const char* name) {
  const int index = stmt_->parameterIndex(name);
  if (index == 0) note(fail(codes::kIo, "", std::string("no parameter ") + name));
  return index;
}

Query& Query::bind(int index, int64_t value) {
  note(stmt_->bindInteger(index, value));
  return *this;
}

Query& Query::bind(int index, std::string_view value) {
  note(stmt_->bindText(index, value));
  return *this;
}

Query& Query::bind(int index, std::optional<int> value) {
  note(value ? stmt_->bindInteger(index, *value) : stmt_->bindNull(index));
  return *this;
}

Query& Query::bind(const char* name, int64_t value) {
  if (const int index = indexOf(name); index != 0) bind(index, value);
  return *this;
}

Query& Query::bind(const char* name, std::string_view value) {
  if (const int index = indexOf(name); index != 0) bind(index, value);
  return *this;
}

Result<bool> Query::step() {
  if (bind_error_) return fail(*bind_error_);
  return stmt_->step();
}

Status Query::run() {
  return forEachRow([](Query&) { return ok(); });
}

std::optional<int> Query::optionalInt(int column) const {
  if (isNull(column)) return std::nullopt;
  return static_cast<int>(integer(column));
}

// ---- Connection ----

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
  if (auto begun = connection.beginTransaction(kind); !begun) return fail(begun.error());
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
