// The reader pool reuses its connections, never opens more than its maximum, and makes a
// caller beyond the maximum wait until a lease ends (bounded: the holder lets go).
#include "store/reader_pool.h"
#include "store/sqlite_connection.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

class ReaderPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("pool.db");
    ASSERT_NE(openOrDie(path_), nullptr);  // creates the schema
  }
  tuneplane::testing::TempDir dir_;
  std::string path_;
};

TEST_F(ReaderPoolTest, ReusesConnectionsUpToItsMaximum) {
  ReaderPool pool([&] { return openSqliteReader(path_, 1000); }, 2);
  Connection* first = nullptr;
  {
    auto a = pool.acquire();
    ASSERT_TRUE(a);
    first = &a->connection();
  }
  {
    auto again = pool.acquire();
    ASSERT_TRUE(again);
    EXPECT_EQ(&again->connection(), first);  // the same connection, statements cached
    auto second = pool.acquire();
    ASSERT_TRUE(second);
    EXPECT_NE(&second->connection(), first);
  }
  EXPECT_EQ(pool.openConnections(), 2);
}

TEST_F(ReaderPoolTest, ConnectionsAreReadOnly) {
  ReaderPool pool([&] { return openSqliteReader(path_, 1000); }, 1);
  auto lease = pool.acquire();
  ASSERT_TRUE(lease);
  EXPECT_TRUE(lease->connection().queryInteger("SELECT count(*) FROM jobs"));
  EXPECT_FALSE(lease->connection().exec("DELETE FROM jobs"));
}

TEST_F(ReaderPoolTest, ACallerBeyondTheMaximumWaitsForALease) {
  ReaderPool pool([&] { return openSqliteReader(path_, 1000); }, 1);
  auto held = std::make_optional(pool.acquire());
  ASSERT_TRUE(*held);
  std::atomic<bool> acquired{false};
  std::thread waiter([&] {
    auto lease = pool.acquire();
    acquired = lease.has_value();
  });
  // The waiter cannot get a connection while the only one is held...
  EXPECT_TRUE(tuneplane::test::holdsThroughout([&] { return !acquired.load(); },
                                               std::chrono::milliseconds(50),
                                               std::chrono::milliseconds(5)))
      << "a second lease was handed out while the only connection was held";
  held.reset();  // ...and gets it once the lease ends.
  waiter.join();
  EXPECT_TRUE(acquired.load());
  EXPECT_EQ(pool.openConnections(), 1);
}

TEST_F(ReaderPoolTest, AFailedOpenGivesItsPlaceBack) {
  const std::string missing = dir_.file("missing/dir.db");
  ReaderPool pool([&] { return openSqliteReader(missing, 1000); }, 1);
  for (int i = 0; i < 3; ++i) {
    auto lease = pool.acquire();  // would block forever if a failed open kept its slot
    ASSERT_FALSE(lease);
    EXPECT_EQ(lease.error().code, "store.io");
  }
  EXPECT_EQ(pool.openConnections(), 0);
}

}  // namespace
}  // namespace tuneplane::store
