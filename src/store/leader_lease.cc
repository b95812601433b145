#include "store/leader_lease.h"

#include <utility>

#include "store/error_codes.h"

namespace tuneplane::store {
namespace {

// The database's clock in ms, so replicas' clocks never have to agree.
constexpr const char* kNowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

}  // namespace

Result<std::unique_ptr<LeaderLease>> LeaderLease::open(const std::string& uri,
                                                       const PgConnectionOptions& connection,
                                                       LeaseOptions options) {
  if (options.lease_seconds < 1) {
    return fail(codes::kInvalid, "server.lease_seconds", "the lease is at least 1 second");
  }
  auto session = PgConnection::open(uri, connection);
  if (!session) return fail(session.error());
  return std::unique_ptr<LeaderLease>(new LeaderLease(std::move(*session), std::move(options)));
}

LeaderLease::~LeaderLease() {
  if (thread_.joinable()) {
    thread_.request_stop();
    wake_.notify_all();
    thread_.join();
  }
  // Ending the session releases the advisory lock: a standby takes over on its next try.
}

void LeaderLease::start() {
  step();
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

void LeaderLease::freeze() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  wake_.notify_all();
  thread_.join();
}

void LeaderLease::run(std::stop_token stop) {
  const auto period = std::chrono::milliseconds(options_.lease_seconds * 1000 / 3);
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(wait_mutex_);
      wake_.wait_for(lock, stop, period, [] { return false; });
    }
    if (stop.stop_requested()) return;
    step();
  }
}

void LeaderLease::step() {
  std::lock_guard lock(step_mutex_);
  if (isLeader()) {
    renew();
  } else {
    take();
  }
}

void LeaderLease::stepDown(const std::string& why) {
  const int64_t lost = epoch_.exchange(0);
  if (lost == 0) return;
  ++transitions_;
  // Gives the lock back if the session still has it (it may be gone with the session).
  if (auto q = session_->query("SELECT pg_advisory_unlock(?1)::int")) {
    q->bind(1, kLeaderLockKey);
    (void)q->run();
  }
  if (options_.on_change) options_.on_change(false, lost, why);
}

void LeaderLease::renew() {
  auto transaction = Transaction::begin(*session_, Transaction::Kind::kLeaseWrite);
  if (!transaction) return stepDown("cannot renew the lease: " + transaction.error().message);
  static const std::string sql = std::string("UPDATE leader_lease SET expires_ms = ") + kNowMs +
                                 " + ?2 WHERE id = 1 AND epoch = ?1 RETURNING epoch";
  Result<bool> still = false;
  {
    auto q = session_->query(sql);
    if (!q) return stepDown("cannot renew the lease: " + q.error().message);
    q->bind(1, epoch_.load()).bind(2, int64_t{options_.lease_seconds} * 1000);
    still = q->step();
  }
  if (!still) return stepDown("cannot renew the lease: " + still.error().message);
  if (!*still) return stepDown("another replica took the lease (a newer epoch)");
  if (auto done = transaction->commit(); !done) {
    stepDown("cannot renew the lease: " + done.error().message);
  }
}

// Whether this session got the leader's lock; nullopt when the database did not answer.
std::optional<bool> LeaderLease::tryLock() {
  auto q = session_->query("SELECT pg_try_advisory_lock(?1)::int");
  if (!q) return std::nullopt;
  q->bind(1, kLeaderLockKey);
  auto row = q->step();
  if (!row || !*row) return std::nullopt;
  return q->integer(0) != 0;
}

int64_t LeaderLease::bumpEpoch() {
  auto transaction = Transaction::begin(*session_, Transaction::Kind::kLeaseWrite);
  if (!transaction) return 0;
  static const std::string sql =
      std::string(
          "INSERT INTO leader_lease (id, epoch, holder, holder_pid, expires_ms)"
          " VALUES (1, 1, ?1, pg_backend_pid(), ") +
      kNowMs +
      " + ?2) ON CONFLICT (id) DO UPDATE SET epoch = leader_lease.epoch + 1,"
      " holder = excluded.holder, holder_pid = excluded.holder_pid,"
      " expires_ms = excluded.expires_ms RETURNING epoch";
  int64_t taken = 0;
  {
    auto q = session_->query(sql);
    if (!q) return 0;
    q->bind(1, options_.holder).bind(2, int64_t{options_.lease_seconds} * 1000);
    auto row = q->step();
    if (!row || !*row) return 0;
    taken = q->integer(0);
  }
  return transaction->commit() ? taken : 0;  // not committed: rolled back as it ends
}

void LeaderLease::take() {
  // A session lost with a restarted database is connected again here.
  if (!session_->ensureConnected()) return;
  const auto locked = tryLock();
  if (!locked) return;
  if (!*locked) {
    // Someone holds the lock. A live leader renews; one whose row has expired is paused or
    // cut off: end its lease session so that its lock goes (its writes are fenced anyway),
    // and every session of that replica stopped inside a transaction — one that holds the
    // writers' lock would hold every replica's writes until the server's
    // idle_in_transaction_session_timeout — then take the lock on the next round. Its idle
    // sessions (the API's reads) are left alone.
    static const std::string stale =
        std::string("SELECT count(pg_terminate_backend(s.pid)) FROM leader_lease l") +
        " JOIN pg_stat_activity s ON s.pid = l.holder_pid OR (s.application_name = left("
        "'tuneplane ' || l.holder, 63) AND (s.state LIKE 'idle in transaction%' OR s.pid IN"
        " (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1"
        " AND classid = " +
        std::to_string(kWriteLockKey >> 32) +
        " AND objid = " + std::to_string(kWriteLockKey & 0xFFFFFFFF) + ")))" +
        " WHERE l.id = 1 AND l.expires_ms < " + kNowMs + " AND s.pid <> pg_backend_pid()";
    (void)session_->exec(stale);
    return;
  }
  // From here the session holds the leader's lock (re-entrant: a second pg_try_advisory_lock
  // counts twice). Unless the lease is taken below, it is given back, or a failed take would
  // keep it and no replica could ever take the lease again.
  const int64_t taken = bumpEpoch();
  if (taken == 0) {
    if (auto q = session_->query("SELECT pg_advisory_unlock(?1)::int")) {
      q->bind(1, kLeaderLockKey);
      (void)q->run();
    }
    return;
  }
  epoch_ = taken;
  ++transitions_;
  if (options_.on_change) options_.on_change(true, taken, "took the lease");
}

Status LeaderLease::checkFence(Connection& writer, int64_t read_epoch) {
  const int64_t mine = epoch_.load();
  if (read_epoch != 0 && read_epoch != mine) {
    ++fenced_;
    return fail(codes::kFenced, "epoch",
                "this write was built from a read under the lease's epoch " +
                    std::to_string(read_epoch) + ", and this replica now holds " +
                    (mine == 0 ? std::string("none") : "epoch " + std::to_string(mine)) +
                    ": it was refused");
  }
  auto q = writer.query("SELECT epoch FROM leader_lease WHERE id = 1");
  if (!q) return fail(q.error());
  auto row = q->step();
  if (!row) return fail(row.error());
  const int64_t current = *row ? q->integer(0) : 0;
  if (mine != 0 && current == mine) return ok();
  ++fenced_;
  return fail(codes::kFenced, "epoch",
              mine == 0 ? "this replica does not hold the lease: the leader writes"
                        : "this replica's lease (epoch " + std::to_string(mine) +
                              ") was taken over (epoch " + std::to_string(current) +
                              "); its write was refused");
}

}  // namespace tuneplane::store
