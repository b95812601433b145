// SqlJobStore: the JobStore over SQL connections, whatever the database (SQLite or
// PostgreSQL): one writer connection under a mutex, and reads on a pool of connections,
// each reading one consistent snapshot in a read transaction of its own, so they run in
// parallel and never wait for a commit. Without a pool (SQLite's ":memory:"), reads share
// the writer under the mutex. SqliteJobStore and PostgresJobStore open and configure the
// connections, then hand them here; the reads and writes are job_reads.h / job_writes.h.
// A write transaction is serialized against every other writer of the database (SQLite's
// write lock; PostgreSQL's transaction advisory lock, pg_connection.h), so the check-then-
// write requests (createJob, requestCancel, requestAbandon) behave the same on both.
// Writes from several threads at once are committed in groups (group_commit.h): one
// transaction and one sync for all the writes that queued while the previous group synced,
// each in a savepoint of its own, each caller returning once its write is durable.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "common/result.h"
#include "store/group_commit.h"
#include "store/job_store.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

class ReaderPool;  // reader_pool.h

class SqlJobStore : public JobStore {
 public:
  ~SqlJobStore() override;
  SqlJobStore(const SqlJobStore&) = delete;
  SqlJobStore& operator=(const SqlJobStore&) = delete;

  // JobStore
  Status createJob(const JobRecord& job, const EventRecord& created) override;
  Status createKeyedJob(const JobRecord& job, const EventRecord& created,
                        const IdempotencyRecord& key, int64_t expired_before_ms) override;
  Result<std::optional<IdempotencyRecord>> findIdempotencyKey(const std::string& owner,
                                                              const std::string& key,
                                                              int64_t not_before_ms) override;
  Result<std::optional<JobView>> getJob(const std::string& id) override;
  Result<JobPage> listJobs(const JobQuery& query) override;
  Result<std::vector<JobView>> activeJobs() override;
  Result<std::vector<EventRecord>> events(const std::string& job_id) override;
  Result<std::map<JobPhase, int64_t>> countJobsByPhase() override;
  Result<std::map<std::pair<AttemptPhase, EndCause>, int64_t>> countEndedAttempts() override;
  Status commit(const Change& change) override;
  Result<ActiveJobsDelta> activeJobsSince(int64_t since_seq) override;
  Status commitAll(const std::vector<Change>& changes,
                   std::vector<std::size_t>* stale = nullptr) override;  // one transaction
  Status requestCancel(const std::string& job_id, const std::string& actor,
                       int64_t now_ms) override;
  Status requestAbandon(const std::string& job_id, int attempt, const std::string& actor,
                        const std::string& reason, int64_t now_ms) override;

  // How the writes have been grouped so far (tests, benchmarks).
  GroupCommitStats writeStats() const { return group_.stats(); }

 protected:
  // `readers` null: reads use the writer, under the mutex. `max_group`: the most writes one
  // transaction takes (GroupCommit; 0: no limit, 1: no grouping).
  SqlJobStore(std::unique_ptr<Connection> writer, std::unique_ptr<ReaderPool> readers,
              std::size_t max_group);

  // Runs `read(Connection&)` in a read transaction on a pooled connection (the writer's,
  // under the mutex, without a pool).
  template <typename Read>
  auto read(Read&& read) -> decltype(read(std::declval<Connection&>()));
  // Runs `read(Connection&)` on a pooled connection without a transaction: for a read that
  // is one statement, whose own snapshot is consistent (and which saves a database server
  // two round trips, BEGIN and COMMIT).
  template <typename Read>
  auto onReader(Read&& read) -> decltype(read(std::declval<Connection&>()));
  // Runs `write(Connection&)` in a write transaction (shared with the writes of other threads
  // that wait at the same time, each in a savepoint of its own); returns once it is durable,
  // or with `synced` false once it is committed (TransactionKind::kWriteUnsynced).
  Status write(const std::function<Status(Connection&)>& write, bool synced = true);
  // write() for an API request: `write`, then the request hook, in one transaction.
  Status writeRequest(const std::function<Status(Connection&)>& write);
  // A check commit() and commitAll() run first inside their write transaction (the
  // reconciler's writes; the API's requests are not fenced), given the change's read_epoch.
  // REQUIRES: set before the store is shared between threads.
  using CommitFence = std::function<Status(Connection&, int64_t read_epoch)>;
  void setCommitFence(CommitFence fence) { fence_ = std::move(fence); }
  // A step createJob, requestCancel and requestAbandon run last inside their write
  // transaction (PostgreSQL: NOTIFY the replicas). REQUIRES: as setCommitFence.
  void setRequestHook(std::function<Status(Connection&)> hook) { request_hook_ = std::move(hook); }

 private:
  std::mutex write_mutex_;
  std::unique_ptr<Connection> writer_;   // guarded by write_mutex_
  std::unique_ptr<ReaderPool> readers_;  // may be null
  GroupCommit group_;                    // uses writer_ under write_mutex_
  CommitFence fence_;
  std::function<Status(Connection&)> request_hook_;
};

}  // namespace tuneplane::store
