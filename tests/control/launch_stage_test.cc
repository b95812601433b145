// The launch stage (control/launch_stage.h) on its own: never more tasks in flight than its
// window, every task run once on a connection of its own slot, and backing off as a whole —
// a 429, a 503 or a slow answer halves the window and pauses every new start for the retry
// policy's resend delay, measured on a FakeClock (no sleeps, no wall-clock assertions).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "control/launch_stage.h"
#include "control/retry_policy.h"
#include "slurm/rest_error.h"

namespace tuneplane::control {
namespace {

using namespace std::chrono_literals;

// Bounds on a hang, not timing checks.
constexpr auto kWaitLimit = 20s;

// A thread-safe SlurmClient whose submit() is scripted per call: it may block until the test
// lets it go (a gate), fail with an HTTP status, or take a while on the FakeClock.
class ScriptedClient final : public slurm::SlurmClient {
 public:
  struct Answer {
    int http_status = 200;                   // 200: a receipt; else a SlurmError with it
    std::chrono::milliseconds took{0};       // the FakeClock advances by this during the call
    std::chrono::milliseconds wall_step{0};  // and its wall clock alone steps by this (NTP)
  };
  explicit ScriptedClient(FakeClock& clock, bool gated = false) : clock_(clock), gated_(gated) {}

  void script(std::vector<Answer> answers) {
    std::lock_guard<std::mutex> lock(mu_);
    answers_ = std::move(answers);
  }
  // Waits (bounded) until exactly `n` submits are inside the gate.
  bool waitInside(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWaitLimit, [&] { return inside_ == n; });
  }
  void releaseOne() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++tickets_;
    }
    cv_.notify_all();
  }
  int inside() const {
    std::lock_guard<std::mutex> lock(mu_);
    return inside_;
  }
  int mostInside() const {
    std::lock_guard<std::mutex> lock(mu_);
    return most_inside_;
  }
  int submits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return submits_;
  }

  slurm::SlurmResult<slurm::SubmitReceipt> submit(const nlohmann::json&) override {
    Answer answer;
    {
      std::unique_lock<std::mutex> lock(mu_);
      const size_t n = static_cast<size_t>(submits_++);
      if (n < answers_.size()) answer = answers_[n];
      ++inside_;
      most_inside_ = std::max(most_inside_, inside_);
      cv_.notify_all();
      if (gated_) {
        EXPECT_TRUE(cv_.wait_for(lock, kWaitLimit, [&] { return tickets_ > 0; }))
            << "a submit was never let go";
        --tickets_;
      }
      --inside_;
    }
    cv_.notify_all();
    clock_.advance(answer.took);
    clock_.stepWall(answer.wall_step);
    if (answer.http_status != 200) {
      slurm::SlurmError e = slurm::makeSlurmError(slurm::kErrServerError, "submit", "scripted",
                                                  slurm::TransportClass::kRejected);
      e.http_status = answer.http_status;
      return slurm::slurmFail(e);
    }
    return slurm::SubmitReceipt{};
  }
  slurm::SlurmResult<slurm::PingResult> ping() override { return slurm::PingResult{}; }
  slurm::SlurmResult<std::vector<slurm::JobRecord>> getJob(const std::string&) override {
    return std::vector<slurm::JobRecord>{};
  }
  slurm::SlurmResult<slurm::JobListing> listJobs(std::optional<int64_t>) override {
    return slurm::JobListing{};
  }
  slurm::SlurmResult<slurm::JobStateList> listJobStates(const std::vector<uint64_t>&) override {
    return slurm::JobStateList{};
  }
  slurm::SlurmStatus cancel(const std::string&, const std::optional<std::string>&) override {
    return {};
  }
  slurm::SlurmResult<std::vector<slurm::PartitionInfo>> listPartitions() override {
    return std::vector<slurm::PartitionInfo>{};
  }
  slurm::SlurmResult<std::vector<slurm::NodeInfo>> listNodes() override {
    return std::vector<slurm::NodeInfo>{};
  }

 private:
  FakeClock& clock_;
  const bool gated_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Answer> answers_;
  int submits_ = 0;
  int inside_ = 0;
  int most_inside_ = 0;
  int tickets_ = 0;
};

// `count` tasks that each submit once and record which task ran.
std::vector<LaunchStage::Task> submitTasks(int count, std::vector<std::atomic<int>>& ran) {
  std::vector<LaunchStage::Task> tasks;
  for (int i = 0; i < count; ++i) {
    tasks.push_back([&ran, i](slurm::SlurmClient& slurm) {
      ++ran[static_cast<size_t>(i)];
      (void)slurm.submit(nlohmann::json::object());
    });
  }
  return tasks;
}

