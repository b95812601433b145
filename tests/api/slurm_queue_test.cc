// Why a job waits and until when: the queue snapshot's ranking from a table of listings
// (priority, submit time, id; partitions; multi-partition jobs; held jobs), the refresh
// rules of SlurmQueue with a fake clock and a counting fake listing (one listing per
// refresh whatever the number of callers; a failure kept; a job newer than the snapshot),
// and jobWaiting/summaryWaiting from the snapshot or, without it, from the store.
#include "api/slurm_queue.h"

#include <gtest/gtest.h>

#include "api/job_waiting.h"

namespace tuneplane::api {
namespace {

slurm::JobRecord pending(uint64_t id, const std::string& partition, int64_t priority,
                         int64_t submit, int64_t start = 0,
                         const std::string& reason = "Priority") {
  slurm::JobRecord r;
  r.job_id = id;
  r.sluid = "sJOB" + std::to_string(id);
  r.partition = partition;
  r.job_state = {"PENDING"};
  r.priority = {true, false, priority};
  r.submit_time = {true, false, submit};
  r.start_time = {true, false, start};
  r.state_reason = reason;
  return r;
}

TEST(QueueSnapshotTest, PlacesFollowPriorityThenSubmitThenIdPerPartition) {
  slurm::JobRecord running = pending(1, "gpu", 100, 1);
  running.job_state = {"RUNNING"};
  const std::vector<slurm::JobRecord> jobs = {
      running,
      pending(10, "gpu", 50, 100, 5000, "Resources"),
      pending(11, "gpu", 90, 200),
      pending(12, "gpu", 50, 100),  // same priority and submit as 10: the lower id first
      pending(13, "gpu,cpu", 10, 50),
      pending(20, "cpu", 1, 10),
      pending(21, "gpu", 0, 5, 0, "JobHeldUser"),
  };
  const QueueSnapshot s = queueSnapshot(jobs, 7'000);
  EXPECT_EQ(s.as_of_ms, 7'000);
  const auto at = [&](uint64_t id) { return s.find("", id); };
  ASSERT_NE(at(10), nullptr);
  EXPECT_EQ(at(11)->position, 1);
  EXPECT_EQ(at(10)->position, 2);
  EXPECT_EQ(at(12)->position, 3);
  EXPECT_EQ(at(13)->position, 4);
  EXPECT_EQ(at(21)->position, 5);  // held: priority 0, last
  for (uint64_t id : {10, 11, 12, 13, 21}) EXPECT_EQ(at(id)->pending_in_partition, 5) << id;
  EXPECT_EQ(at(13)->partition, "gpu");  // placed in the first partition it names
  // … and counted in the other: cpu has 20 and 13, 13 first by priority.
  EXPECT_EQ(at(20)->position, 2);
  EXPECT_EQ(at(20)->pending_in_partition, 2);
  EXPECT_EQ(at(10)->estimated_start, 5000);
  EXPECT_EQ(at(10)->reason, "Resources");
  EXPECT_EQ(at(1), nullptr);               // running: not in the queue
  EXPECT_EQ(s.find("sjob12", 0), at(12));  // by SLUID, any case
}

class SlurmQueueTest : public ::testing::Test {
 protected:
  SlurmQueue queue_{[this]() -> slurm::SlurmResult<slurm::JobListing> {
                      ++calls_;
                      if (fail_) return tl::unexpected(slurm::SlurmError{});
                      slurm::JobListing listing;
                      listing.jobs = jobs_;
                      return listing;
                    },
                    clock_,
                    {.refresh = std::chrono::seconds(30),
                     .min_refresh = std::chrono::seconds(2),
                     .wait = std::chrono::milliseconds(10)}};
  FakeClock clock_;
  std::vector<slurm::JobRecord> jobs_ = {pending(10, "gpu", 1, 1)};
  bool fail_ = false;
  int calls_ = 0;
};

TEST_F(SlurmQueueTest, OneListingPerRefreshWhateverTheCallers) {
  for (int i = 0; i < 50; ++i) ASSERT_NE(queue_.current(), nullptr);
  EXPECT_EQ(calls_, 1);
  clock_.advance(std::chrono::seconds(29));
  queue_.current();
  EXPECT_EQ(calls_, 1);
  clock_.advance(std::chrono::seconds(1));
  queue_.current();
  EXPECT_EQ(calls_, 2);
  EXPECT_EQ(queue_.fetches(), 2);
}

TEST_F(SlurmQueueTest, AFailedListingKeepsTheLastSnapshotAndIsNotRetriedAtOnce) {
  auto first = queue_.current();
  ASSERT_NE(first, nullptr);
  fail_ = true;
  clock_.advance(std::chrono::seconds(30));
  EXPECT_EQ(queue_.current(), first);  // the last one, whose as_of says how old
  EXPECT_EQ(queue_.current(), first);
  EXPECT_EQ(calls_, 2);  // not asked again before the next refresh
}

TEST_F(SlurmQueueTest, AJobNewerThanTheSnapshotGetsAFreshListingSoon) {
  auto first = queue_.current();
  ASSERT_NE(first, nullptr);
  const int64_t submitted = clock_.nowMs() + 500;
  clock_.advance(std::chrono::seconds(1));
  jobs_.push_back(pending(11, "gpu", 1, 2));
  queue_.current(submitted);
  EXPECT_EQ(calls_, 1);  // within min_refresh
  clock_.advance(std::chrono::seconds(1));
  auto fresh = queue_.current(submitted);
  EXPECT_EQ(calls_, 2);
  ASSERT_NE(fresh->find("", 11), nullptr);
  queue_.current(submitted);  // now newer than the job: no more listings
  EXPECT_EQ(calls_, 2);
}

TEST_F(SlurmQueueTest, NoListingYetIsNull) {
  fail_ = true;
  EXPECT_EQ(queue_.current(), nullptr);
}

store::JobView queuedJob() {
  store::JobView view;
  view.job.id = "train-0f0f0f0f";
  store::AttemptRecord a;
  a.number = 2;
  a.phase = phase::AttemptPhase::kQueued;
  a.slurm_job_id = 10;
  a.components.push_back({0, "main", 10, "sJOB10", {"PENDING"}, "Resources", {}, {}, "", 4000, 0});
  a.components.push_back({1, "aux", 11, "sJOB11", {"PENDING"}, "Priority", {}, {}, "", 0, 0});
  view.attempts.push_back(a);
  return view;
}

TEST(JobWaitingTest, FromTheQueueWhenItListsTheJobElseFromTheStore) {
  const store::JobView view = queuedJob();
  const QueueSnapshot s =
      queueSnapshot({pending(9, "gpu", 5, 1), pending(10, "gpu", 1, 2, 6000, "Resources"),
                     pending(11, "cpu", 1, 2, 0, "Priority")},
                    9'000);
  auto waiting = jobWaiting(view, &s);
  ASSERT_TRUE(waiting);
  EXPECT_EQ(waiting->attempt, 2);
  EXPECT_EQ(waiting->as_of_ms, 9'000);
  ASSERT_EQ(waiting->components.size(), 2u);
  EXPECT_EQ(waiting->components[0],
            (ComponentWaiting{"main", "Resources", "gpu", 6'000'000, 2, 2}));
  EXPECT_EQ(waiting->components[1], (ComponentWaiting{"aux", "Priority", "cpu", 0, 1, 1}));

  // No snapshot (or one without the job): the stored reason and estimate, no place, no as_of.
  auto stored = jobWaiting(view, nullptr);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->as_of_ms, 0);
  EXPECT_EQ(stored->components[0], (ComponentWaiting{"main", "Resources", std::nullopt, 4'000'000,
                                                     std::nullopt, std::nullopt}));

  // The list's summary: the leader's place by its numeric id.
  auto summary = summaryWaiting(view.attempts.back(), &s);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->components.size(), 1u);
  EXPECT_EQ(summary->components[0].position, 2);
  EXPECT_EQ(summary->components[0].pool, "");

  // Not waiting in Slurm's queue: nothing.
  store::JobView running = view;
  running.attempts.back().phase = phase::AttemptPhase::kRunning;
  EXPECT_FALSE(jobWaiting(running, &s));
  EXPECT_FALSE(summaryWaiting(running.attempts.back(), &s));
  EXPECT_FALSE(jobWaiting(store::JobView{}, &s));
}

}  // namespace
}  // namespace tuneplane::api
