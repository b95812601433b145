// Runs a function in a forked child and waits for it with a deadline, so a test of code that
// might block (a FIFO, a user switch) fails after a bounded wait instead of hanging.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

namespace tuneplane::testing {

// Forks; the child runs `child()` and exits with the int it returns. Returns the child's exit
// code, or nullopt when it could not start, was killed by a signal, or was still running at
// the deadline (then it is killed).
template <typename Child>
std::optional<int> runInChild(Child child, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const pid_t pid = ::fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) ::_exit(child());
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (done != pid) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return std::nullopt;
  }
  return WIFEXITED(status) ? std::optional<int>(WEXITSTATUS(status)) : std::nullopt;
}

}  // namespace tuneplane::testing
