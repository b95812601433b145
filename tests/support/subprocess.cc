// Bounded child processes for tests (see subprocess.h).
#include "support/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "support/wait.h"

extern char** environ;

namespace tuneplane::test {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string describe(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& arg : argv) {
    if (!text.empty()) text += ' ';
    text += arg.size() > 200 ? arg.substr(0, 200) + "…" : arg;
  }
  return text;
}

enum class Exit { kExited, kRunning, kUnwaitable };

// Polls until child `pid` has exited (kExited) or `limit` passes (kRunning), without reaping
// it: until it is reaped its id cannot be reused, so it still names the group it led.
Exit awaitExit(pid_t pid, std::chrono::milliseconds limit, const std::string& what) {
  Exit seen = Exit::kRunning;
  waitUntil(
      [&] {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
          if (info.si_pid == pid) seen = Exit::kExited;
        } else if (errno != EINTR) {
          ADD_FAILURE() << what << ": waitid: " << std::strerror(errno);
          seen = Exit::kUnwaitable;
        }
        return seen != Exit::kRunning;
      },
      limit, std::chrono::milliseconds(1));  // short: quick children stay quick
  return seen;
}

// Reaps child `pid`, which has exited or was just killed: its wait status, or -1 (reported).
int reap(pid_t pid, const std::string& what) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      ADD_FAILURE() << what << ": waitpid: " << std::strerror(errno);
      return -1;
    }
  }
  return status;
}

// Ends child `pid` (not yet reaped) and what runs in the group it leads: SIGKILL to both,
// then reaps it. Its wait status (an exited child keeps its own), or -1 (reported).
int endGroup(pid_t pid, const std::string& what) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  return reap(pid, what);
}

// Waits for child `pid` at most `limit`: its wait status, -1 when it cannot be waited for
// (reported), nullopt past the limit (reported; its group killed and it reaped). With
// `end_group`, what it left running in the group it leads is killed when it exits.
std::optional<int> waitChild(pid_t pid, std::chrono::milliseconds limit, const std::string& what,
                             bool end_group) {
  switch (awaitExit(pid, limit, what)) {
    case Exit::kExited:
      return end_group ? endGroup(pid, what) : reap(pid, what);
    case Exit::kUnwaitable:
      return -1;
    case Exit::kRunning:
      break;
  }
  ADD_FAILURE() << what << ": still running after " << limit.count() << " ms; killed";
  endGroup(pid, what);
  return std::nullopt;
}

// The exit code of a wait status: 128 + N when killed by signal N.
int exitCodeOf(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status)
                           : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// Spawns argv in its own process group with stdin from /dev/null and stdout/stderr into
// the two files (truncated, or appended to). Returns its pid, or -1 (reported).
pid_t spawnChild(const std::vector<std::string>& argv, const ProcessOptions& options,
                 const std::filesystem::path& out_path, const std::filesystem::path& err_path,
                 bool append) {
  std::vector<std::string> args = argv;
  std::vector<char*> arg_ptrs;
  for (auto& a : args) arg_ptrs.push_back(a.data());
  arg_ptrs.push_back(nullptr);
  std::vector<std::string> env_entries;
  std::vector<char*> env_ptrs;
  if (options.env) {
    env_entries = *options.env;
    for (auto& e : env_entries) env_ptrs.push_back(e.data());
    env_ptrs.push_back(nullptr);
  }
  const int flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), flags, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), flags, 0644);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own group: a hang is killed as a whole
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, arg_ptrs[0], &actions, &attributes, arg_ptrs.data(),
                                options.env ? env_ptrs.data() : environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << describe(argv) << ": " << std::strerror(rc);
    return -1;
  }
  return pid;
}

}  // namespace

std::optional<int> runInChild(const std::function<int()>& child, const std::string& what,
                              std::chrono::milliseconds limit) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << what << ": fork: " << std::strerror(errno);
    return std::nullopt;
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so all of it is killed on expiry
    ::_exit(child());
  }
  const auto status = waitChild(pid, limit, what, /*end_group=*/false);
  if (!status || *status == -1) return std::nullopt;
  return exitCodeOf(*status);
}