TEST(LaunchStage, NeverMoreInFlightThanItsConnectionsAndEveryTaskRunsOnce) {
  FakeClock clock;
  ScriptedClient gate(clock, /*gated=*/true);
  constexpr int kSlots = 4;
  constexpr int kTasks = 11;
  LaunchStage stage(std::vector<slurm::SlurmClient*>(kSlots, &gate), clock);
  std::vector<std::atomic<int>> ran(kTasks);
  auto tasks = submitTasks(kTasks, ran);
  size_t started = 0;
  std::thread runner([&] { started = stage.run(tasks); });
  // Let them through one at a time: each time the stage has filled every slot it may (all
  // of them, or what is left), and never more.
  for (int done = 0; done < kTasks; ++done) {
    const int expect = std::min(kSlots, kTasks - done);
    ASSERT_TRUE(gate.waitInside(expect))
        << "after " << done << " done, " << gate.inside() << " in flight, expected " << expect;
    gate.releaseOne();
  }
  runner.join();
  EXPECT_EQ(started, static_cast<size_t>(kTasks));
  EXPECT_EQ(gate.mostInside(), kSlots);
  EXPECT_EQ(stage.maxInFlight(), kSlots);
  for (int i = 0; i < kTasks; ++i) EXPECT_EQ(ran[static_cast<size_t>(i)].load(), 1) << "task " << i;
}

TEST(LaunchStage, EachSlotUsesItsOwnConnection) {
  FakeClock clock;
  std::vector<std::unique_ptr<ScriptedClient>> clients;
  std::vector<slurm::SlurmClient*> slots;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<ScriptedClient>(clock));
    slots.push_back(clients.back().get());
  }
  LaunchStage stage(slots, clock);
  std::vector<std::atomic<int>> ran(30);
  auto tasks = submitTasks(30, ran);
  EXPECT_EQ(stage.run(tasks), 30u);
  int total = 0;
  for (const auto& c : clients) {
    EXPECT_LE(c->mostInside(), 1) << "two tasks shared one connection at once";
    total += c->submits();
  }
  EXPECT_EQ(total, 30);
}

TEST(LaunchStage, OneConnectionRunsTasksInOrderOnTheCallingThread) {
  FakeClock clock;
  ScriptedClient client(clock);
  LaunchStage stage({&client}, clock);
  std::vector<int> order;
  std::set<std::thread::id> threads;
  std::vector<LaunchStage::Task> tasks;
  for (int i = 0; i < 5; ++i) {
    tasks.push_back([&, i](slurm::SlurmClient&) {
      order.push_back(i);
      threads.insert(std::this_thread::get_id());
    });
  }
  EXPECT_EQ(stage.run(tasks), 5u);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(threads, (std::set<std::thread::id>{std::this_thread::get_id()}));
}

TEST(LaunchStage, AServiceUnavailableHalvesTheWindowAndPausesEveryNewStart) {
  FakeClock clock;
  ScriptedClient client(clock);
  LaunchStage stage(std::vector<slurm::SlurmClient*>(4, &client), clock);
  client.script({{503, 0ms}});
  std::vector<std::atomic<int>> ran(8);
  auto first = submitTasks(1, ran);
  EXPECT_EQ(stage.run(first), 1u);
  EXPECT_EQ(stage.window(), 2);
  EXPECT_EQ(stage.pausedUntilMs(), clock.steadyMs() + resendDelay(1).count());
  EXPECT_EQ(stage.overloads(), 1);

  // Paused: nothing starts, on any connection.
  auto more = submitTasks(3, ran);
  EXPECT_EQ(stage.run(more), 0u);
  EXPECT_EQ(client.submits(), 1);

  // Once the pause is over they start; each answer in time widens the window again.
  clock.advance(resendDelay(1));
  EXPECT_EQ(stage.run(more), 3u);
  EXPECT_EQ(client.submits(), 4);
  EXPECT_EQ(stage.window(), 4);
}

TEST(LaunchStage, TooManyRequestsInARowDoubleThePause) {
  FakeClock clock;
  ScriptedClient client(clock);
  LaunchStage stage(std::vector<slurm::SlurmClient*>(8, &client), clock);
  client.script({{429, 0ms}, {429, 0ms}, {200, 0ms}, {429, 0ms}});
  std::vector<std::atomic<int>> ran(4);
  auto one = [&](int i) {
    std::vector<LaunchStage::Task> t = {[&ran, i](slurm::SlurmClient& s) {
      ++ran[static_cast<size_t>(i)];
      (void)s.submit(nlohmann::json::object());
    }};
    return t;
  };
  auto t0 = one(0);
  EXPECT_EQ(stage.run(t0), 1u);
  EXPECT_EQ(stage.window(), 4);
  EXPECT_EQ(stage.pausedUntilMs() - clock.steadyMs(), resendDelay(1).count());
  clock.advance(resendDelay(1));
  auto t1 = one(1);
  EXPECT_EQ(stage.run(t1), 1u);
  EXPECT_EQ(stage.window(), 2);
  EXPECT_EQ(stage.pausedUntilMs() - clock.steadyMs(), resendDelay(2).count());
  clock.advance(resendDelay(2));
  auto t2 = one(2);
  EXPECT_EQ(stage.run(t2), 1u);  // answered: the run of overloads ends
  EXPECT_EQ(stage.window(), 3);
  auto t3 = one(3);
  EXPECT_EQ(stage.run(t3), 1u);
  EXPECT_EQ(stage.pausedUntilMs() - clock.steadyMs(), resendDelay(1).count());
  EXPECT_EQ(stage.overloads(), 3);
}

