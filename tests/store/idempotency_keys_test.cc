// The idempotency_keys table on every backend (idempotency_keys.h): a key is bound with its
// job in one transaction, found per owner within the retention, refused a second time while
// it lives, and pruned by the next keyed submit once it expired.
#include "store/idempotency_keys.h"

#include <gtest/gtest.h>

#include <string>

#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

constexpr int64_t kDay = 24LL * 3600 * 1000;

IdempotencyRecord keyFor(const JobRecord& job, const std::string& key,
                         const std::string& sha = std::string(64, 'a')) {
  return {job.owner, key, sha, job.id, job.created_ms};
}

class IdempotencyKeysTest : public StoreTest {
 protected:
  Status createKeyed(const JobRecord& job, const std::string& key,
                     const std::string& sha = std::string(64, 'a')) {
    return store_->createKeyedJob(job, created(job), keyFor(job, key, sha), job.created_ms - kDay);
  }
  std::optional<IdempotencyRecord> find(const std::string& owner, const std::string& key,
                                        int64_t not_before_ms = kT0 - kDay) {
    auto found = store_->findIdempotencyKey(owner, key, not_before_ms);
    EXPECT_TRUE(found) << found.error().describe();
    return found ? *found : std::nullopt;
  }
};
INSTANTIATE_TEST_SUITE_P(Db, IdempotencyKeysTest, kAllBackends, backendName);

TEST_P(IdempotencyKeysTest, AKeyIsStoredWithItsJobAndFoundByItsOwner) {
  const JobRecord job = sampleJob("keyed-00000001");
  ASSERT_TRUE(createKeyed(job, "k-1", std::string(64, 'b')));
  EXPECT_EQ(viewOf(job.id).job.id, job.id);
  const auto found = find("alice", "k-1");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, keyFor(job, "k-1", std::string(64, 'b')));
  EXPECT_FALSE(find("bob", "k-1")) << "keys are per owner";
  EXPECT_FALSE(find("alice", "k-2"));
}

TEST_P(IdempotencyKeysTest, ABoundKeyRefusesASecondJobAndWritesNothing) {
  const JobRecord first = sampleJob("keyed-00000001");
  ASSERT_TRUE(createKeyed(first, "k-1"));
  const JobRecord second = sampleJob("keyed-00000002", kT0 + 1000);
  auto done = createKeyed(second, "k-1");
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, codes::kKeyExists);
  EXPECT_NE(done.error().message.find(first.id), std::string::npos) << done.error().message;
  auto view = store_->getJob(second.id);
  ASSERT_TRUE(view);
  EXPECT_FALSE(view->has_value()) << "the refused key's job must not be written";
  EXPECT_EQ(find("alice", "k-1")->job_id, first.id);
}

TEST_P(IdempotencyKeysTest, AnotherOwnersEqualKeyBindsItsOwnJob) {
  const JobRecord alices = sampleJob("keyed-00000001");
  ASSERT_TRUE(createKeyed(alices, "shared-key"));
  JobRecord bobs = sampleJob("keyed-00000002");
  bobs.owner = "bob";
  ASSERT_TRUE(createKeyed(bobs, "shared-key"));
  EXPECT_EQ(find("alice", "shared-key")->job_id, alices.id);
  EXPECT_EQ(find("bob", "shared-key")->job_id, bobs.id);
}

TEST_P(IdempotencyKeysTest, AnExpiredKeyIsNotFoundAndTheNextKeyedSubmitPrunesIt) {
  const JobRecord old = sampleJob("keyed-00000001");
  ASSERT_TRUE(createKeyed(old, "k-1"));
  ASSERT_TRUE(createKeyed(sampleJob("keyed-00000003"), "k-3"));
  // A day later the key has expired for the reads, pruned or not.
  EXPECT_FALSE(find("alice", "k-1", kT0 + 1));
  // A keyed submit a day later may take the key again; the expired rows go.
  const JobRecord later = sampleJob("keyed-00000002", kT0 + kDay + 1);
  ASSERT_TRUE(createKeyed(later, "k-1"));
  EXPECT_EQ(find("alice", "k-1", kT0 + 1)->job_id, later.id);
  EXPECT_FALSE(find("alice", "k-3", 0)) << "an expired key of another request was pruned";
  EXPECT_EQ(viewOf(old.id).job.id, old.id) << "pruning a key keeps its job";
}

TEST_P(IdempotencyKeysTest, AKeyForAnotherJobOrWithoutOwnerIsInvalid) {
  const JobRecord job = sampleJob("keyed-00000001");
  IdempotencyRecord other = keyFor(job, "k-1");
  other.job_id = "other-00000001";
  auto done = store_->createKeyedJob(job, created(job), other, 0);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, codes::kInvalid);
  IdempotencyRecord ownerless = keyFor(job, "k-1");
  ownerless.owner.clear();
  done = store_->createKeyedJob(job, created(job), ownerless, 0);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, codes::kInvalid);
  EXPECT_FALSE(store_->getJob(job.id)->has_value());
}

TEST_P(IdempotencyKeysTest, AKeyedJobWithAnIdInUseIsRefusedAndBindsNothing) {
  const JobRecord job = sampleJob("keyed-00000001");
  create(job);
  auto done = createKeyed(job, "k-1");
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, codes::kJobExists);
  EXPECT_FALSE(find("alice", "k-1"));
}

}  // namespace
}  // namespace tuneplane::store
