#include "client_cli/interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>

namespace tuneplane::cli {
namespace {

std::atomic<bool> g_interrupted{false};
int g_wake_read = -1;
int g_wake_write = -1;

extern "C" void onInterrupt(int) {
  g_interrupted.store(true);
  const int saved = errno;
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(g_wake_write, &byte, 1);  // async-signal-safe
  errno = saved;
}

class InterruptSleeper final : public client::Sleeper {
 public:
  InterruptSleeper() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
      g_wake_read = fds[0];
      g_wake_write = fds[1];
    }
    struct sigaction action {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    ::sigaction(SIGINT, &action, nullptr);
  }

  // client::Sleeper:
  bool sleepFor(std::chrono::milliseconds duration) override {
    using Steady = std::chrono::steady_clock;
    const auto deadline = Steady::now() + duration;
    while (!g_interrupted.load()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
      if (left.count() <= 0) break;
      struct pollfd wake {
        g_wake_read, POLLIN, 0
      };
      // Without a pipe (pipe2 failed) poll on nothing: still a bounded sleep.
      ::poll(&wake, g_wake_read >= 0 ? 1 : 0, static_cast<int>(left.count()));
    }
    return !g_interrupted.load();
  }
};

}  // namespace

client::Sleeper& interruptSleeper() {
  static InterruptSleeper sleeper;
  return sleeper;
}

}  // namespace tuneplane::cli
