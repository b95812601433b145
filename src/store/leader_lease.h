// LeaderLease: which of several `serve` replicas on one PostgreSQL database runs the control
// loop, with a fencing epoch (the issue's §2, in the manner of Airflow's HA scheduler: no
// consensus service, only the database the replicas already share).
//
// Liveness rides on the database session. The leader holds a session advisory lock
// (kLeaderLockKey) on a connection of its own and renews the one leader_lease row
// (epoch, holder, holder_pid, expires_ms by the database's clock) every lease/3. A standby
// tries the lock every lease/3:
//   - the leader was killed: its session ended and the lock with it; the standby takes it;
//   - the leader is paused or cut off (SIGSTOP, GC, a partition): its session lives on, but
//     the row expires; the standby then ends that session (pg_terminate_backend of
//     holder_pid, allowed to a role on its own sessions), and takes the lock on its next try.
// Taking the lease bumps the epoch in the row. Safety does not rest on any of the timing:
// every write of the reconciler (JobStore::commit/commitAll) checks, inside its own write
// transaction, that the row's epoch is still the one this replica took (sql_job_store.h's
// fence), and every write transaction of every replica is serialized by the writers' lock
// (pg_connection.h) — so once a new leader's bump commits, the old leader can change
// nothing, whenever it wakes up. A leader that cannot renew (its row's epoch moved, or the
// database failed it) steps down at once.
// Thread-safety: every method may be called from any thread; the renewal runs on a thread of
// its own, started by start().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/result.h"
#include "store/pg_connection.h"

namespace tuneplane::store {

inline constexpr int64_t kLeaderLockKey = 0x54506C6E0002;  // "TPln", 2: the leader
inline constexpr int kDefaultLeaseSeconds = 10;

struct LeaseOptions {
  int lease_seconds = kDefaultLeaseSeconds;  // a dead leader is replaced within about this
  std::string holder;                        // names this replica in the row and the log
  // Called (from the lease's thread) on every change: taken (true) or lost (false), with the
  // epoch taken or lost.
  std::function<void(bool leader, int64_t epoch, const std::string& why)> on_change = {};
};

class LeaderLease {
 public:
  // Connects its own session. Errors: those of PgConnection::open; "store.invalid" for a
  // lease_seconds below 1.
  static Result<std::unique_ptr<LeaderLease>> open(const std::string& uri,
                                                   const PgConnectionOptions& connection,
                                                   LeaseOptions options);
  ~LeaderLease();  // stops renewing and ends the session (a standby takes over at once)
  LeaderLease(const LeaderLease&) = delete;
  LeaderLease& operator=(const LeaderLease&) = delete;

  // One round now (take, renew or check), then every lease/3 on the lease's thread.
  void start();
  // One round, on the caller's thread (start() does the rest); tests drive it directly.
  void step();
  // Stops the thread without giving anything up, as a SIGSTOP would freeze it (tests).
  void freeze();

  bool isLeader() const { return epoch_.load() != 0; }
  // The epoch this replica holds; 0 when it is not the leader.
  int64_t epoch() const { return epoch_.load(); }
  // How many reconciler writes the fence refused (tuneplane_store_fenced_writes_total).
  int64_t fencedWrites() const { return fenced_.load(); }
  int64_t transitions() const { return transitions_.load(); }

  // The fence for SqlJobStore: inside the caller's write transaction, refuses
  // ("store.fenced") unless this replica holds the lease, the row still has its epoch, and
  // — when `read_epoch` is not 0 — that is the epoch the write's state was read under (a
  // leader that lost the lease and took it again cannot commit what it read before).
  Status checkFence(Connection& writer, int64_t read_epoch = 0);

 private:
  LeaderLease(std::unique_ptr<PgConnection> session, LeaseOptions options)
      : session_(std::move(session)), options_(std::move(options)) {}
  void take();
  // Takes the lease's row in a transaction of its own: the new epoch, or 0 when it failed
  // (nothing changed).
  int64_t bumpEpoch();
  void renew();
  std::optional<bool> tryLock();
  void stepDown(const std::string& why);
  void run(std::stop_token stop);

  std::mutex step_mutex_;                  // one round at a time
  std::unique_ptr<PgConnection> session_;  // guarded by step_mutex_
  const LeaseOptions options_;
  std::atomic<int64_t> epoch_{0};
  std::atomic<int64_t> fenced_{0};
  std::atomic<int64_t> transitions_{0};
  std::mutex wait_mutex_;
  std::condition_variable_any wake_;
  std::jthread thread_;
};

}  // namespace tuneplane::store
