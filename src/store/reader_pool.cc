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
  auto connection = open_connection_();
  if (!connection) {
    std::lock_guard lock(mutex_);
    --open_;
    returned_.notify_one();
    return fail(connection.error());
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
