// A client::Sleeper for tests: each sleep advances a FakeClock instead of waiting, and an
// interrupt (Ctrl-C) can be scheduled after a given number of sleeps. It also caps the
// number of sleeps, so a polling loop that would never end fails its test instead of
// hanging it. Thread-safety: one polling thread.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "client/poll.h"
#include "common/clock.h"

namespace tuneplane::testing {

class FakeSleeper final : public client::Sleeper {
 public:
  static constexpr int kMaxSleeps = 1000;

  explicit FakeSleeper(FakeClock& clock) : clock_(clock) {}

  // The sleep numbered `n` (1-based) is interrupted, as by Ctrl-C.
  void interruptAt(int n) { interrupt_at_ = n; }
  const std::vector<std::chrono::milliseconds>& sleeps() const { return sleeps_; }

  bool sleepFor(std::chrono::milliseconds duration) override {
    sleeps_.push_back(duration);
    const int n = static_cast<int>(sleeps_.size());
    if ((interrupt_at_ && n >= *interrupt_at_) || n > kMaxSleeps) return false;
    clock_.advance(duration);
    return true;
  }

 private:
  FakeClock& clock_;
  std::optional<int> interrupt_at_;
  std::vector<std::chrono::milliseconds> sleeps_;
};

}  // namespace tuneplane::testing
