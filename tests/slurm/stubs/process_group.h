// For the slurm tests that run rendered scripts side by side: a child process started in a
// process group of its own (with everything it starts), its stdout/stderr in files, waited
// for with a deadline, and always ended with its whole group — so no test hangs and nothing
// it started outlives it. Header-only (tests/CMakeLists.txt compiles only *_test.cc files).
// Not thread-safe: one owner.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tuneplane::slurm::shell_test {

class ProcessGroup {
 public:
  // Runs argv (argv[0] looked up on this process's PATH) with exactly `env`, in `cwd`, stdin
  // from /dev/null, stdout and stderr into the given files.
  ProcessGroup(const std::vector<std::string>& argv, const std::vector<std::string>& env,
               const std::filesystem::path& cwd, const std::filesystem::path& out,
               const std::filesystem::path& err) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setpgroup(&attributes, 0);  // its own group, led by itself
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const int failed =
        posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (failed != 0) throw std::runtime_error("posix_spawnp failed for " + argv[0]);
  }
  ~ProcessGroup() { end(); }
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // The leader's exit code once it has exited (its group is then ended too); nullopt when
  // `limit` passes first or it died of a signal. The leader is observed before it is reaped,
  // so its id still names this group when the group is killed.
  std::optional<int> waitFor(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!reaped_) {
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid_) {
        end();
        return exit_code_;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return exit_code_;
  }

  // Kills every process of the group that is left (SIGKILL), then reaps the leader.
  void end() {
    if (reaped_) return;
    kill(-pid_, SIGKILL);
    int status = 0;
    if (waitpid(pid_, &status, 0) == pid_ && WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
    reaped_ = true;
  }

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::optional<int> exit_code_;
};

}  // namespace tuneplane::slurm::shell_test
