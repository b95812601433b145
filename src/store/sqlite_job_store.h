// SqliteJobStore: the JobStore in one SQLite file (WAL mode), TunePlane's embedded default.
//
//   open(path)   inspect the file, reading only (schema.h: corrupt, foreign or newer files
//                are refused and keep every byte) → WAL, synchronous=FULL, foreign keys,
//                busy timeout → migrate to the current schema in one transaction.
//
// Durability: synchronous=FULL, so every write (createJob, commit, commitAll, requestCancel,
// requestAbandon) is on disk when it returns — the reconciler commits the submit intent
// before the network call and may rely on it surviving a crash or power loss.
// Concurrency (sql_job_store.h): one writer connection, writes of threads writing at once in
// one transaction and sync (group_commit.h); reads lease pooled connections. ":memory:" is
// one private database on one connection, shared by reads and writes under the mutex, since
// separate connections would each see their own empty database.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "store/sql_job_store.h"

namespace tuneplane::store {

struct SqliteJobStoreOptions {
  int reader_connections = 4;  // the most reads that run at once (file databases)
  int busy_timeout_ms = 5000;  // how long to wait for another process's lock
};

class SqliteJobStore final : public SqlJobStore {
 public:
  inline static const std::string kInMemory = ":memory:";

  // `path` is a file name, taken literally (no URI), or kInMemory. A missing file is created
  // with mode 0600 (it holds every spec as submitted).
  // Errors: "store.corrupt", "store.not_tuneplane", "store.newer_version" (the file is left
  // untouched), "store.invalid" (empty path or bad options), "store.io".
  static Result<std::unique_ptr<SqliteJobStore>> open(const std::string& path,
                                                      SqliteJobStoreOptions options = {});

 private:
  using SqlJobStore::SqlJobStore;
};

}  // namespace tuneplane::store
