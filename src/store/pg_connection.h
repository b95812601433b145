// One PostgreSQL connection (the Connection of sql_connection.h) through libpq, with its
// prepared statements cached by SQL text like SqliteConnection's. The store's SQL is
// written with SQLite's parameters ("?1", ":owner"); this connection renumbers them to
// PostgreSQL's "$n" as it prepares a statement. Values travel as text; results come back
// as text and are read as integers where the store asks for integers.
//
// Text values may hold any byte but NUL, which PostgreSQL's text type refuses; the store
// keeps NUL (a spec is stored exactly as submitted), so bound text escapes 0x00 as
// 0x01 '0' and 0x01 as 0x01 '1', and read text undoes it. The escaping is a bijection, so
// equality (every comparison the store makes on text) is unchanged.
//
// Write transactions take one transaction-level advisory lock (kWriteLockKey) first, so
// every writer of the database — this replica's or another's — runs one at a time, as on
// SQLite, and a check-then-write (createJob's id check, cancel's "already requested") can
// never interleave with another writer. Reads run REPEATABLE READ READ ONLY: one snapshot.
// No session can stall the others for long: each sets lock_timeout, statement_timeout and
// idle_in_transaction_session_timeout (PgConnectionOptions), so a writer paused or cut off
// inside its transaction is ended by the server and the lock it held is freed, and a wait
// for a lock or a statement that overruns fails "store.busy" (SQLSTATE 55P03, 57014)
// instead of hanging; TCP keepalives on both ends find a peer that vanished. Each session is
// named (application_name: sessionName(holder)) so that a replica taking the lease over can
// end every session of the one it replaces.
// A connection found broken at the start of a transaction is reset once (PQreset) and its
// statement cache dropped, so a restarted or failed-over server is reconnected to.
//
// Errors: SQLSTATE class 23 (integrity) → "store.constraint", XX001/XX002 (data or index
// corrupted) → "store.corrupt", anything else → "store.io"; messages carry PostgreSQL's
// text and never the password.
// Thread-safety: none (see sql_connection.h).
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

inline constexpr int64_t kWriteLockKey = 0x54506C6E0001;  // "TPln", 1: the store's writes
inline constexpr int kMinPostgresVersion = 150000;        // PostgreSQL 15

struct PgConnectionOptions {
  std::optional<std::string> password;  // when not in PGPASSFILE / ~/.pgpass
  int connect_timeout_s = 10;           // unless the URI says otherwise
  bool read_only = false;               // default_transaction_read_only (reader pools)
  // The session's bounds (PostgreSQL settings, SET at connect): the longest wait for a lock
  // (the writers' lock included), the longest statement, and how long the server lets a
  // session sit idle inside a transaction before it ends it (a SIGSTOPped or partitioned
  // writer). Each fails its own transaction only.
  int lock_timeout_ms = 5'000;
  int statement_timeout_ms = 30'000;
  int idle_in_transaction_timeout_ms = 15'000;
  std::string application_name = "tuneplane";  // sessionName() of the replica
};

// The application_name of every session of the replica called `holder` (its lease's holder).
std::string sessionName(std::string_view holder);

struct PgConnCloser {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};

// `uri` with any password in it replaced by "***", for messages and logs.
std::string redactUri(std::string_view uri);

// The SQL with "?N" renumbered to "$N" and each distinct ":name" given the next number
// after the highest "?N"; `names` receives name → number. Quoted text is left alone.
std::string toPostgresParameters(std::string_view sql, std::unordered_map<std::string, int>& names,
                                 int& count);

class PgConnection final : public Connection {
 public:
  // Connects to `uri` (a libpq connection URI or key=value string). Errors: "store.io"
  // (unreachable, refused, authentication, a server older than PostgreSQL 15).
  static Result<std::unique_ptr<PgConnection>> open(const std::string& uri,
                                                    const PgConnectionOptions& options);
  ~PgConnection() override;

  Status exec(std::string_view sql) override;
  Result<Query> query(std::string_view sql) override;
  Dialect dialect() const override { return Dialect::kPostgres; }
  const std::string& path() const override { return description_; }
  Status beginTransaction(TransactionKind kind) override;
  // Connects again (once) if the session was lost; its prepared statements go with it.
  Status ensureConnected();

  PGconn* raw() const { return conn_.get(); }

 private:
  PgConnection(std::unique_ptr<PGconn, PgConnCloser> conn, std::string description)
      : conn_(std::move(conn)), description_(std::move(description)) {}

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unique_ptr<PGconn, PgConnCloser> conn_;
  std::string description_;
  int next_statement_ = 0;
  std::unordered_map<std::string, std::unique_ptr<Statement>, Hash, std::equal_to<>> statements_;
};

}  // namespace tuneplane::store
