// ServeObserver: what `tuneplane serve` does with the control module's reports
// (control/control_observer.h) — each transition becomes a structured log record
// (EventLog), each reconcile cycle and each submit latency a /metrics histogram sample.
// Thread-safety: every method may be called from any thread (Metrics is, and the EventLog's
// sink must be).
#pragma once

#include "api/metrics.h"
#include "control/control_observer.h"
#include "server/event_log.h"

namespace tuneplane::server {

class ServeObserver final : public control::ControlObserver {
 public:
  // REQUIRES: `metrics` and `log` outlive the observer.
  ServeObserver(api::Metrics& metrics, const EventLog& log) : metrics_(metrics), log_(log) {}

  // control::ControlObserver:
  void transition(const store::EventRecord& event) override { log_.transition(event); }
  void cycle(const control::TickReport&, double seconds) override {
    metrics_.observeCycle(seconds);
  }
  void submitted(const store::AttemptRecord&, double seconds) override {
    metrics_.observeSubmitLatency(seconds);
  }
  void duplicates(const store::AttemptRecord&, int count) override {
    metrics_.countDuplicateSlurmJobs(count);
  }

 private:
  api::Metrics& metrics_;
  const EventLog& log_;
};

}  // namespace tuneplane::server
