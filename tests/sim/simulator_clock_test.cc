// The simulator on a driven clock (SimulatorOptions::clock): what Slurm schedules in time — an
// epilog, a time limit, a requeue's BeginTime, MinJobAge, an added latency, a window of lying
// reads — happens when the test advances the clock, and not before, however long the test
// waits in real time. The batch scripts themselves still run as real processes.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <future>

#include "common/clock.h"
#include "sim_test_support.h"

namespace tuneplane::sim::testing {
namespace {

using namespace std::chrono_literals;

// Long enough for the simulator's ticker (every 10 ms) to act many times, if it were going to:
// the evidence that it waits for the clock, not for real time.
constexpr auto kManyTicks = 300ms;

class DrivenClockSimTest : public SimFixture {
 protected:
  const Clock* simulatorClock() override { return &clock_; }
  // waitFor and waitState let a tenth of a second pass between polls: for a wait whose end
  // is not known on the clock (a killed script's exit starts its epilog).
  void letTimePass() override { clock_.advance(100ms); }
  void tune(SimulatorOptions& o) override {
    o.epilog = 2s;
    o.requeue_delay = 120s;
    o.min_job_age = 300s;
  }
  // True when `probe` holds throughout kManyTicks of real time (the ticker runs and polls the
  // scripts) while the driven clock stands: what waits for the clock has not happened.
  static bool holdsWhileTheClockStands(const std::function<bool()>& probe) {
    return tuneplane::test::holdsThroughout(probe, kManyTicks);
  }

  FakeClock clock_;
};

// An hour's epilog: on real time the waits below could never see it end.
class DrivenClockLongEpilogTest : public DrivenClockSimTest {
 protected:
  void tune(SimulatorOptions& o) override { o.epilog = 1h; }
};

TEST_F(DrivenClockLongEpilogTest, TheEpilogEndsWhenTheClockPassesItNotBefore) {
  const std::string id = std::to_string(submit(jobBody("true")));
  ASSERT_TRUE(tuneplane::test::waitUntil([&] {
    return state(id) == json::array({"COMPLETED", "COMPLETING"});
  }));
  EXPECT_TRUE(holdsWhileTheClockStands([&] {
    return state(id) == json::array({"COMPLETED", "COMPLETING"});
  })) << "the epilog ended on its own";
  clock_.advance(59min + 59s);
  EXPECT_TRUE(holdsWhileTheClockStands([&] {
    return state(id) == json::array({"COMPLETED", "COMPLETING"});
  })) << "the epilog ended early";
  clock_.advance(1s);
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return state(id) == json::array({"COMPLETED"}); }));
}

TEST_F(DrivenClockSimTest, ATimeLimitIsReachedOnTheClock) {
  const std::string id =
      std::to_string(submit(jobBody("sleep 30", {{"time_limit", {{"set", true}, {"number", 5}}}})));
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return state(id) == json::array({"RUNNING"}); }));
  clock_.advance(4min);
  EXPECT_TRUE(holdsWhileTheClockStands([&] { return state(id) == json::array({"RUNNING"}); }))
      << state(id);
  clock_.advance(1min);  // a Slurm minute on a driven clock is a true minute
  ASSERT_TRUE(tuneplane::test::waitUntil([&] {
    return state(id) == json::array({"TIMEOUT", "COMPLETING"});
  }));
  EXPECT_EQ(job(id)[0]["state_reason"], "TimeLimit");
}

TEST_F(DrivenClockSimTest, ARequeuedJobWaitsOutItsBeginTimeOnTheClock) {
  const std::string id = std::to_string(submit(jobBody("sleep 30")));
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return state(id) == json::array({"RUNNING"}); }));
  ASSERT_TRUE(sim_->requeueJob(id, false));
  // The script is killed (in real time), then its epilog passes on the clock; the 120 s of
  // BeginTime count from the epilog's end.
  ASSERT_TRUE(waitFor([&] {
    const json j = job(id);
    return j.is_array() && !j.empty() && j[0]["job_state"] == json::array({"PENDING"}) &&
           j[0]["state_reason"] == "BeginTime";
  }));
  clock_.advance(119s);
  EXPECT_TRUE(holdsWhileTheClockStands([&] { return state(id) == json::array({"PENDING"}); }))
      << state(id);
  clock_.advance(1s);
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return state(id) == json::array({"RUNNING"}); }));
}

TEST_F(DrivenClockSimTest, AFinishedJobIsForgottenAfterMinJobAgeOnTheClock) {
  const std::string id = std::to_string(submit(jobBody("true")));
  ASSERT_TRUE(tuneplane::test::waitUntil([&] {
    return state(id) == json::array({"COMPLETED", "COMPLETING"});
  }));
  clock_.advance(2s);
  ASSERT_TRUE(waitState(id, {"COMPLETED"}));
  clock_.advance(299s);
  EXPECT_TRUE(holdsWhileTheClockStands([&] { return sim_->jobCount() == 1u; }))
      << sim_->jobCount() << " jobs";
  clock_.advance(1s);
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return sim_->jobCount() == 0; }));
}

TEST_F(DrivenClockSimTest, AddedLatencyHoldsTheAnswerUntilTheClockPassesIt) {
  sim_->setLatency(40s);
  std::atomic<bool> answered{false};
  auto ping = std::async(std::launch::async, [&] {
    auto res = get("/ping/");
    answered = true;
    return res ? res->status : -1;
  });
  EXPECT_TRUE(holdsWhileTheClockStands([&] { return !answered.load(); }))
      << "the latency passed in real time";
  clock_.advance(40s);
  ASSERT_EQ(ping.wait_for(20s), std::future_status::ready);
  EXPECT_EQ(ping.get(), 200);
}

TEST_F(DrivenClockSimTest, ReadsLieForTheirWindowOnTheClock) {
  sim_->lieAboutReads(40s);
  auto lying = get("/jobs/");
  ASSERT_TRUE(lying);
  EXPECT_EQ(lying->status, 502);
  EXPECT_TRUE(holdsWhileTheClockStands([&] {
    auto again = get("/jobs/");
    return again && again->status == 502;
  })) << "the lies ended in real time";
  clock_.advance(39s);
  EXPECT_EQ(get("/jobs/")->status, 502);
  clock_.advance(1s);
  EXPECT_EQ(get("/jobs/")->status, 200);
}

TEST_F(DrivenClockSimTest, RecordsShowTheClocksWallTime) {
  const int64_t wall = clock_.nowMs() / 1000;  // FakeClock's start: November 2023
  const std::string id = std::to_string(submit(jobBody("true")));
  const json record = job(id)[0];
  EXPECT_EQ(record["submit_time"]["number"], wall);
  ASSERT_TRUE(waitState(id, {"COMPLETED"}));
  const int64_t after = clock_.nowMs() / 1000;
  EXPECT_GE(job(id)[0]["end_time"]["number"].get<int64_t>(), wall);
  EXPECT_LE(job(id)[0]["end_time"]["number"].get<int64_t>(), after);
}

}  // namespace
}  // namespace tuneplane::sim::testing
