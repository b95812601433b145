// The one way a test waits for something the code under test will do: poll a probe until it
// holds, with a bound. The bound is real time and only a guard against a hang (a test that
// reaches it fails, and says what it waited for); it is never a timing assertion. Between polls,
// time passes: on a driven clock the test advances it there (`between`), and the poll pauses a
// few real milliseconds for what runs in real time anyway (another thread, a real process).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace tuneplane::test {

struct WaitOptions {
  // How long to poll before giving up: a bound on a hang, far above what the waits take.
  std::chrono::milliseconds limit = std::chrono::seconds(20);
  // The real pause between polls (threads and processes of the test run meanwhile).
  std::chrono::milliseconds interval = std::chrono::milliseconds(20);
  // Runs between polls: a driven clock's advance, a reconciler's tick. Null: nothing.
  std::function<void()> between = nullptr;
};

// True as soon as `probe` returns true; false when it still does not after `options.limit`
// (it is asked once more at the end, so a probe that holds at the deadline counts).
inline bool waitUntil(const std::function<bool()>& probe, const WaitOptions& options = {}) {
  const auto deadline = std::chrono::steady_clock::now() + options.limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (probe()) return true;
    if (options.between) options.between();
    // The one pause of the polling helper: what the probe waits for runs on other threads or
    // in other processes, in real time.
    std::this_thread::sleep_for(options.interval);
  }
  return probe();
}

// The same with a limit alone, the common case.
inline bool waitUntil(const std::function<bool()>& probe, std::chrono::milliseconds limit,
                      std::chrono::milliseconds interval = std::chrono::milliseconds(20)) {
  return waitUntil(probe, WaitOptions{limit, interval, nullptr});
}

// The negative check, for what must NOT happen while real time passes (another thread, a real
// process or server would have done it by then): true when `probe` held at every poll through
// `window` (asked at once, every `interval`, and at the end); false as soon as it does not.
// The window is how long the test gives the wrong thing its chance, not a timing assertion.
inline bool holdsThroughout(const std::function<bool()>& probe, std::chrono::milliseconds window,
                            std::chrono::milliseconds interval = std::chrono::milliseconds(20)) {
  return !waitUntil([&] { return !probe(); }, window, interval);
}

}  // namespace tuneplane::test
