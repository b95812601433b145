#include "store/sql_job_store.h"

#include <algorithm>
#include <utility>

#include "store/error_codes.h"
#include "store/idempotency_keys.h"
#include "store/job_reads.h"
#include "store/job_writes.h"
#include "store/reader_pool.h"

namespace tuneplane::store {

SqlJobStore::SqlJobStore(std::unique_ptr<Connection> writer, std::unique_ptr<ReaderPool> readers,
                         std::size_t max_group)
    : writer_(std::move(writer)),
      readers_(std::move(readers)),
      group_(*writer_, write_mutex_, max_group) {}

// Readers close first: the writer's is then the last connection (for SQLite, closing it
// checkpoints the WAL into the database file).
SqlJobStore::~SqlJobStore() {
  readers_.reset();
  writer_.reset();
}

template <typename Read>
auto SqlJobStore::read(Read&& read) -> decltype(read(std::declval<Connection&>())) {
  return onReader([&](Connection& connection) -> decltype(read(connection)) {
    auto transaction = Transaction::begin(connection, Transaction::Kind::kRead);
    if (!transaction) return fail(transaction.error());
    auto result = read(connection);
    if (!result) return result;  // the transaction rolls back as it ends
    if (auto done = transaction->commit(); !done) return fail(done.error());
    return result;
  });
}

template <typename Read>
auto SqlJobStore::onReader(Read&& read) -> decltype(read(std::declval<Connection&>())) {
  if (!readers_) {
    std::lock_guard lock(write_mutex_);
    return read(*writer_);
  }
  auto lease = readers_->acquire();
  if (!lease) return fail(lease.error());
  return read(lease->connection());
}

Status SqlJobStore::write(const std::function<Status(Connection&)>& write, bool synced) {
  return group_.run(write, synced);
}

Status SqlJobStore::writeRequest(const std::function<Status(Connection&)>& request) {
  return write([&](Connection& c) -> Status {
    if (auto done = request(c); !done) return done;
    return request_hook_ ? request_hook_(c) : ok();
  });
}

Status SqlJobStore::createJob(const JobRecord& job, const EventRecord& created) {
  return writeRequest([&](Connection& c) { return insertNewJob(c, job, created); });
}

Status SqlJobStore::createKeyedJob(const JobRecord& job, const EventRecord& created,
                                   const IdempotencyRecord& key, int64_t expired_before_ms) {
  return writeRequest(
      [&](Connection& c) { return insertKeyedJob(c, job, created, key, expired_before_ms); });
}

Result<std::optional<IdempotencyRecord>> SqlJobStore::findIdempotencyKey(const std::string& owner,
                                                                         const std::string& key,
                                                                         int64_t not_before_ms) {
  return onReader([&](Connection& c) { return readIdempotencyKey(c, owner, key, not_before_ms); });
}

Result<std::optional<JobView>> SqlJobStore::getJob(const std::string& id) {
  return onReader([&](Connection& c) { return readJobView(c, id); });
}

Result<JobPage> SqlJobStore::listJobs(const JobQuery& query) {
  return read([&](Connection& c) { return readJobPage(c, query); });
}

Result<std::vector<JobView>> SqlJobStore::activeJobs() {
  return read([&](Connection& c) { return readActiveJobs(c); });
}

Result<ActiveJobsDelta> SqlJobStore::activeJobsSince(int64_t since_seq) {
  if (since_seq <= 0) {
    return read([&](Connection& c) -> Result<ActiveJobsDelta> {
      auto through = readChangeSeq(c);
      if (!through) return fail(through.error());
      auto all = readActiveJobs(c);
      if (!all) return fail(all.error());
      return ActiveJobsDelta{true, std::move(*all), {}, *through};
    });
  }
  return read([&](Connection& c) { return readActiveJobsSince(c, since_seq); });
}

Result<std::vector<EventRecord>> SqlJobStore::events(const std::string& job_id) {
  return onReader([&](Connection& c) { return readEvents(c, job_id); });
}

Result<std::map<JobPhase, int64_t>> SqlJobStore::countJobsByPhase() {
  return read([&](Connection& c) { return readPhaseCounts(c); });
}

Result<std::map<std::pair<AttemptPhase, EndCause>, int64_t>> SqlJobStore::countEndedAttempts() {
  return read([&](Connection& c) { return readEndedAttemptCounts(c); });
}

Status SqlJobStore::commit(const Change& change) {
  if (auto valid = validateChange(change); !valid) return valid;  // before taking the lock
  return write(
      [&](Connection& c) -> Status {
        if (fence_) {
          if (auto fenced = fence_(c, change.read_epoch); !fenced) return fenced;
        }
        return applyChange(c, change);
      },
      change.synced);
}

namespace {

// Applies one change of a batch in a savepoint of its own, so that a change refused as stale
// is undone alone and the batch goes on; `refused` says whether it was.
Status applyOrSkipStale(Connection& c, const Change& change, bool& refused) {
  refused = false;
  auto step = [&](const char* sql) -> Status {
    auto q = c.query(sql);
    if (!q) return fail(q.error());
    return q->run();
  };
  if (auto begun = step("SAVEPOINT tp_change"); !begun) return begun;
  auto applied = applyChange(c, change);
  if (!applied && applied.error().code != codes::kStale) return applied;
  if (!applied) {
    refused = true;
    if (auto undone = step("ROLLBACK TO SAVEPOINT tp_change"); !undone) return undone;
  }
  return step("RELEASE SAVEPOINT tp_change");
}

}  // namespace

Status SqlJobStore::commitAll(const std::vector<Change>& changes, std::vector<std::size_t>* stale) {
  for (std::size_t i = 0; i < changes.size(); ++i) {
    if (auto valid = validateChange(changes[i]); !valid) {
      Error error = valid.error();
      error.field = "changes[" + std::to_string(i) + "]." + error.field;
      return fail(std::move(error));
    }
  }
  const bool synced = std::any_of(changes.begin(), changes.end(),
                                  [](const Change& change) { return change.synced; });
  std::vector<std::size_t> refused;
  auto done = write(
      [&](Connection& c) -> Status {
        refused.clear();
        for (std::size_t i = 0; i < changes.size(); ++i) {
          const Change& change = changes[i];
          if (fence_ && (i == 0 || change.read_epoch != changes[i - 1].read_epoch)) {
            if (auto fenced = fence_(c, change.read_epoch); !fenced) return fenced;
          }
          if (stale == nullptr) {
            if (auto applied = applyChange(c, change); !applied) return applied;
            continue;
          }
          bool skipped = false;
          if (auto applied = applyOrSkipStale(c, change, skipped); !applied) return applied;
          if (skipped) refused.push_back(i);
        }
        return ok();
      },
      synced);
  if (done && stale != nullptr) stale->insert(stale->end(), refused.begin(), refused.end());
  return done;
}

Status SqlJobStore::requestCancel(const std::string& job_id, const std::string& actor,
                                  int64_t now_ms) {
  return writeRequest([&](Connection& c) { return markCancelRequested(c, job_id, actor, now_ms); });
}

Status SqlJobStore::requestAbandon(const std::string& job_id, int attempt, const std::string& actor,
                                   const std::string& reason, int64_t now_ms) {
  return writeRequest([&](Connection& c) {
    return markAbandonRequested(c, job_id, attempt, actor, reason, now_ms);
  });
}

}  // namespace tuneplane::store
