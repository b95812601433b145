#include "store/pg_connection.h"

#include <cctype>
#include <cstdlib>
#include <utility>
#include <vector>

#include "store/error_codes.h"

namespace tuneplane::store {
namespace {

constexpr char kEscape = '\x01';

std::string escapeText(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\0' || c == kEscape) {
      out += kEscape;
      out += c == '\0' ? '0' : '1';
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescapeText(const char* data, std::size_t size) {
  std::string out;
  out.reserve(size);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == kEscape && i + 1 < size) {
      out += data[++i] == '0' ? '\0' : kEscape;
    } else {
      out += data[i];
    }
  }
  return out;
}

std::string errorCode(std::string_view sqlstate) {
  if (sqlstate.substr(0, 2) == "23") return codes::kConstraint;
  // lock_not_available (lock_timeout), query_canceled (statement_timeout): held up.
  if (sqlstate == "55P03" || sqlstate == "57014") return codes::kBusy;
  if (sqlstate == "XX001" || sqlstate == "XX002") return codes::kCorrupt;
  return codes::kIo;
}

Error resultError(PGconn* conn, const PGresult* result, std::string_view doing) {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = result != nullptr ? PQresultErrorMessage(result) : "";
  if (message.empty()) message = PQerrorMessage(conn);
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) {
    message.pop_back();
  }
  const std::string sqlstate = state != nullptr ? state : "";
  return Error{errorCode(sqlstate), "",
               "PostgreSQL: " + message + " (SQLSTATE " + (sqlstate.empty() ? "none" : sqlstate) +
                   ") while " + std::string(doing)};
}

