// RecordingObserver: a ControlObserver that keeps what it was told, for tests (thread-safe:
// the loop's thread reports while the test reads).
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "control/control_observer.h"
#include "control/reconciler.h"

namespace tuneplane::control::testing {

class RecordingObserver final : public ControlObserver {
 public:
  void transition(const store::EventRecord& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    transitions_.push_back(event);
  }
  void cycle(const TickReport& report, double seconds) override {
    std::lock_guard<std::mutex> lock(mu_);
    cycles_.emplace_back(report, seconds);
  }
  void submitted(const store::AttemptRecord& attempt, double seconds) override {
    std::lock_guard<std::mutex> lock(mu_);
    submits_.emplace_back(attempt, seconds);
  }

  void duplicates(const store::AttemptRecord&, int count) override {
    std::lock_guard<std::mutex> lock(mu_);
    duplicates_.push_back(count);
  }
  std::vector<int> duplicates() const {
    std::lock_guard<std::mutex> lock(mu_);
    return duplicates_;
  }

  std::vector<store::EventRecord> transitions() const {
    std::lock_guard<std::mutex> lock(mu_);
    return transitions_;
  }
  std::vector<std::pair<TickReport, double>> cycles() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cycles_;
  }
  std::vector<std::pair<store::AttemptRecord, double>> submits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return submits_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<store::EventRecord> transitions_;
  std::vector<std::pair<TickReport, double>> cycles_;
  std::vector<std::pair<store::AttemptRecord, double>> submits_;
  std::vector<int> duplicates_;
};

}  // namespace tuneplane::control::testing
