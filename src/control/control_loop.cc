// See control_loop.h.
#include "control/control_loop.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace tuneplane::control {

ControlLoop::ControlLoop(Reconciler& reconciler, std::chrono::milliseconds interval,
                         ControlObserver* observer)
    : reconciler_(reconciler), interval_(interval), observer_(observer) {}

ControlLoop::~ControlLoop() {
  stop();
}

void ControlLoop::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  running_ = true;
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

void ControlLoop::stop() {
  std::jthread thread;
  {
    std::lock_guard<std::mutex> lock(mu_);
    thread = std::move(thread_);
  }
  if (!thread.joinable()) return;
  thread.request_stop();  // wakes the wait below through its stop_token
  thread.join();
  running_ = false;
}

void ControlLoop::wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

TickReport ControlLoop::lastReport() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_;
}

void ControlLoop::run(std::stop_token stop) {
  spdlog::info("control loop: started, polling every {} ms", interval_.count());
  while (!stop.stop_requested()) {
    const auto start = std::chrono::steady_clock::now();
    const TickReport report = reconciler_.tick(stop);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    ++ticks_;
    if (observer_ != nullptr) observer_->cycle(report, took.count());
    std::unique_lock<std::mutex> lock(mu_);
    last_ = report;
    // Attempts left to launch (the per-tick budget, or the launch stage's backoff) are not
    // held for a whole poll interval.
    auto wait = interval_;
    if (report.relaunch_in_ms >= 0) {
      wait = std::min(wait, std::chrono::milliseconds(report.relaunch_in_ms));
    }
    cv_.wait_for(lock, stop, wait, [this] { return woken_; });
    woken_ = false;
  }
  spdlog::info("control loop: stopped after {} tick(s)", ticks_.load());
}

}  // namespace tuneplane::control