struct ResultClear {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultHandle = std::unique_ptr<PGresult, ResultClear>;

bool succeeded(const PGresult* r) {
  const ExecStatusType status = PQresultStatus(r);
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

class PgStatement final : public Statement {
 public:
  PgStatement(PGconn* conn, std::string name, std::string sql, int count,
              std::unordered_map<std::string, int> names)
      : conn_(conn),
        name_(std::move(name)),
        sql_(std::move(sql)),
        names_(std::move(names)),
        values_(static_cast<std::size_t>(count)) {}

  Status bindInteger(int index, int64_t value) override {
    return set(index, std::to_string(value));
  }
  Status bindText(int index, std::string_view value) override {
    return set(index, escapeText(value));
  }
  Status bindNull(int index) override { return set(index, std::nullopt); }
  int parameterIndex(const char* name) const override {
    const auto found = names_.find(name);
    return found == names_.end() ? 0 : found->second;
  }
  Result<bool> step() override {
    if (!result_) {
      std::vector<const char*> values;
      for (const auto& v : values_) values.push_back(v ? v->c_str() : nullptr);
      result_.reset(PQexecPrepared(conn_, name_.c_str(), static_cast<int>(values.size()),
                                   values.data(), nullptr, nullptr, 0));
      if (!result_ || !succeeded(result_.get())) {
        Error error = resultError(conn_, result_.get(), sql_);
        result_.reset();
        return fail(std::move(error));
      }
      row_ = -1;
    }
    ++row_;
    return row_ < PQntuples(result_.get());
  }
  int64_t integer(int column) const override {
    return std::strtoll(PQgetvalue(result_.get(), row_, column), nullptr, 10);
  }
  std::string text(int column) const override {
    return unescapeText(PQgetvalue(result_.get(), row_, column),
                        static_cast<std::size_t>(PQgetlength(result_.get(), row_, column)));
  }
  bool isNull(int column) const override { return PQgetisnull(result_.get(), row_, column) != 0; }
  void reset() override {
    result_.reset();
    for (auto& v : values_) v.reset();
  }
  bool busy() const override { return result_ != nullptr; }

 private:
  Status set(int index, std::optional<std::string> value) {
    if (index < 1 || index > static_cast<int>(values_.size())) {
      return fail(codes::kIo, "",
                  "parameter " + std::to_string(index) + " out of range in " + sql_);
    }
    values_[static_cast<std::size_t>(index - 1)] = std::move(value);
    return ok();
  }

  PGconn* conn_;
  std::string name_;
  std::string sql_;
  std::unordered_map<std::string, int> names_;
  std::vector<std::optional<std::string>> values_;
  ResultHandle result_;
  int row_ = -1;
};

}  // namespace

std::string redactUri(std::string_view uri) {
  std::string out(uri);
  // postgresql://user:password@host… → postgresql://user:***@host…
  const auto scheme = out.find("://");
  if (scheme != std::string::npos) {
    const auto at = out.find('@', scheme + 3);
    const auto colon = out.find(':', scheme + 3);
    if (at != std::string::npos && colon != std::string::npos && colon < at) {
      out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // …?password=secret&… or key=value strings: password=secret
  for (auto pos = out.find("password="); pos != std::string::npos;
       pos = out.find("password=", pos + 1)) {
    const auto start = pos + 9;
    auto end = out.find_first_of("& ", start);
    if (end == std::string::npos) end = out.size();
    out.replace(start, end - start, "***");
  }
  return out;
}

std::string toPostgresParameters(std::string_view sql, std::unordered_map<std::string, int>& names,
                                 int& count) {
  std::string out;
  std::vector<std::pair<std::size_t, std::string>> named;  // position in out, name
  int highest = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'') quoted = !quoted;
    if (!quoted && c == '?' && i + 1 < sql.size() &&
        std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      std::size_t end = i + 1;
      while (end < sql.size() && std::isdigit(static_cast<unsigned char>(sql[end]))) ++end;
      highest = std::max(highest, std::atoi(std::string(sql.substr(i + 1, end - i - 1)).c_str()));
      out += '$';
      out += sql.substr(i + 1, end - i - 1);
      i = end - 1;
      continue;
    }
    const bool after_colon = i > 0 && sql[i - 1] == ':';
    if (!quoted && c == ':' && !after_colon && i + 1 < sql.size() &&
        (std::isalpha(static_cast<unsigned char>(sql[i + 1])) || sql[i + 1] == '_')) {
      std::size_t end = i + 1;
      while (end < sql.size() &&
             (std::isalnum(static_cast<unsigned char>(sql[end])) || sql[end] == '_')) {
        ++end;
      }
      named.emplace_back(out.size(), std::string(sql.substr(i, end - i)));
      i = end - 1;
      continue;
    }
    out += c;
  }
  // Names are numbered after the numbered parameters, in order of first appearance.
  std::string result;
  std::size_t copied = 0;
  int next = highest;
  for (const auto& [position, name] : named) {
    auto [it, added] = names.emplace(name, next + 1);
    if (added) ++next;
    result += out.substr(copied, position - copied);
    result += "$" + std::to_string(it->second);
    copied = position;
  }
  result += out.substr(copied);
  count = next;
  return result;
}

std::string sessionName(std::string_view holder) {
  // PostgreSQL keeps 63 bytes of it (NAMEDATALEN - 1).
  std::string name = "tuneplane " + std::string(holder);
  if (name.size() > 63) name.resize(63);
  return name;
}

Result<std::unique_ptr<PgConnection>> PgConnection::open(const std::string& uri,
                                                         const PgConnectionOptions& options) {
  const std::string timeout = std::to_string(options.connect_timeout_s);
  // Client-side keepalives: a server that vanished (a partition) is noticed in ~25 s, not
  // after the kernel's two hours. The URI may still say otherwise (expand_dbname: it is read
  // after these, so its keys win).
  std::vector<const char*> keys = {
      "connect_timeout",  "keepalives",       "keepalives_idle", "keepalives_interval",
      "keepalives_count", "application_name", "dbname"};
  std::vector<const char*> values = {
      timeout.c_str(), "1", "10", "5", "3", options.application_name.c_str(), uri.c_str()};
  if (options.password) {
    keys.push_back("password");
    values.push_back(options.password->c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  std::unique_ptr<PGconn, PgConnCloser> conn(
      PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1));
  const std::string description = "PostgreSQL " + redactUri(uri);
  if (!conn) return fail(codes::kIo, "db", "cannot allocate a connection to " + description);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    std::string message = PQerrorMessage(conn.get());
    while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) {
      message.pop_back();
    }
    return fail(codes::kIo, "db", "cannot connect to " + description + ": " + message);
  }
  if (PQserverVersion(conn.get()) < kMinPostgresVersion) {
    return fail(codes::kIo, "db",
                description + " runs PostgreSQL " + std::to_string(PQserverVersion(conn.get())) +
                    "; TunePlane needs 15 or newer");
  }
  // The server's notices ("relation exists, skipping") are not for the operator's console.
  PQsetNoticeProcessor(
      conn.get(), [](void*, const char*) {}, nullptr);
  auto connection = std::unique_ptr<PgConnection>(new PgConnection(std::move(conn), description));
  std::string settings = "SET client_encoding = 'UTF8'";
  if (options.read_only) settings += "; SET default_transaction_read_only = on";
  // The server's side of the bounds (pg_connection.h): no session stalls the others for long,
  // and the server finds a client that vanished mid-statement (tcp keepalives, and the
  // connection check while a query runs).
  settings += "; SET lock_timeout = " + std::to_string(options.lock_timeout_ms) +
              "; SET statement_timeout = " + std::to_string(options.statement_timeout_ms) +
              "; SET idle_in_transaction_session_timeout = " +
              std::to_string(options.idle_in_transaction_timeout_ms) +
              "; SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5"
              "; SET tcp_keepalives_count = 3; SET client_connection_check_interval = 5000";
  if (auto set = connection->exec(settings); !set) return fail(set.error());
  return connection;
}

