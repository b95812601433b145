#include "store/sql_job_store.h"

#include <algorithm>
#include <utility>

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

Result<std::optional<JobView>> SqlJobStore::getJob(const std::string& id) {
  return onReader([&](Connection& c) { return readJobView(c, id); });
}

Result<JobPage> SqlJobStore::listJobs(const JobQuery& query) {
  return read([&](Connection& c) { return readJobPage(c, query); });
}

Result<std::vector<JobView>> SqlJobStore::activeJobs() {
  return read([&](Connection& c) { return readActiveJobs(c); });
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
          if (auto fenced = fence_(c); !fenced) return fenced;
        }
        return applyChange(c, change);
      },
      change.synced);
}

Status SqlJobStore::commitAll(const std::vector<Change>& changes) {
  for (std::size_t i = 0; i < changes.size(); ++i) {
    if (auto valid = validateChange(changes[i]); !valid) {
      Error error = valid.error();
      error.field = "changes[" + std::to_string(i) + "]." + error.field;
      return fail(std::move(error));
    }
  }
  const bool synced = std::any_of(changes.begin(), changes.end(),
                                  [](const Change& change) { return change.synced; });
  return write(
      [&](Connection& c) -> Status {
        if (fence_) {
          if (auto fenced = fence_(c); !fenced) return fenced;
        }
        for (const Change& change : changes) {
          if (auto done = applyChange(c, change); !done) return done;
        }
        return ok();
      },
      synced);
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