// Eight submits in flight together all answered 429 (the campaign's seed 14269232471071717463:
// one burst paused intake for 60 s, counted as eight overloads in a row): one burst, one
// backoff. A submit sent after the pause began and refused again doubles it, as before.
TEST(LaunchStage, OverloadsOfSubmitsInFlightTogetherAreOneBurst) {
  FakeClock clock;
  ScriptedClient gate(clock, /*gated=*/true);
  constexpr int kSlots = 8;
  LaunchStage stage(std::vector<slurm::SlurmClient*>(kSlots, &gate), clock);
  gate.script(std::vector<ScriptedClient::Answer>(kSlots + 1, {429, 0ms}));
  std::vector<std::atomic<int>> ran(kSlots + 1);
  auto tasks = submitTasks(kSlots, ran);
  size_t started = 0;
  std::thread runner([&] { started = stage.run(tasks); });
  ASSERT_TRUE(gate.waitInside(kSlots));
  for (int i = 0; i < kSlots; ++i) gate.releaseOne();
  runner.join();
  EXPECT_EQ(started, static_cast<size_t>(kSlots));
  EXPECT_EQ(stage.overloads(), kSlots);  // each is still counted (the metric)
  EXPECT_EQ(stage.window(), kSlots / 2);
  EXPECT_EQ(stage.pausedUntilMs() - clock.steadyMs(), resendDelay(1).count());

  clock.advance(resendDelay(1) + 1ms);
  std::vector<LaunchStage::Task> again = {[&ran](slurm::SlurmClient& s) {
    ++ran[kSlots];
    (void)s.submit(nlohmann::json::object());
  }};
  gate.releaseOne();  // its ticket, ahead
  EXPECT_EQ(stage.run(again), 1u);
  EXPECT_EQ(stage.window(), kSlots / 4);
  EXPECT_EQ(stage.pausedUntilMs() - clock.steadyMs(), resendDelay(2).count());
}

TEST(LaunchStage, ASlowAnswerCountsAsAnOverload) {
  FakeClock clock;
  ScriptedClient client(clock);
  LaunchStageOptions options;
  options.slow_submit = 5s;
  LaunchStage stage(std::vector<slurm::SlurmClient*>(4, &client), clock, options);
  client.script({{200, 4999ms}, {200, 5s}});
  std::vector<std::atomic<int>> ran(2);
  std::vector<LaunchStage::Task> a = {
      [](slurm::SlurmClient& s) { (void)s.submit(nlohmann::json::object()); }};
  EXPECT_EQ(stage.run(a), 1u);
  EXPECT_EQ(stage.overloads(), 0);
  EXPECT_EQ(stage.window(), 4);
  EXPECT_EQ(stage.run(a), 1u);
  EXPECT_EQ(stage.overloads(), 1);
  EXPECT_EQ(stage.window(), 2);
  EXPECT_GT(stage.pausedUntilMs(), clock.steadyMs());
}

TEST(LaunchStage, AWallClockStepIsNeitherASlowAnswerNorALongerPause) {
  FakeClock clock;
  ScriptedClient client(clock);
  LaunchStageOptions options;
  options.slow_submit = 5s;
  LaunchStage stage(std::vector<slurm::SlurmClient*>(4, &client), clock, options);
  // An answer in 10 ms while NTP stepped the wall clock two hours forward.
  client.script({{200, 10ms, 2h}, {503, 0ms, 0ms}});
  std::vector<std::atomic<int>> ran(8);
  auto one = submitTasks(1, ran);
  EXPECT_EQ(stage.run(one), 1u);
  EXPECT_EQ(stage.overloads(), 0);
  EXPECT_EQ(stage.window(), 4);
  // A pause, then the wall clock steps an hour back: the pause still ends a second later.
  auto overloaded = submitTasks(1, ran);
  EXPECT_EQ(stage.run(overloaded), 1u);
  EXPECT_EQ(stage.overloads(), 1);
  clock.stepWall(-1h);
  clock.advance(resendDelay(1));
  auto more = submitTasks(2, ran);
  EXPECT_EQ(stage.run(more), 2u);
}

TEST(LaunchStage, AStopRequestedStartsNothingNew) {
  FakeClock clock;
  ScriptedClient client(clock);
  LaunchStage stage({&client}, clock);
  std::stop_source stop;
  std::vector<std::atomic<int>> ran(6);
  auto tasks = submitTasks(6, ran);
  // The first task asks for the stop: it finishes, nothing after it starts.
  tasks[0] = [&](slurm::SlurmClient& s) {
    stop.request_stop();
    (void)s.submit(nlohmann::json::object());
  };
  EXPECT_EQ(stage.run(tasks, stop.get_token()), 1u);
  EXPECT_EQ(client.submits(), 1);
  for (size_t i = 1; i < ran.size(); ++i) EXPECT_EQ(ran[i].load(), 0) << "task " << i;
}

}  // namespace
}  // namespace tuneplane::control
