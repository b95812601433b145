// ControlObserver: what the control module reports as it works, for whoever watches it —
// every transition it stores, every reconcile cycle, every submit receipt. `tuneplane serve`
// turns the reports into /metrics figures and JSON log lines (server/serve_observer.h); control
// itself knows nothing of either. Handed in as a pointer that may be null
// (ReconcilerOptions::observer, ControlLoop, JobService); without one, the reconciler logs
// transitions as text lines.
// Thread-safety: an implementation is called from the control loop's thread and from API
// threads (JobService) at once, so it must be safe to call from any thread. Calls happen
// after the store commit they report, never inside it, and must not block for long.
#pragma once

#include <string>

#include "store/job_store.h"

namespace tuneplane::control {

struct TickReport;

class ControlObserver {
 public:
  virtual ~ControlObserver() = default;

  // A transition made durable: one event of a committed change (creation included).
  virtual void transition(const store::EventRecord& event) = 0;
  // One reconcile cycle (Reconciler::tick) ended; `seconds` is its duration, steady clock.
  virtual void cycle(const TickReport& report, double seconds) = 0;
  // Slurm's receipt (the numeric job id) of `attempt` was made durable. `seconds` is the
  // submit latency: from the attempt's creation (created_ms) to that commit, on the
  // reconciler's clock — staging, artifact checks and the POST included.
  virtual void submitted(const store::AttemptRecord& attempt, double seconds) = 0;
  // `count` more Slurm jobs carried `attempt`'s submit token than it adopted (a POST that
  // reached Slurm twice); they were cancelled (decisions.h, chooseByToken). A default, so
  // observers that do not count it need not say so.
  virtual void duplicates(const store::AttemptRecord& attempt, int count) {
    (void)attempt;
    (void)count;
  }
};

}  // namespace tuneplane::control
