// POST /v1/jobs with an Idempotency-Key (control/job_service.h), against the real job service
// and SQLite in memory: the same key and body give the first job back (200, replayed), the
// same key with another body is 409, keys are per user, a malformed key is 400, a refused
// spec binds nothing, the key expires after the retention, and requests racing with one key
// create one job.
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "api_fixture.h"
#include "common/idempotency_key.h"
#include "control/error_codes.h"

namespace tuneplane::api::testing {
namespace {

class IdempotentSubmitTest : public ApiFixture {
 protected:
  httplib::Result postKeyed(const std::string& key, const std::string& spec,
                            const std::string& token = kAliceToken) {
    httplib::Headers headers = bearer(token);
    headers.emplace(kIdempotencyKeyHeader, key);
    return http_->Post("/v1/jobs", headers, spec, "application/yaml");
  }
  size_t jobCount() {
    auto page = store_->listJobs({});
    EXPECT_TRUE(page);
    return page ? page->jobs.size() : 0;
  }
  const std::string spec_ = cpuSpec("echo hi", "", "hello");
};

TEST_F(IdempotentSubmitTest, TheSameKeyAndBodyGiveTheFirstJobBackReplayed) {
  auto first = postKeyed("key-0001", spec_);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 201) << first->body;
  EXPECT_FALSE(first->has_header(kIdempotentReplayedHeader));
  const std::string id = body(first)["id"];

  auto again = postKeyed("key-0001", spec_);
  ASSERT_TRUE(again);
  ASSERT_EQ(again->status, 200) << again->body;
  EXPECT_EQ(again->get_header_value(kIdempotentReplayedHeader), "true");
  EXPECT_EQ(again->get_header_value("Location"), "/v1/jobs/" + id);
  EXPECT_EQ(body(again)["id"], id);
  EXPECT_EQ(body(again)["phase"], "Pending");
  EXPECT_EQ(jobCount(), 1u);
  EXPECT_EQ(wakes_.load(), 1) << "a replay creates nothing for the loop to do";
}

TEST_F(IdempotentSubmitTest, TheSameKeyWithAnotherBodyIs409NamingTheRule) {
  auto first = postKeyed("key-0001", spec_);
  ASSERT_TRUE(first && first->status == 201);
  auto other = postKeyed("key-0001", cpuSpec("echo other", "", "hello"));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 409) << other->body;
  EXPECT_EQ(code(other), control::codes::kIdempotencyKeyReused);
  const json error = body(other)["errors"][0];
  EXPECT_EQ(error["field"], kIdempotencyKeyHeader);
  EXPECT_NE(error["message"].get<std::string>().find(body(first)["id"].get<std::string>()),
            std::string::npos)
      << error.dump();
  EXPECT_EQ(jobCount(), 1u);
}

TEST_F(IdempotentSubmitTest, KeysArePerUserBobsEqualKeyMakesBobsOwnJob) {
  auto alices = postKeyed("shared-key", spec_);
  ASSERT_TRUE(alices && alices->status == 201);
  auto bobs = postKeyed("shared-key", spec_, kBobToken);
  ASSERT_TRUE(bobs);
  ASSERT_EQ(bobs->status, 201) << bobs->body;
  EXPECT_NE(body(bobs)["id"], body(alices)["id"]);
  EXPECT_EQ(body(bobs)["owner"], "bob");
  // And bob's retry finds bob's job, not alice's.
  auto again = postKeyed("shared-key", spec_, kBobToken);
  ASSERT_TRUE(again && again->status == 200);
  EXPECT_EQ(body(again)["id"], body(bobs)["id"]);
  EXPECT_EQ(jobCount(), 2u);
}

TEST_F(IdempotentSubmitTest, AMalformedKeyIs400NamingTheHeaderAndStoresNothing) {
  for (const std::string& bad :
       {std::string(kMaxIdempotencyKeyBytes + 1, 'k'), std::string("has space"), std::string("a/b"),
        std::string("ünï")}) {
    SCOPED_TRACE(bad);
    auto res = postKeyed(bad, spec_);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << res->body;
    EXPECT_EQ(code(res), "api.invalid_idempotency_key");
    EXPECT_EQ(body(res)["errors"][0]["field"], kIdempotencyKeyHeader);
  }
  // The longest key allowed is accepted.
  auto longest = postKeyed(std::string(kMaxIdempotencyKeyBytes, 'k'), spec_);
  ASSERT_TRUE(longest);
  EXPECT_EQ(longest->status, 201) << longest->body;
  EXPECT_EQ(jobCount(), 1u);
}

TEST_F(IdempotentSubmitTest, ARefusedSpecBindsNothingSoTheCorrectedOneMayUseTheKey) {
  std::string bad = spec_;
  bad.replace(bad.find("nodes: 1"), 8, "nodes: 2");  // a multi-node CPU job
  auto refused = postKeyed("key-0001", bad);
  ASSERT_TRUE(refused);
  ASSERT_EQ(refused->status, 422) << refused->body;
  auto corrected = postKeyed("key-0001", spec_);
  ASSERT_TRUE(corrected);
  EXPECT_EQ(corrected->status, 201) << corrected->body;
  EXPECT_EQ(jobCount(), 1u);
}

TEST_F(IdempotentSubmitTest, AKeyOlderThanTheRetentionStandsForNothing) {
  auto first = postKeyed("key-0001", spec_);
  ASSERT_TRUE(first && first->status == 201);
  clock_.advance(control::JobService::kIdempotencyRetention - std::chrono::milliseconds(1));
  auto inside = postKeyed("key-0001", spec_);
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside->status, 200) << "still within the retention";
  clock_.advance(std::chrono::milliseconds(2));
  auto after = postKeyed("key-0001", spec_);
  ASSERT_TRUE(after);
  ASSERT_EQ(after->status, 201) << after->body;
  EXPECT_NE(body(after)["id"], body(first)["id"]);
}

TEST_F(IdempotentSubmitTest, ConcurrentRequestsWithOneKeyCreateOneJob) {
  constexpr int kRequests = 8;
  std::vector<std::thread> threads;
  std::vector<int> statuses(kRequests, 0);
  std::vector<std::string> ids(kRequests);
  std::atomic<int> ready{0};
  for (int i = 0; i < kRequests; ++i) {
    threads.emplace_back([&, i] {
      auto client = checkedClient(server_->port());
      httplib::Headers headers = bearer(kAliceToken);
      headers.emplace(kIdempotencyKeyHeader, "raced-key");
      // Every thread connected before any sends: the requests meet in the server.
      ++ready;
      while (ready.load() < kRequests) std::this_thread::yield();
      auto res = client->Post("/v1/jobs", headers, spec_, "application/yaml");
      if (!res) return;
      statuses[i] = res->status;
      ids[i] = body(res).value("id", "");
    });
  }
  for (auto& t : threads) t.join();
  int created = 0;
  std::set<std::string> distinct;
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_TRUE(statuses[i] == 201 || statuses[i] == 200) << i << ": " << statuses[i];
    created += statuses[i] == 201 ? 1 : 0;
    distinct.insert(ids[i]);
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(distinct.size(), 1u);
  EXPECT_EQ(jobCount(), 1u);
}

TEST_F(IdempotentSubmitTest, WithoutAKeyEverySubmitIsANewJob) {
  ASSERT_EQ(post("/v1/jobs", spec_)->status, 201);
  ASSERT_EQ(post("/v1/jobs", spec_)->status, 201);
  EXPECT_EQ(jobCount(), 2u);
}

}  // namespace
}  // namespace tuneplane::api::testing
