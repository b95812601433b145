// Time as the control loop sees it: one injected source of wall-clock time in Unix
// milliseconds, so the reconciler's decisions (backoff, lookups, grace periods) are tested
// with a clock that tests advance by hand. Thread-safety: implementations are safe to call
// from any thread.
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
};

// The system's wall clock.
class SystemClock final : public Clock {
 public:
  int64_t nowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// A clock that moves only when told to. Tests advance it by the named constants they test.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1'700'000'000'000) : now_ms_(start_ms) {}
  int64_t nowMs() const override { return now_ms_.load(); }
  void advance(std::chrono::milliseconds by) { now_ms_ += by.count(); }
  void set(int64_t ms) { now_ms_ = ms; }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace tuneplane
