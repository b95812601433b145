#include "store/group_commit.h"

#include <algorithm>
#include <string>

namespace tuneplane::store {
namespace {

constexpr const char* kSavepoint = "SAVEPOINT tp_write";
constexpr const char* kRelease = "RELEASE SAVEPOINT tp_write";
constexpr const char* kRollbackTo = "ROLLBACK TO SAVEPOINT tp_write";

// A cached statement, as Transaction runs BEGIN and COMMIT: prepared once per connection.
Status runStatement(Connection& connection, const char* sql) {
  auto q = connection.query(sql);
  if (!q) return fail(q.error());
  return q->run();
}

}  // namespace

Status GroupCommit::run(const Write& write, bool synced) {
  Pending mine{&write, synced};
  std::unique_lock lock(mutex_);
  queue_.push_back(&mine);
  while (!mine.done) {
    if (leading_) {
      // Another group is being written and synced; ours is taken by the next leader.
      group_done_.wait(lock);
      continue;
    }
    leading_ = true;
    std::deque<Pending*> group;
    if (max_group_ == 0 || queue_.size() <= max_group_) {
      group.swap(queue_);
    } else {
      // The oldest first; ours may be left for a later group (this loop leads it then).
      const auto end = queue_.begin() + static_cast<std::ptrdiff_t>(max_group_);
      group.assign(queue_.begin(), end);
      queue_.erase(queue_.begin(), end);
    }
    ++transactions_;
    writes_ += static_cast<int64_t>(group.size());
    const bool synced = std::any_of(group.begin(), group.end(),
                                    [](const Pending* pending) { return pending->synced; });
    if (!synced) ++unsynced_;
    lock.unlock();
    commitGroup(group, synced);
    lock.lock();
    for (Pending* pending : group) pending->done = true;
    leading_ = false;
    group_done_.notify_all();
  }
  return mine.result;
}

GroupCommitStats GroupCommit::stats() const {
  std::lock_guard lock(mutex_);
  return GroupCommitStats{writes_, transactions_, unsynced_, static_cast<int>(queue_.size())};
}

void GroupCommit::commitGroup(const std::deque<Pending*>& group, bool synced) {
  std::lock_guard lock(connection_mutex_);
  auto transaction = Transaction::begin(
      connection_, synced ? Transaction::Kind::kWrite : Transaction::Kind::kWriteUnsynced);
  if (!transaction) {
    for (Pending* pending : group) pending->result = fail(transaction.error());
    return;
  }
  if (group.size() == 1) {
    // Alone: the write's own transaction, rolled back as it ends if the write failed.
    Pending& only = *group.front();
    only.result = (*only.write)(connection_);
    if (only.result) only.result = transaction->commit();
    return;
  }
  // Every write that had succeeded shares the group's fate; one that failed keeps its error.
  auto failSucceeded = [&](Error error) {
    error.message = "the group of " + std::to_string(group.size()) +
                    " writes this one was committed in failed: " + error.message;
    for (Pending* pending : group) {
      if (pending->result) pending->result = fail(error);
    }
  };
  Error broken;
  if (!applyInSavepoints(group, broken)) {
    failSucceeded(std::move(broken));
    return;  // the transaction rolls back as it ends
  }
  const bool any = std::any_of(group.begin(), group.end(),
                               [](const Pending* pending) { return pending->result.has_value(); });
  if (!any) return;  // every write failed: nothing to commit
  if (auto committed = transaction->commit(); !committed) failSucceeded(committed.error());
}

bool GroupCommit::applyInSavepoints(const std::deque<Pending*>& group, Error& broken) {
  for (Pending* pending : group) {
    if (auto begun = runStatement(connection_, kSavepoint); !begun) {
      broken = begun.error();
      return false;
    }
    pending->result = (*pending->write)(connection_);
    if (pending->result) {
      if (auto released = runStatement(connection_, kRelease); !released) {
        broken = released.error();
        return false;
      }
      continue;
    }
    // This write alone is undone. An error SQLite answers by rolling back the whole
    // transaction (a full disk, an I/O error) leaves no savepoint to return to: then the
    // group is lost, and says after what.
    Status undone = runStatement(connection_, kRollbackTo);
    if (undone) undone = runStatement(connection_, kRelease);
    if (!undone) {
      broken = undone.error();
      broken.message +=
          " (after one of its writes failed: " + pending->result.error().message + ")";
      return false;
    }
  }
  return true;
}

}  // namespace tuneplane::store
