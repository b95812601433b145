#include "sim/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tuneplane::sim {

Result<pid_t> launchBatchStep(const LaunchSpec& spec) {
  // Everything the child touches is prepared here: after fork in a threaded process only
  // async-signal-safe calls are allowed.
  std::vector<char*> envp;
  envp.reserve(spec.environment.size() + 1);
  for (const auto& e : spec.environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  // The script is run through its `#!` interpreter, as the kernel would (one optional
  // argument after the path): exec'ing the script itself can fail with ETXTBSY while any
  // child forked meanwhile — by this process or by a test that embeds the simulator — still
  // holds the descriptor the script was written through, and reading it is never refused.
  std::string interpreter, interpreter_arg;
  {
    const std::string& first = spec.first_line;
    if (first.rfind("#!", 0) == 0) {
      std::istringstream words(first.substr(2));
      words >> interpreter;
      std::getline(words >> std::ws, interpreter_arg);
      while (!interpreter_arg.empty() &&
             std::isspace(static_cast<unsigned char>(interpreter_arg.back()))) {
        interpreter_arg.pop_back();
      }
    }
  }
  std::vector<char*> argv;
  if (!interpreter.empty()) {
    argv.push_back(interpreter.data());
    if (!interpreter_arg.empty()) argv.push_back(interpreter_arg.data());
  }
  argv.push_back(const_cast<char*>(spec.script_path.c_str()));
  argv.push_back(nullptr);
  const bool shared_output = spec.stderr_path == spec.stdout_path;
  const int output_flags = O_WRONLY | O_CREAT | O_APPEND | (spec.append_output ? 0 : O_TRUNC);
  const mode_t output_mode = spec.umask ? 0666 : 0644;

  const pid_t pid = fork();
  if (pid < 0) return fail("sim.fork", "", std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    if (spec.umask) ::umask(*spec.umask);
    if (chdir(spec.cwd.c_str()) != 0) _exit(errno);
    const int in = open(spec.stdin_path.c_str(), O_RDONLY);
    const int out = open(spec.stdout_path.c_str(), output_flags, output_mode);
    if (in < 0 || out < 0) _exit(errno);
    const int err = shared_output ? out : open(spec.stderr_path.c_str(), output_flags, output_mode);
    if (err < 0) _exit(errno);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    // Close every other descriptor the simulator holds (listening sockets, clients).
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    execve(argv[0], argv.data(), envp.data());
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

namespace {

struct ProcEntry {
  pid_t parent = 0;
  pid_t group = 0;
  std::vector<std::string> argv;
};

// /proc/PID/stat's parent and process group (after the command's closing parenthesis, which
// may itself hold spaces and parentheses) and /proc/PID/cmdline; nullopt once it has gone.
std::optional<ProcEntry> readProc(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  ProcEntry entry;
  if (!(rest >> state >> entry.parent >> entry.group)) return std::nullopt;
  std::ifstream cmdline("/proc/" + pid + "/cmdline", std::ios::binary);
  std::string arg;
  while (std::getline(cmdline, arg, '\0')) entry.argv.push_back(arg);
  return entry;
}

}  // namespace

int signalStepProcesses(pid_t batch_pid, const std::string& srun_path, int sig) {
  if (batch_pid <= 0) return 0;
  std::map<pid_t, ProcEntry> group;
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = dir.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name.front()))) continue;
    auto entry = readProc(name);
    if (entry && entry->group == batch_pid) group.emplace(std::stoi(name), std::move(*entry));
  }
  // The sruns (run as `srun …` or through their `#!` interpreter: `bash …/srun …`), then
  // everything below them.
  std::set<pid_t> sruns, steps;
  for (const auto& [pid, entry] : group) {
    const auto& a = entry.argv;
    if ((!a.empty() && a[0] == srun_path) || (a.size() > 1 && a[1] == srun_path)) {
      sruns.insert(pid);
    }
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, entry] : group) {
      if (sruns.count(pid) || steps.count(pid)) continue;
      if (!sruns.count(entry.parent) && !steps.count(entry.parent)) continue;
      if (steps.insert(pid).second) grew = true;
    }
  }
  int signalled = 0;
  for (pid_t pid : steps) {
    if (kill(pid, sig) == 0) ++signalled;
  }
  return signalled;
}

}  // namespace tuneplane::sim
