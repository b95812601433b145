#include "client/poll.h"

#include <algorithm>

namespace tuneplane::client {

Poller::Poller(const PollOptions& options, const Clock& clock, Sleeper& sleeper)
    : options_(options), clock_(clock), sleeper_(sleeper), start_ms_(clock.nowMs()) {}

bool Poller::tolerate(const ApiError& error) {
  if (!error.transient()) return false;
  const int64_t now = clock_.nowMs();
  if (!failing_since_ms_) failing_since_ms_ = now;
  return now - *failing_since_ms_ < options_.unreachable_grace.count();
}

std::optional<PollEnd> Poller::pause() {
  int64_t wait_ms = options_.interval.count();
  if (options_.timeout) {
    const int64_t left = start_ms_ + options_.timeout->count() - clock_.nowMs();
    if (left <= 0) return PollEnd::kTimedOut;
    wait_ms = std::min(wait_ms, left);
  }
  if (!sleeper_.sleepFor(std::chrono::milliseconds(wait_ms))) return PollEnd::kInterrupted;
  return std::nullopt;
}

PollOutcome pollUntil(const PollOptions& options, const Clock& clock, Sleeper& sleeper,
                      const std::function<tl::expected<bool, ApiError>()>& poll,
                      const std::function<void(const ApiError&)>& on_retry) {
  Poller poller(options, clock, sleeper);
  for (;;) {
    auto done = poll();
    if (done) {
      poller.succeeded();
      if (*done) return {PollEnd::kDone, std::nullopt};
    } else if (poller.tolerate(done.error())) {
      if (on_retry) on_retry(done.error());
    } else {
      return {PollEnd::kFailed, std::move(done.error())};
    }
    if (auto end = poller.pause()) return {*end, std::nullopt};
  }
}

std::chrono::milliseconds clampPollInterval(std::chrono::milliseconds interval) {
  return std::clamp(interval, kMinPollInterval, kMaxPollInterval);
}

}  // namespace tuneplane::client
