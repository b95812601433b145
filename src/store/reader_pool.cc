#include "store/reader_pool.h"

namespace tuneplane::store {

ReaderPool::Lease::~Lease() {
  if (connection_) pool_->giveBack(std::move(connection_));
}

Result<ReaderPool::Lease> ReaderPool::acquire() {
  {
    std::unique_lock lock(mutex_);
    returned_.wait(lock, [&] { return !idle_.empty() || open_ < max_; });
    if (!idle_.empty()) {
      auto connection = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(connection));
    }
    ++open_;  // reserved; opened below without holding the lock
  }
  // NOMUTEX: a leased connection is only ever used by one thread at a time.
  auto connection =
      Connection::open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, busy_timeout_ms_);
  Status configured =
      connection ? (*connection)->exec("PRAGMA query_only = ON") : Status(fail(connection.error()));
  if (!configured) {
    std::lock_guard lock(mutex_);
    --open_;
    returned_.notify_one();
    return fail(configured.error());
  }
  return Lease(*this, std::move(*connection));
}

int ReaderPool::openConnections() const {
  std::lock_guard lock(mutex_);
  return open_;
}

void ReaderPool::giveBack(std::unique_ptr<Connection> connection) {
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(connection));
  }
  returned_.notify_one();
}

}  // namespace tuneplane::store
