// Time as the control loop sees it, injected so the reconciler's decisions (backoff, lookups,
// grace periods) are tested with a clock that tests advance by hand. Two readings: the wall
// clock, for what is stored and outlives the process (event times, the next retry), and a
// clock that never steps, for durations and deadlines held in memory (a submit's latency, a
// backoff's pause, how long a job has waited unrunnable): an NTP step of the wall clock must
// neither freeze intake for the hour it went back nor fail a job the moment it went forward
// (the fault campaign steps serve's wall clock). Thread-safety: implementations are safe to
// call from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace tuneplane {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t nowMs() const = 0;
  // Milliseconds since an arbitrary origin, never stepped (CLOCK_MONOTONIC).
  virtual int64_t steadyMs() const = 0;
};

// The system's wall clock.
class SystemClock final : public Clock {
 public:
  int64_t nowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  int64_t steadyMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// A clock that moves only when told to. Tests advance it by the named constants they test;
// advance() moves both readings, stepWall() and set() the wall clock alone (an NTP step).
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1'700'000'000'000) : now_ms_(start_ms) {}
  int64_t nowMs() const override { return now_ms_.load(); }
  int64_t steadyMs() const override { return steady_ms_.load(); }
  void advance(std::chrono::milliseconds by) {
    now_ms_ += by.count();
    steady_ms_ += by.count();
  }
  void stepWall(std::chrono::milliseconds by) { now_ms_ += by.count(); }
  void set(int64_t ms) { now_ms_ = ms; }

 private:
  std::atomic<int64_t> now_ms_;
  std::atomic<int64_t> steady_ms_{1'000'000};
};

}  // namespace tuneplane
