// GroupCommit: the store's writes, made durable in groups (classic group commit). A durable
// commit costs one sync of the log (SQLite's WAL under synchronous=FULL: an fdatasync; a
// PostgreSQL commit: a WAL flush), and the store has one writer connection, so one write per
// transaction caps the store at one write per sync whatever the number of writing threads.
// Here a writer that arrives while another group is being written and synced queues up;
// when that group is done, one of the queued writers (the leader) takes every write queued
// by then (up to a limit the store sets) and applies them in ONE write transaction with ONE
// commit, and each caller returns only once that commit is durable. A lone writer pays
// nothing extra: a group of one is a plain transaction.
//
// Each write of a group of several runs inside a SAVEPOINT of its own: a write that fails
// is rolled back to its savepoint and fails alone, with its own error; the others commit.
// If the group's transaction itself fails (BEGIN, a savepoint that cannot be rolled back
// to, COMMIT), every write of the group that had succeeded fails with that error, and none
// of the group is in the database. A thread's writes are applied in the order it makes them
// (it waits for each); writes of different threads in one group, in the order they queued.
//
// Thread-safety: run() may be called from any thread. The connection is used under
// `connection_mutex`, which the owner may also take to use the connection itself.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include "common/result.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

// What the groups have been so far, for tests and benchmarks.
struct GroupCommitStats {
  int64_t writes = 0;        // write functions run
  int64_t transactions = 0;  // write transactions begun (one per group)
  int64_t unsynced = 0;      // of them, committed without waiting for a sync
  int waiting = 0;           // writes queued now, waiting for a leader to take them
};

class GroupCommit {
 public:
  using Write = std::function<Status(Connection&)>;

  // `max_group`: the most writes one transaction takes (the oldest waiting first); 0 for
  // no limit. 1 makes every write a transaction of its own, in the order the writers came.
  GroupCommit(Connection& connection, std::mutex& connection_mutex, std::size_t max_group)
      : connection_(connection), connection_mutex_(connection_mutex), max_group_(max_group) {}
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Runs `write` inside a write transaction, in a group with whatever other writes are
  // waiting, and returns once that transaction has committed (its result) or failed.
  // `write` may run on another caller's thread; it must not call back into the store.
  // `synced` false: the write need not wait for the log's sync (TransactionKind::
  // kWriteUnsynced); a group is committed unsynced only when none of its writes asks for it.
  Status run(const Write& write, bool synced = true);

  GroupCommitStats stats() const;

 private:
  struct Pending {
    const Write* write;
    bool synced = true;
    Status result = ok();
    bool done = false;  // guarded by mutex_
  };

  // Applies `group` in one transaction (synced or not); sets each one's result. Holds
  // connection_mutex_.
  void commitGroup(const std::deque<Pending*>& group, bool synced);
  // Each write in a savepoint of its own (a group of several). False: the transaction is
  // lost (`broken` says why) and must be rolled back.
  bool applyInSavepoints(const std::deque<Pending*>& group, Error& broken);

  Connection& connection_;
  std::mutex& connection_mutex_;
  const std::size_t max_group_;

  mutable std::mutex mutex_;
  std::condition_variable group_done_;
  std::deque<Pending*> queue_;  // guarded by mutex_
  bool leading_ = false;        // guarded by mutex_: a leader is writing a group
  int64_t writes_ = 0;          // guarded by mutex_
  int64_t transactions_ = 0;    // guarded by mutex_
  int64_t unsynced_ = 0;        // guarded by mutex_
};

}  // namespace tuneplane::store