ProcessResult runProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  const auto out_path = options.scratch / ".child.stdout";
  const auto err_path = options.scratch / ".child.stderr";
  const pid_t pid = spawnChild(argv, options, out_path, err_path, false);
  if (pid < 0) return result;
  // Whatever it left running in its group (none, normally) goes with it.
  const auto status = waitChild(pid, options.limit, describe(argv), /*end_group=*/true);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  if (!status) {
    result.timed_out = true;
    result.exit_code = 128 + SIGKILL;
    return result;
  }
  if (*status == -1) return result;  // waitpid itself failed (reported)
  result.exit_code = exitCodeOf(*status);
  return result;
}

std::vector<std::string> environmentWith(const std::vector<std::string>& entries) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('=') + 1);
    const bool replaced = std::any_of(entries.begin(), entries.end(), [&](const std::string& x) {
      return std::string_view(x).starts_with(name);
    });
    if (!replaced) env.emplace_back(entry);
  }
  env.insert(env.end(), entries.begin(), entries.end());
  return env;
}

ProcessResult runShell(const std::string& command, const ProcessOptions& options) {
  return runProcess({"/bin/sh", "-c", command}, options);
}

std::unique_ptr<ChildProcess> ChildProcess::start(const std::vector<std::string>& argv,
                                                  const ProcessOptions& options,
                                                  const std::string& name, Output output) {
  const auto out_path = options.scratch / (name + ".out");
  const auto err_path = options.scratch / (name + ".err");
  const pid_t pid = spawnChild(argv, options, out_path, err_path, output == Output::kAppend);
  if (pid < 0) return nullptr;
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, describe(argv), out_path, err_path));
}

ChildProcess::ChildProcess(pid_t pid, std::string what, std::filesystem::path out,
                           std::filesystem::path err)
    : pid_(pid), what_(std::move(what)), out_path_(std::move(out)), err_path_(std::move(err)) {}

ChildProcess::~ChildProcess() {
  end();
}

void ChildProcess::end() {
  if (exit_code_) return;  // reaped: its group was ended then
  const int status = endGroup(pid_, what_);
  exit_code_ = status == -1 ? -1 : exitCodeOf(status);
}

bool ChildProcess::running() {
  exitWithin(std::chrono::milliseconds(0));
  return !exit_code_;
}

void ChildProcess::signal(int signal) {
  if (!exit_code_) ::kill(pid_, signal);
}

std::optional<int> ChildProcess::waitExit(std::chrono::milliseconds limit) {
  if (exit_code_) return exit_code_;
  const auto status = waitChild(pid_, limit, what_, /*end_group=*/true);
  if (!status || *status == -1) {
    exit_code_ = -1;  // reaped (or unreapable): the destructor must not wait for it
    return std::nullopt;
  }
  exit_code_ = exitCodeOf(*status);
  return exit_code_;
}

std::optional<int> ChildProcess::exitWithin(std::chrono::milliseconds limit) {
  if (exit_code_) return exit_code_;
  switch (awaitExit(pid_, limit, what_)) {
    case Exit::kExited: {
      const int status = endGroup(pid_, what_);
      exit_code_ = status == -1 ? -1 : exitCodeOf(status);
      return exit_code_;
    }
    case Exit::kUnwaitable:
      exit_code_ = -1;  // the destructor must not wait for it
      return std::nullopt;
    case Exit::kRunning:
      break;
  }
  return std::nullopt;
}

std::string ChildProcess::firstLine(std::chrono::milliseconds limit) {
  std::string line;
  waitUntil(
      [&] {
        const std::string text = out();
        if (const auto end = text.find('\n'); end != std::string::npos) {
          line = text.substr(0, end);
          return true;
        }
        return !running();  // it exited without one: nothing comes any more
      },
      limit);
  return line;
}

std::string ChildProcess::out() const {
  return slurp(out_path_);
}
std::string ChildProcess::err() const {
  return slurp(err_path_);
}

}  // namespace tuneplane::test
