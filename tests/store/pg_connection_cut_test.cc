// A PostgreSQL session whose connection was cut while it was idle — reset by a middlebox (the
// fault proxy, support/fault_proxy.h), a server restarted or failed over — is noticed only by
// the next statement. pg_connection.h promises that a connection found broken at the start of
// a transaction is reset once: the next transaction, read or write, must go through, not fail
// with "server closed the connection unexpectedly" (which the API answers 500). Found by issue
// 37's campaign (a replica's database connections cut, then a POST through it). The lease's
// session is the exception: it held the leader's lock, which went with it, so its renew fails
// and the replica steps down.
#include <gtest/gtest.h>

#include <chrono>

#include "store/pg_connection.h"
#include "support/fault_proxy.h"
#include "support/pg_cluster.h"
#include "support/wait.h"

namespace tuneplane::store {
namespace {

// Each test's own database on the shared server, reached through a fault proxy.
class PgCut : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    cluster_ = test::sharedPostgres(why);
    if (cluster_ == nullptr) {
      if (test::postgresRequired()) FAIL() << "PostgreSQL required: " << why;
      GTEST_SKIP() << "*** SKIPPED: no PostgreSQL: " << why;
    }
    db_ = cluster_->createDatabase(why);
    ASSERT_FALSE(db_.empty()) << why;
    proxy_ = test::FaultProxy::start(
        {.upstream = test::ProxyUpstream::unixSocket(cluster_->socketPath()), .http = false}, why);
    ASSERT_NE(proxy_, nullptr) << why;
  }
  void TearDown() override {
    if (cluster_ != nullptr && !db_.empty()) cluster_->dropDatabase(db_);
  }
  // A connection through the proxy that has run one transaction of `kind`, then was cut.
  std::unique_ptr<PgConnection> connectedThenCut(TransactionKind kind) {
    auto conn = PgConnection::open(cluster_->uriThrough(proxy_->address(), db_), {});
    EXPECT_TRUE(conn) << conn.error().describe();
    if (!conn) return nullptr;
    {
      auto before = Transaction::begin(**conn, kind);
      EXPECT_TRUE(before) << before.error().describe();
      if (before) {
        EXPECT_TRUE(before->commit());
      }
    }
    EXPECT_EQ(proxy_->cut(true), 1);
    test::waitUntil([&] { return proxy_->counters().open == 0; }, std::chrono::seconds(5),
                    std::chrono::milliseconds(10));
    EXPECT_EQ(proxy_->counters().open, 0) << "the cut connection is gone";
    return std::move(*conn);
  }

  test::PgCluster* cluster_ = nullptr;
  std::string db_;
  std::unique_ptr<test::FaultProxy> proxy_;
};

class PgConnectionCut : public PgCut, public ::testing::WithParamInterface<TransactionKind> {};
class PgConnectionCutLease : public PgCut {};

TEST_P(PgConnectionCut, TheFirstTransactionAfterTheConnectionWasCutWhileIdleGoesThrough) {
  auto conn = connectedThenCut(GetParam());
  ASSERT_NE(conn, nullptr);
  auto after = Transaction::begin(*conn, GetParam());
  ASSERT_TRUE(after) << after.error().describe();
  EXPECT_EQ(conn->queryInteger("SELECT 7").value_or(0), 7);
  EXPECT_TRUE(after->commit());
  EXPECT_EQ(proxy_->counters().accepted, 2) << "connected again, once";
}

TEST_F(PgConnectionCutLease, TheLeasesSessionCutWhileIdleFailsItsNextRenew) {
  auto conn = connectedThenCut(TransactionKind::kLeaseWrite);
  ASSERT_NE(conn, nullptr);
  EXPECT_FALSE(Transaction::begin(*conn, TransactionKind::kLeaseWrite))
      << "the leader's lock went with the session: the renew must fail, not go on without it";
}

INSTANTIATE_TEST_SUITE_P(Kinds, PgConnectionCut,
                         ::testing::Values(TransactionKind::kRead, TransactionKind::kWrite,
                                           TransactionKind::kWriteUnsynced),
                         [](const ::testing::TestParamInfo<TransactionKind>& info) {
                           switch (info.param) {
                             case TransactionKind::kRead:
                               return std::string("Read");
                             case TransactionKind::kWrite:
                               return std::string("Write");
                             case TransactionKind::kWriteUnsynced:
                               return std::string("WriteUnsynced");
                             case TransactionKind::kLeaseWrite:
                               return std::string("LeaseWrite");
                           }
                           return std::string();
                         });

}  // namespace
}  // namespace tuneplane::store
