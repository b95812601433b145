// Pieces of the batch script shared by script_renderer.cc and script_ray.cc: one srun step
// that runs a command in the job's container, and the Ray bring-up. Internal to the
// renderer; every string handed in here is already a rendered shell word.
#pragma once

#include <string>
#include <vector>

#include "launch/launch_request.h"

namespace tuneplane::slurm {

// One `srun` step running a command inside the container, in a subshell that first exports
// the job's environment (see tp_export_job_env in the script).
struct Step {
  std::vector<std::string> srun_options;  // rendered words, e.g. --nodes=1
  std::vector<std::string> command;       // rendered words run inside the container
  bool with_ray_token = false;            // also run tp_export_ray_env (the cluster's token)
  bool with_ray_address = false;          // also set RAY_ADDRESS=$tp_ray_address inside
};

// The subshell "( … exec srun … )", without a trailing newline so callers can append
// " &" or "|| …".
std::string renderStep(const launch::LaunchRequest& request, const Step& step);

// The variable exported for job variable `name`: NAME (Pyxis) or APPTAINERENV_NAME.
std::string containerEnvName(const launch::LaunchRequest& request, const std::string& name);

// The Ray token, the head, its address, the workers, the wait for all nodes, the driver.
// REQUIRES: checkRenderable passed and request.uses_gpus.
void renderRayJob(std::string& out, const launch::LaunchRequest& request);

// The job's fence (staging/job_fence.h, script_renderer.h): its settings and reader, and the
// check at the start, which exits 73 or 72 before anything runs. Nothing for a request without
// a fence_dir. Goes before the sentinels' traps.
void renderFenceCheck(std::string& out, const launch::LaunchRequest& request);

// The fence while the attempt runs: the watcher and what stops the steps, the hand-off's wait
// of an attempt after the first, and tp_before_command. Goes after the sentinels' traps.
void renderFenceWatch(std::string& out, const launch::LaunchRequest& request);

// The call of tp_before_command (the hand-off's wait, then the fence once more), just before
// the step that runs the command; nothing for a request without a fence_dir.
void renderBeforeCommand(std::string& out, const launch::LaunchRequest& request);

// logs/resume.json (resume_record.h), for a request whose resume_record is not kNone; nothing
// otherwise. Uses the sentinels' $tp_logs_dir. REQUIRES: checkRenderable passed.
void renderResumeRecord(std::string& out, const launch::LaunchRequest& request);

}  // namespace tuneplane::slurm
