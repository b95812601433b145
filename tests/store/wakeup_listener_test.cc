// LISTEN/NOTIFY across replicas (wakeup_listener.h), with two PostgresJobStores as two
// replicas: an API request committed on one wakes the other's listener; a request that fails
// (and rolls back) sends nothing. Waits are bounded polls.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "store/postgres_job_store.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;
using namespace std::chrono_literals;

TEST(WakeupListenerTest, ARequestCommittedOnOneReplicaWakesTheOther) {
  BackendDatabase db;
  db.setUp(Backend::kPostgres);
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  auto leader = PostgresJobStore::open(db.location());
  auto standby = PostgresJobStore::open(db.location());
  ASSERT_TRUE(leader && standby);
  std::atomic<int> wakes{0};
  ASSERT_TRUE((*leader)->listenForWakeups([&] { ++wakes; }));

  const JobRecord job = sampleJob("wake-00000001");
  ASSERT_TRUE((*standby)->createJob(job, created(job)));
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return wakes.load() >= 1; }, 30s))
      << "no wake-up for a create";
  const int after_create = wakes.load();
  ASSERT_TRUE((*standby)->requestCancel(job.id, "bob", kT0));
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return wakes.load() > after_create; }, 30s))
      << "no wake-up for a cancel";

  // A refused request rolls back, its NOTIFY with it; a later one still arrives, alone.
  const int before = wakes.load();
  EXPECT_FALSE((*standby)->createJob(job, created(job)));  // store.job_exists
  const JobRecord other = sampleJob("wake-00000002");
  ASSERT_TRUE((*standby)->createJob(other, created(other)));
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return wakes.load() > before; }, 30s));
  // The rolled-back NOTIFY would come within two of the listener's polls: none does.
  EXPECT_TRUE(tuneplane::test::holdsThroughout([&] { return wakes.load() == before + 1; },
                                               std::chrono::milliseconds(2 * kListenPollMs)));
  EXPECT_EQ(wakes.load(), before + 1);
}

}  // namespace
}  // namespace tuneplane::store
