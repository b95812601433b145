// What a LaunchRequest must satisfy before it can be rendered into a batch script and a
// submit body. Most of it the assembler already guarantees; these are the limits of the
// rendering itself (shell, Pyxis/Apptainer bind syntax, Slurm output paths), checked again
// here so that the renderer stays safe on its own. Pure.
#pragma once

#include "common/result.h"
#include "launch/launch_request.h"

namespace tuneplane::slurm {

// Every problem found, each with a field path and a stable code ("render.*"):
// - at least one component, at most 128 (slurmrestd's het-job limit);
// - CPU-only requests (uses_gpus false): exactly one component with one node, no GPUs;
//   GPU requests: every component has gpus_per_node > 0 and nodes ≥ 1;
// - every string valid UTF-8 (the JSON body carries the script), without NUL bytes (bash
//   cannot hold one); any other byte is fine, the renderer quotes it;
// - environment names match [A-Za-z_][A-Za-z0-9_]* (they are rendered unquoted after
//   `export`) and do not start with "tp_" (the script's own variables);
// - artifact path absolute (Pyxis reads a squashfs only from a value starting with '/'),
//   sha256 is 64 lower-case hex digits;
// - mount sources/targets, container dirs: absolute, and neither ',' nor ':' (both Pyxis's
//   --container-mounts and Apptainer's --bind split on them);
// - pool names non-empty, not "." or "..", no '/' (they name the log files); logs_dir and
//   pool names without '\' (Slurm reads it as an escape in output paths);
// - Ray: pinned ports within 1-65535, the worker range as a pair with its top above its
//   bottom, a dashboard port only with the dashboard, join_timeout_seconds at least 1,
//   ray_min_cpus_per_gpu within 0-1024;
// - the checkpoint directory: both paths set or neither, each as a mount path above; a
//   resume record only with one; staged inputs named plainly ([A-Za-z0-9._-], no leading '.').
Checked<void> checkRenderable(const launch::LaunchRequest& request);

}  // namespace tuneplane::slurm
