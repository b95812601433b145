// ControlLoop: the thread that owns the reconciler's rhythm — tick(), then sleep for the
// poll interval (or until woken, or sooner when the tick left attempts to launch:
// TickReport::relaunch_in_ms), until stopped. `tuneplane serve` owns one. stop() asks
// the running tick to return at its next safe point (between two store writes, never in
// the middle of one), wakes the sleep, and joins: it returns promptly and leaves nothing
// half-written. The interval is real time (steady clock): the reconciler's decisions use
// its own injected Clock. Each tick's duration (steady clock) is reported to the observer, if
// any. Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "control/control_observer.h"
#include "control/reconciler.h"

namespace tuneplane::control {

class ControlLoop {
 public:
  // REQUIRES: `reconciler` and `observer` (may be null) outlive the loop; interval > 0.
  ControlLoop(Reconciler& reconciler, std::chrono::milliseconds interval,
              ControlObserver* observer = nullptr);
  ~ControlLoop();  // stop()
  ControlLoop(const ControlLoop&) = delete;
  ControlLoop& operator=(const ControlLoop&) = delete;

  // Starts the thread; the first tick runs at once. No effect when already running.
  void start();
  // Stops and joins (see above). Idempotent.
  void stop();
  // Ends the current sleep: the next tick starts now (e.g. after a job was submitted).
  void wake();

  bool running() const { return running_.load(); }
  int64_t ticks() const { return ticks_.load(); }
  TickReport lastReport() const;

 private:
  void run(std::stop_token stop);

  Reconciler& reconciler_;
  const std::chrono::milliseconds interval_;
  ControlObserver* const observer_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  bool woken_ = false;
  TickReport last_;
  std::atomic<bool> running_{false};
  std::atomic<int64_t> ticks_{0};
  std::jthread thread_;
};

}  // namespace tuneplane::control
