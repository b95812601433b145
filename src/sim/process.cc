#include "sim/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tuneplane::sim {

Result<pid_t> launchBatchStep(const LaunchSpec& spec) {
  // Everything the child touches is prepared here: after fork in a threaded process only
  // async-signal-safe calls are allowed.
  std::vector<char*> envp;
  envp.reserve(spec.environment.size() + 1);
  for (const auto& e : spec.environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  char* argv[] = {const_cast<char*>(spec.script_path.c_str()), nullptr};
  const bool shared_output = spec.stderr_path == spec.stdout_path;
  const int output_flags = O_WRONLY | O_CREAT | O_APPEND | (spec.append_output ? 0 : O_TRUNC);

  const pid_t pid = fork();
  if (pid < 0) return fail("sim.fork", "", std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    if (chdir(spec.cwd.c_str()) != 0) _exit(errno);
    const int in = open(spec.stdin_path.c_str(), O_RDONLY);
    const int out = open(spec.stdout_path.c_str(), output_flags, 0644);
    if (in < 0 || out < 0) _exit(errno);
    const int err = shared_output ? out : open(spec.stderr_path.c_str(), output_flags, 0644);
    if (err < 0) _exit(errno);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    // Close every other descriptor the simulator holds (listening sockets, clients).
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    // ETXTBSY: the script was written by this process, and a child another thread forked
    // meanwhile holds its write descriptor until that child closes it above or execs. Wait for
    // that (bounded: 5 s; 1 s was seen to fall short on a loaded 2-core machine, where that
    // child may wait that long for a core) instead of failing the job with 26 as its exit
    // code, which a test starting many jobs at once saw. Both calls are async-signal-safe.
    for (int tries = 0; tries < 500; ++tries) {
      execve(argv[0], argv, envp.data());
      if (errno != ETXTBSY) break;
      const timespec pause{0, 10'000'000};
      nanosleep(&pause, nullptr);
    }
    _exit(errno);
  }
  setpgid(pid, pid);  // also here, so a signal right after fork reaches the group
  return pid;
}

std::optional<ProcessExit> pollProcess(pid_t pid) {
  int status = 0;
  const pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == 0) return std::nullopt;
  if (r < 0) return ProcessExit{false, 0};  // already reaped elsewhere: treat as exit 0
  if (WIFSIGNALED(status)) return ProcessExit{true, WTERMSIG(status)};
  return ProcessExit{false, WEXITSTATUS(status)};
}

void signalProcessGroup(pid_t pid, int sig) {
  if (pid > 0) kill(-pid, sig);
}

}  // namespace tuneplane::sim
