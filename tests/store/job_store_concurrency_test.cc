// Reads while the writer commits, on every backend: readers in several threads always see
// a whole commit (one snapshot per read), never a half-applied one, and every read succeeds.
// Bounded: the writer makes a fixed number of commits; readers stop when it is done.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "store/sqlite_job_store.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

constexpr int kJobs = 8;
constexpr int kCommits = 60;
constexpr int kReaders = 3;

class JobStoreConcurrencyTest : public StoreTest {};
INSTANTIATE_TEST_SUITE_P(Db, JobStoreConcurrencyTest, kAllBackends, backendName);

TEST_P(JobStoreConcurrencyTest, ReadersSeeWholeCommitsWhileOneThreadWrites) {
  JobStore* store = store_.get();
  std::vector<JobRecord> jobs;
  for (int i = 0; i < kJobs; ++i) {
    jobs.push_back(sampleJob("conc-" + std::to_string(10000000 + i)));
    ASSERT_TRUE(store->createJob(jobs.back(), created(jobs.back())));
  }

  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::atomic<int> failures{0};
  // Each commit writes the same step number into the job, its attempt, every component and a
  // new event: a reader that sees two different numbers saw half a commit.
  std::thread writer([&] {
    std::vector<int64_t> versions(kJobs, 0);  // the writer's own: it alone commits
    for (int step = 1; step <= kCommits; ++step) {
      JobRecord job = jobs[step % kJobs];
      job.version = versions[step % kJobs]++;
      job.reason = std::to_string(step);
      job.phase = JobPhase::kRunning;
      AttemptRecord attempt = sampleAttempt(job.id, 1, 1 + step % 3);
      attempt.reason = job.reason;
      for (auto& c : attempt.components) c.reason = job.reason;
      if (!store->commit(Change{job, {attempt}, {event(job.id, 1, "x", job.reason)}})) {
        ++failures;
      }
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      for (int i = 0; !done.load() || i < 5; ++i) {
        const JobRecord& job = jobs[(i + r) % kJobs];
        auto view = store->getJob(job.id);
        auto events = store->events(job.id);
        auto active = store->activeJobs();
        auto page = store->listJobs(JobQuery{});
        if (!view || !view->has_value() || !events || !active || !page) {
          ++failures;
          continue;
        }
        const JobView& v = **view;
        if (!v.attempts.empty()) {
          if (v.attempts[0].reason != v.job.reason) ++failures;
          for (const auto& c : v.attempts[0].components) {
            if (c.reason != v.job.reason) ++failures;
          }
        }
        for (std::size_t e = 1; e < events->size(); ++e) {
          if ((*events)[e - 1].seq >= (*events)[e].seq) ++failures;
        }
        if (active->size() != static_cast<std::size_t>(kJobs)) ++failures;
        if (page->jobs.size() != static_cast<std::size_t>(kJobs)) ++failures;
        ++reads;
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(reads.load(), kReaders * 5);
  std::vector<std::size_t> want(kJobs, 1);  // the creation event
  for (int step = 1; step <= kCommits; ++step) ++want[step % kJobs];
  for (int i = 0; i < kJobs; ++i) {
    EXPECT_EQ(store->events(jobs[i].id)->size(), want[i]) << jobs[i].id;
    EXPECT_EQ(store->getJob(jobs[i].id).value()->job.phase, JobPhase::kRunning);
  }
}

}  // namespace
}  // namespace tuneplane::store
