// Starting and stopping the batch step of a simulated job as a local process: fork/exec
// of the script in its own process group (so a cancel reaches every child), with the job's
// environment, working directory and output files. The one OS seam of the simulator's
// job execution; everything it needs is computed before fork.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tuneplane::sim {

struct LaunchSpec {
  std::string script_path;  // executable file (written by the caller)
  std::string first_line;   // the script's first line, from the text the caller wrote
  std::string cwd;
  std::vector<std::string> environment;  // "K=V", complete (nothing is inherited)
  std::string stdout_path;
  std::string stderr_path;  // same as stdout_path → one shared file
  std::string stdin_path = "/dev/null";
  bool append_output = false;  // open_mode APPEND; else truncated, as with JobFileAppend=0
  // SLURM_UMASK of the submitted environment: the step's umask, set before its output files
  // are created (mode 0666 under it: 0077 → 0600, as on 26.05.3); none → 0644 and the
  // simulator's own umask.
  std::optional<mode_t> umask;
};

// Forks and execs. If the child cannot chdir/open/exec it exits with errno as its
// status (exec of a script without "#!" → ENOEXEC = 8, as the real slurmstepd reports). A
// script with "#!" is run through that interpreter (see process.cc: never ETXTBSY).
Result<pid_t> launchBatchStep(const LaunchSpec& spec);

struct ProcessExit {
  bool signaled = false;
  int code = 0;  // exit status or signal number
};
// Non-blocking reap of `pid`; nullopt while it runs.
std::optional<ProcessExit> pollProcess(pid_t pid);
// Signals the whole process group of `pid` (the step and everything it started).
void signalProcessGroup(pid_t pid, int sig);
// Signals what the job's steps run — every process in the batch step's group (`batch_pid`)
// descended from an srun (the stand-in at `srun_path`) — and not the batch shell, what it
// started outside a step, nor the sruns themselves (they pass signals on to their tasks: a
// second copy). As slurmctld signals a job's steps for its kill-warning signal with no flags
// (the transcript 23_preemption: the step's processes got USR2, the batch shell did not).
// Returns how many processes it signalled. Reads /proc; processes started meanwhile may be
// missed, as with any signal sent to a moving tree.
int signalStepProcesses(pid_t batch_pid, const std::string& srun_path, int sig);

}  // namespace tuneplane::sim
