// LaunchStage: the control loop's concurrent launch stage. It runs a batch of tasks — a
// launch task stages and submits ONE attempt by the submit protocol (reconciler.h), a
// read-back task reads one receipt's job — each with its own slurmrestd connection, at most
// window() at once on std::jthreads that live for the batch, and returns when every task it
// started has finished. Within a task the protocol's order is untouched; the stage only
// decides how many attempts are in flight.
//
// Backoff as a whole: every submit a task sends is timed (injected Clock). An overload — an
// HTTP 429 or 503, or an answer slower than slow_submit — halves the window (at least 1) and
// pauses new starts until now + resendDelay(overloads in a row) (retry_policy.h: 1 s doubling
// to 60 s); tasks not started yet are left for a later tick (run() says how many it
// started). The submits in flight together when slurmrestd pushes back are one burst: their
// overloads count once (eight 429s to eight concurrent submits are one "slow down", not a
// pause of 60 s). Each submit answered in time widens the window by one, up to the number of
// connections, and ends the run of overloads.
//
// With one connection (the default, and the reconciler's tests) tasks run one after another
// on the calling thread, exactly as before this stage existed.
// Thread-safety: run() from one thread at a time (the loop's); the other methods from any.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <vector>

#include "common/clock.h"
#include "slurm/slurm_client.h"

namespace tuneplane::control {

struct LaunchStageOptions {
  // A submit answered later than this counts as an overload (slurmrestd slowing down).
  std::chrono::milliseconds slow_submit{5'000};
};

class LaunchStage {
 public:
  // One connection per slot: concurrency() == clients.size() (an empty list is not allowed).
  // REQUIRES: every client and `clock` outlive the stage.
  LaunchStage(std::vector<slurm::SlurmClient*> clients, const Clock& clock,
              LaunchStageOptions options = {});
  ~LaunchStage();
  LaunchStage(const LaunchStage&) = delete;
  LaunchStage& operator=(const LaunchStage&) = delete;

  // A task gets the connection of the slot it runs on.
  using Task = std::function<void(slurm::SlurmClient&)>;

  // Runs tasks in order, at most window() at once. Stops starting new ones once `stop` is
  // requested or an overload paused the stage; tasks already started always finish. Returns
  // how many were started (a prefix of `tasks`).
  size_t run(std::vector<Task>& tasks, std::stop_token stop = {});

  int concurrency() const { return static_cast<int>(clients_.size()); }
  // How many tasks may run at once now (1..concurrency()).
  int window() const;
  // When new starts may resume (Clock::steadyMs); 0 or past: not paused.
  int64_t pausedUntilMs() const;
  // The most tasks that ran at once since the stage was made (tests, bench).
  int maxInFlight() const;
  int64_t overloads() const;  // overloads seen since the stage was made

 private:
  class TimedClient;
  // Called by a slot's TimedClient after each submit.
  void noteSubmit(const slurm::SlurmResult<slurm::SubmitReceipt>& answer, int64_t took_ms);
  bool pausedLocked() const;

  const Clock& clock_;
  const LaunchStageOptions options_;
  std::vector<slurm::SlurmClient*> clients_;
  std::vector<std::unique_ptr<TimedClient>> timed_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  int window_;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
  int overloads_in_a_row_ = 0;
  int64_t overloads_ = 0;
  int64_t paused_until_ms_ = 0;
  // When the last overload halved the window and set the pause; an overload answering a
  // submit sent no later than this belongs to the same burst and does not back off again.
  std::optional<int64_t> last_backoff_ms_;
};

}  // namespace tuneplane::control
