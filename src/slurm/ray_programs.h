// The two small Python programs the batch script runs inside the container for a Ray (GPU)
// job, kept as text: the node launcher, which starts `ray start` on one node, and the wait,
// which polls the head until enough nodes are alive. Both need only python3 (the wait also
// Ray's own package, as the driver does); both are rendered once into the script as
// single-quoted shell words and passed with `python3 -c`. Constants; thread-safe.
#pragma once

namespace tuneplane::slurm {

// python3 -c PROGRAM head|worker [FLAG...] -- RAY-EXECUTABLE ARG...
// Starts RAY-EXECUTABLE ARG... and waits for it, passing SIGTERM/SIGINT on and exiting with
// its code (127 when it cannot be run). Each FLAG (e.g. --dashboard-agent-listen-port) is
// appended as FLAG=PORT with a port found free on this node just before Ray starts (the
// ports of one start all differ): the ports whose Ray defaults are fixed, so two Rays on
// one node would collide on them. Such a port can still be taken before Ray binds it, so a
// head that exits non-zero before it reports its address, unasked, is started again with
// other ports, at most three starts in all (said on stderr each time).
// --ray-client-server-port is skipped when grpc is missing (Ray then starts no client
// server and refuses the flag). Ray's own output goes to stderr. The head role also gives
// Ray a fresh temporary directory (--temp-dir) and, once Ray has written the cluster's
// address there (ray_current_cluster, after the head has started), prints that address as
// the only line on stdout. The directory is removed when Ray exits.
extern const char* const kRayNodeProgram;

// python3 -c PROGRAM ADDRESS N TIMEOUT: exits 0 once N Ray nodes are alive at ADDRESS, 1 when
// TIMEOUT seconds pass first. Connection errors (head still starting) are retried.
extern const char* const kRayWaitProgram;

}  // namespace tuneplane::slurm
