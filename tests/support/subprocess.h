// Child processes started by tests, always bounded: a child that outlives its limit is
// killed with its whole process group and the test fails naming the command, so no test
// waits forever on a stuck script, binary or stand-in. Thread-safe: no shared state (each
// call spawns and reaps its own child).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tuneplane::test {

// Long enough for any child a test starts (a CLI call, a rendered script with stubs) on a
// loaded machine under sanitizers; a bound on a hang, not a timing assertion.
inline constexpr std::chrono::seconds kChildLimit{120};

// Every member has a default, so designated initializers may leave any out.
struct ProcessOptions {
  std::filesystem::path scratch = {};  // stdout and stderr are captured in files here
  std::optional<std::vector<std::string>> env = std::nullopt;  // the whole env; unset: ours
  std::chrono::milliseconds limit = kChildLimit;
  std::filesystem::path cwd = {};  // where it runs; unset: our working directory
};

struct ProcessResult {
  int exit_code = -1;  // the exit status, 128 + N when killed by signal N, -1 if not started
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Our environment with `entries` (NAME=VALUE) added; one replaces ours of the same NAME.
std::vector<std::string> environmentWith(const std::vector<std::string>& entries);

// Runs argv[0] (a path, or a name looked up on our PATH) in its own process group, stdin
// from /dev/null. After it exits, what it left running in its group is killed too.
ProcessResult runProcess(const std::vector<std::string>& argv, const ProcessOptions& options);

// `/bin/sh -c command`, as runProcess.
ProcessResult runShell(const std::string& command, const ProcessOptions& options);

// A child that runs beside the test (a server: the simulator, `tuneplane serve`; a command
// the test interrupts; a rendered script and what it starts), in its own process group,
// stdin from /dev/null, stdout and stderr captured in `scratch`/NAME.out and NAME.err. Once
// it has exited, what it left running in its group is killed before it is reaped (so its id
// still names its group), as runProcess does. Never outlives its owner: the destructor ends
// its group. Thread-safety: one owner.
class ChildProcess {
 public:
  // What start does with NAME.out and NAME.err that are there already: append (a restarted
  // server keeps one log) or start them afresh (a command run again under the same name).
  enum class Output { kAppend, kTruncate };

  // Starts argv as runProcess does; nullptr (reported as a failure) when it cannot start.
  static std::unique_ptr<ChildProcess> start(const std::vector<std::string>& argv,
                                             const ProcessOptions& options, const std::string& name,
                                             Output output = Output::kAppend);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // True until it has exited (reaps it when it has, keeping its exit code).
  bool running();
  // Sends `signal` to the child (not its group): what a user's kill does.
  void signal(int signal);
  // Its exit code (128 + N when killed by signal N), once it has ended within `limit`;
  // past it the group is killed, the test fails naming the command, and nullopt.
  std::optional<int> waitExit(std::chrono::milliseconds limit = kChildLimit);
  // Its exit code (128 + N when killed by signal N) if it ends within `limit` (0: just
  // look); nullopt while it still runs, which is no failure: for a test that polls several
  // children, or bounds a command whose outcome it asserts itself.
  std::optional<int> exitWithin(std::chrono::milliseconds limit);
  // Ends it now: SIGKILL to its whole group, then reaps it (nothing when it has exited).
  void end();
  // The first line it writes to stdout (without the newline), waiting at most `limit`;
  // empty when it exits or the limit passes first (no failure: the caller says what it
  // expected). For a server that prints its address when it is up.
  std::string firstLine(std::chrono::milliseconds limit);
  std::string out() const;
  std::string err() const;

 private:
  ChildProcess(pid_t pid, std::string what, std::filesystem::path out, std::filesystem::path err);

  pid_t pid_;
  std::string what_;
  std::filesystem::path out_path_, err_path_;
  std::optional<int> exit_code_;  // once reaped; -1 when it could not be waited for
};

// Forks; the child (in its own process group) runs `child` and exits with the int it
// returns — for code under test that might block (a FIFO) or that must run as another user
// (setuid), waited for with a bound. Returns the exit code (128 + N when killed by signal N),
// or nullopt when the fork failed or the child outlived `limit` (each reported as a failure
// naming `what`). The child must not touch GoogleTest: it reports through its exit code.
std::optional<int> runInChild(const std::function<int()>& child, const std::string& what,
                              std::chrono::milliseconds limit = std::chrono::seconds(20));

}  // namespace tuneplane::test
