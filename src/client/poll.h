// What `submit --wait` and `logs -f` share: a bounded poll interval, an optional overall
// timeout, patience with a server that is briefly away (a restart), and a sleep that Ctrl-C
// interrupts. Time comes from an injected Clock and waiting from an injected Sleeper, so the
// loops are tested with a FakeClock that the fake sleeper advances: no test sleeps.
// Thread-safety: a Poller belongs to one loop.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include <tl/expected.hpp>

#include "client/api_error.h"
#include "common/clock.h"

namespace tuneplane::client {

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  // Waits `duration`, or less if interrupted; false when interrupted (now or earlier).
  virtual bool sleepFor(std::chrono::milliseconds duration) = 0;
};

// The poll interval is fixed (no growth): a followed job or log should not look stuck for
// minutes. Flags are clamped into [kMinPollInterval, kMaxPollInterval].
inline constexpr std::chrono::milliseconds kDefaultPollInterval{2000};
inline constexpr std::chrono::milliseconds kMinPollInterval{100};
inline constexpr std::chrono::milliseconds kMaxPollInterval{60000};
// How long a wait rides over a server that does not answer, or answers 429/502/503/504,
// before giving up (a `tuneplane serve` restart takes seconds).
inline constexpr std::chrono::milliseconds kDefaultUnreachableGrace{60000};

struct PollOptions {
  std::chrono::milliseconds interval = kDefaultPollInterval;
  std::optional<std::chrono::milliseconds> timeout;  // counted from the loop's start
  std::chrono::milliseconds unreachable_grace = kDefaultUnreachableGrace;
};

// How a polling loop ended.
enum class PollEnd {
  kDone,         // what was awaited happened (the job or the attempt ended)
  kTimedOut,     // --timeout passed first; nothing was cancelled
  kInterrupted,  // Ctrl-C; nothing was cancelled
  kFailed,       // an error that polling again will not mend (see ApiError::transient)
};

class Poller {
 public:
  Poller(const PollOptions& options, const Clock& clock, Sleeper& sleeper);

  // After a failed poll: true to poll again later (the error is transient and the server
  // has been away for less than the grace period), false to give up.
  bool tolerate(const ApiError& error);
  // After a successful poll: the server's absence, if any, is over.
  void succeeded() { failing_since_ms_.reset(); }
  // Sleeps until the next poll (never past the deadline). nullopt: poll again (one last
  // poll happens at the deadline); kTimedOut once the deadline has passed; kInterrupted.
  std::optional<PollEnd> pause();

 private:
  PollOptions options_;
  const Clock& clock_;
  Sleeper& sleeper_;
  int64_t start_ms_;
  std::optional<int64_t> failing_since_ms_;
};

// The loop of `submit --wait` and `logs -f`: calls `poll` (true: what was awaited happened)
// until it happens (kDone), the timeout passes, Ctrl-C, or a failure that polling again will
// not mend or that outlasts the grace period (kFailed, with the error). `on_retry` hears of
// each failure that is ridden over.
struct PollOutcome {
  PollEnd end = PollEnd::kFailed;
  std::optional<ApiError> error;  // when end is kFailed
};
PollOutcome pollUntil(const PollOptions& options, const Clock& clock, Sleeper& sleeper,
                      const std::function<tl::expected<bool, ApiError>()>& poll,
                      const std::function<void(const ApiError&)>& on_retry);

// Clamps a --poll-interval into [kMinPollInterval, kMaxPollInterval].
std::chrono::milliseconds clampPollInterval(std::chrono::milliseconds interval);

}  // namespace tuneplane::client
