// A small pool of read connections to one database, so reads run in parallel with each
// other and with the writer (SQLite in WAL mode, and PostgreSQL: a reader sees the last
// committed snapshot and never waits for the writer). Connections are opened on demand up to a
// maximum and kept, with their prepared statements, for reuse; a caller beyond the maximum waits
// for one to come back (reads are short, so the wait is too). `open` makes each one (read-only
// where the database can say so). Thread-safety: acquire() may be called from any thread; a Lease
// is used by one thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

class ReaderPool {
 public:
  using Opener = std::function<Result<std::unique_ptr<Connection>>()>;
  // REQUIRES: max_connections >= 1; the database `open` connects to has its schema.
  ReaderPool(Opener open, int max_connections)
      : open_connection_(std::move(open)), max_(max_connections) {}
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  // A connection for one thread's use; given back to the pool when the Lease ends.
  class Lease {
   public:
    Lease(ReaderPool& pool, std::unique_ptr<Connection> connection)
        : pool_(&pool), connection_(std::move(connection)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Connection& connection() { return *connection_; }

   private:
    ReaderPool* pool_;
    std::unique_ptr<Connection> connection_;
  };

  Result<Lease> acquire();
  int openConnections() const;

 private:
  void giveBack(std::unique_ptr<Connection> connection);

  const Opener open_connection_;
  const int max_;
  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mutex_
  int open_ = 0;                                   // guarded by mutex_
};

}  // namespace tuneplane::store