PgConnection::~PgConnection() {
  statements_.clear();  // results freed before the connection closes
}

Status PgConnection::exec(std::string_view sql) {
  const std::string text(sql);
  ResultHandle result(PQexec(conn_.get(), text.c_str()));
  if (result && succeeded(result.get())) return ok();
  return fail(resultError(conn_.get(), result.get(), text));
}

Result<Query> PgConnection::query(std::string_view sql) {
  auto found = statements_.find(sql);
  if (found == statements_.end()) {
    std::unordered_map<std::string, int> names;
    int count = 0;
    const std::string translated = toPostgresParameters(sql, names, count);
    const std::string name = "tp" + std::to_string(next_statement_++);
    ResultHandle prepared(PQprepare(conn_.get(), name.c_str(), translated.c_str(), count, nullptr));
    if (!prepared || !succeeded(prepared.get())) {
      return fail(resultError(conn_.get(), prepared.get(), sql));
    }
    auto stmt =
        std::make_unique<PgStatement>(conn_.get(), name, std::string(sql), count, std::move(names));
    found = statements_.emplace(std::string(sql), std::move(stmt)).first;
  } else if (found->second->busy()) {
    return fail(codes::kIo, "", "statement already in use: " + std::string(sql));
  }
  return Query(found->second.get());
}

Status PgConnection::ensureConnected() {
  if (PQstatus(conn_.get()) == CONNECTION_OK) return ok();
  // Lost (a restarted server, a failover): once more, on a new session, which knows none of
  // the old one's prepared statements.
  statements_.clear();
  PQreset(conn_.get());
  if (PQstatus(conn_.get()) == CONNECTION_OK) return ok();
  return fail(codes::kIo, "db",
              "lost the connection to " + description_ + ": " + PQerrorMessage(conn_.get()));
}

Status PgConnection::beginTransaction(TransactionKind kind) {
  if (auto connected = ensureConnected(); !connected) return connected;
  if (kind == TransactionKind::kRead) {
    return exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }
  if (auto begun = exec("BEGIN"); !begun) return begun;
  if (kind == TransactionKind::kLeaseWrite) return ok();  // never behind the writers' lock
  if (kind == TransactionKind::kWriteUnsynced) {
    if (auto unsynced = exec("SET LOCAL synchronous_commit TO OFF"); !unsynced) {
      (void)exec("ROLLBACK");
      return unsynced;
    }
  }
  auto lock = query("SELECT pg_advisory_xact_lock(?1)");
  if (!lock) return fail(lock.error());
  lock->bind(1, kWriteLockKey);
  if (auto locked = lock->run(); !locked) {
    (void)exec("ROLLBACK");
    return locked;
  }
  return ok();
}

}  // namespace tuneplane::store
