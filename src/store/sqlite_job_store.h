// SqliteJobStore: the JobStore in one SQLite file (WAL mode), TunePlane's embedded default.
//
//   open(path)   inspect the file, reading only (schema.h: corrupt, foreign or newer files
//                are refused and keep every byte) → WAL, synchronous=FULL, foreign keys,
//                busy timeout → migrate to the current schema in one transaction.
//
// Durability: synchronous=FULL, so every write (createJob, commit, commitAll, requestCancel,
// requestAbandon) is on disk when it returns — the reconciler commits the submit intent
// before the network call and may rely on it surviving a crash or power loss.
// Concurrency: all writes go through one connection under a mutex (SQLite has one writer
// anyway); reads lease a connection from a small pool and read one consistent snapshot in
// a transaction of their own, so they run in parallel and never wait for a commit. ":memory:"
// (tests) is one private database on one connection, shared by reads and writes under the
// mutex, since separate connections would each see their own empty database.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/result.h"
#include "store/job_store.h"

namespace tuneplane::store {

class Connection;  // sqlite_connection.h
class ReaderPool;  // reader_pool.h

struct SqliteJobStoreOptions {
  int reader_connections = 4;  // the most reads that run at once (file databases)
  int busy_timeout_ms = 5000;  // how long to wait for another process's lock
};

class SqliteJobStore final : public JobStore {
 public:
  inline static const std::string kInMemory = ":memory:";

  // `path` is a file name, taken literally (no URI), or kInMemory. A missing file is created
  // with mode 0600 (it holds every spec as submitted).
  // Errors: "store.corrupt", "store.not_tuneplane", "store.newer_version" (the file is left
  // untouched), "store.invalid" (empty path or bad options), "store.io".
  static Result<std::unique_ptr<SqliteJobStore>> open(const std::string& path,
                                                      SqliteJobStoreOptions options = {});
  ~SqliteJobStore() override;
  SqliteJobStore(const SqliteJobStore&) = delete;
  SqliteJobStore& operator=(const SqliteJobStore&) = delete;

  // JobStore
  Status createJob(const JobRecord& job, const EventRecord& created) override;
  Result<std::optional<JobView>> getJob(const std::string& id) override;
  Result<JobPage> listJobs(const JobQuery& query) override;
  Result<std::vector<JobView>> activeJobs() override;
  Result<std::vector<EventRecord>> events(const std::string& job_id) override;
  Result<std::map<JobPhase, int64_t>> countJobsByPhase() override;
  Result<std::map<std::pair<AttemptPhase, EndCause>, int64_t>> countEndedAttempts() override;
  Status commit(const Change& change) override;
  Status commitAll(const std::vector<Change>& changes) override;  // one transaction
  Status requestCancel(const std::string& job_id, const std::string& actor,
                       int64_t now_ms) override;
  Status requestAbandon(const std::string& job_id, int attempt, const std::string& actor,
                        const std::string& reason, int64_t now_ms) override;

 private:
  SqliteJobStore(std::unique_ptr<Connection> writer, std::unique_ptr<ReaderPool> readers);

  // Runs `read(Connection&)` in a read transaction on a pooled connection (the writer's,
  // under the mutex, for :memory:).
  template <typename Read>
  auto read(Read&& read) -> decltype(read(std::declval<Connection&>()));
  // Runs `write(Connection&)` in a write transaction under the mutex; commits if it succeeds.
  template <typename Write>
  Status write(Write&& write);

  std::mutex write_mutex_;
  std::unique_ptr<Connection> writer_;   // guarded by write_mutex_
  std::unique_ptr<ReaderPool> readers_;  // null for :memory:
};

}  // namespace tuneplane::store
