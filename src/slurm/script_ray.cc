// The Ray part of the batch script (GPU jobs): the head on the first node of component 0,
// workers on every other node of every component, a bounded wait until all nodes joined,
// then the framework command as the driver on the head node. See script_parts.h.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/script_parts.h"
#include "slurm/script_renderer.h"

namespace tuneplane::slurm {
namespace {

using launch::Component;
using launch::LaunchRequest;

bool isPyxis(const LaunchRequest& request) {
  return request.container_runtime == catalog::ContainerRuntime::kPyxis;
}

// Polls the head until `want` nodes are alive or the deadline passes. ray.init() fails
// while the head is still starting, so connection errors are retried too.
constexpr const char* kWaitProgram = R"(import sys, time
import ray
address, want, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
deadline = time.monotonic() + timeout
alive = 0
while True:
    try:
        if not ray.is_initialized():
            ray.init(address=address, logging_level="ERROR")
        alive = sum(1 for node in ray.nodes() if node["Alive"])
    except Exception as error:
        print("tuneplane: waiting for Ray at", address, "-", error, file=sys.stderr)
    if alive >= want:
        sys.exit(0)
    if time.monotonic() >= deadline:
        print("tuneplane:", alive, "of", want, "Ray nodes joined", address, "in", timeout, "s",
              file=sys.stderr)
        sys.exit(1)
    time.sleep(2)
)";

// `--resources='{"<pool>": G}'`: built as JSON first, so any pool name stays one JSON
// string, then quoted as one shell word.
std::string resourcesWord(const Component& c) {
  nlohmann::json resources = nlohmann::json::object();
  resources[c.pool_name] = c.gpus_per_node;
  return "--resources=" + shellQuote(resources.dump());
}

std::vector<std::string> portWords(const catalog::RayConfig& ray) {
  return {"--node-manager-port=" + std::to_string(ray.node_manager_port),
          "--object-manager-port=" + std::to_string(ray.object_manager_port),
          "--min-worker-port=" + std::to_string(ray.min_worker_port),
          "--max-worker-port=" + std::to_string(ray.max_worker_port)};
}

std::vector<std::string> rayResourceWords(const Component& c) {
  return {"--num-cpus=" + std::to_string(c.cpus_per_node),
          "--num-gpus=" + std::to_string(c.gpus_per_node), resourcesWord(c), "--block"};
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

void renderRayJob(std::string& out, const LaunchRequest& request) {
  const auto& comps = request.components;
  const bool het = comps.size() > 1;
  const catalog::RayConfig& ray = request.ray;
  // --het-group only when there is more than one component.
  const auto group = [het](std::size_t i) {
    return het ? std::vector<std::string>{"--het-group=" + std::to_string(i)}
               : std::vector<std::string>{};
  };
  int total_nodes = 0;
  for (const Component& c : comps) total_nodes += c.nodes;

  out += "\n# Ray across all " + std::to_string(total_nodes) + " nodes";
  out += het ? " of " + std::to_string(comps.size()) + " components.\n" : ".\n";
  out += "# Counts are rendered as numbers: REST jobs get no SLURM_CPUS_PER_TASK or\n";
  out += "# SLURM_GPUS_PER_NODE.\n";
  out += std::string("tp_head_nodes=$(scontrol show hostnames \"$") +
         (het ? "SLURM_JOB_NODELIST_HET_GROUP_0" : "SLURM_JOB_NODELIST") + "\")\n";
  out += "tp_head_node=${tp_head_nodes%%$'\\n'*}\n";
  out += R"(
# The head's IP address, as the other nodes reach it. Not `hostname --ip-address`: on
# Debian that is 127.0.1.1 from /etc/hosts. The head node's name is resolved the way the
# cluster resolves it, loopback skipped; else the first address `hostname -I` lists.
# (This script runs on the head node: the first node of component 0.)
tp_head_ip=$(getent ahostsv4 "$tp_head_node" | awk '$1 !~ /^127\./ { print $1; exit }') || true
if [[ -z $tp_head_ip ]]; then
  tp_head_ip=$(hostname -I | awk '{ print $1 }') || true
fi
if [[ -z $tp_head_ip ]]; then
  echo "tuneplane: no IP address found for the Ray head node $tp_head_node" >&2
  exit 68
fi
)";
  out += "tp_ray_address=\"$tp_head_ip:" + std::to_string(ray.port) + "\"\n";
  out += R"(
# Background steps (head, workers) are stopped when this script ends, however it ends
# (the EXIT trap of the prologue calls tp_stop_background).
tp_background_pids=()
tp_stop_background() {
  local pid
  for pid in "${tp_background_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
}
)";

  const std::string ray_exe = shellQuote(ray.executable);
  const Component& c0 = comps.front();
  {
    Step head;
    head.srun_options = group(0);
    append(head.srun_options,
           {"--nodes=1", "--ntasks=1", "--cpus-per-task=" + std::to_string(c0.cpus_per_node),
            "--nodelist=\"$tp_head_node\""});
    head.command = {ray_exe,
                    "start",
                    "--head",
                    "--node-ip-address=\"$tp_head_ip\"",
                    "--port=" + std::to_string(ray.port),
                    "--dashboard-port=" + std::to_string(ray.dashboard_port)};
    append(head.command, portWords(ray));
    append(head.command, rayResourceWords(c0));
    out += "\n# Head: first node of component 0 (" + commentSafe(c0.pool_name) + ").\n";
    out += renderStep(request, head) + " &\n";
    out += "tp_background_pids+=(\"$!\")\n";
  }
  // A bounded wait on the head node until `want` Ray nodes are alive.
  const std::string timeout = std::to_string(ray.join_timeout_seconds);
  const auto renderWait = [&](int want, const std::string& what) {
    Step wait;
    wait.srun_options = {"--overlap"};
    append(wait.srun_options, group(0));
    append(wait.srun_options, {"--nodes=1", "--ntasks=1", "--nodelist=\"$tp_head_node\""});
    wait.command = {
        "python3", "-c", "\"$tp_wait_program\"", "\"$tp_ray_address\"", std::to_string(want),
        timeout};
    out += "if ! " + renderStep(request, wait) + "; then\n";
    out += "  echo \"tuneplane: " + what + " did not join Ray at $tp_ray_address within " +
           timeout + " s\" >&2\n";
    out += "  exit " + std::to_string(kExitRayJoinTimeout) + "\n";
    out += "fi\n";
  };
  out +=
      "\n# Polls the head until N nodes are alive, at most TIMEOUT s: python3 -c PROGRAM ADDRESS\n";
  out += "# N TIMEOUT. Workers start only once the head answers, so none gives up early.\n";
  out += "tp_wait_program=" + shellQuote(kWaitProgram) + "\n";
  out += "\n# Wait for the head.\n";
  renderWait(1, "the head");

  for (std::size_t i = 0; i < comps.size(); ++i) {
    const Component& c = comps[i];
    const int workers = i == 0 ? c.nodes - 1 : c.nodes;
    if (workers <= 0) continue;
    Step worker;
    worker.srun_options = group(i);
    const std::string k = std::to_string(workers);
    append(worker.srun_options, {"--nodes=" + k, "--ntasks=" + k, "--ntasks-per-node=1",
                                 "--cpus-per-task=" + std::to_string(c.cpus_per_node)});
    if (i == 0) worker.srun_options.push_back("--exclude=\"$tp_head_node\"");
    worker.command = {ray_exe, "start", "--address=\"$tp_ray_address\""};
    append(worker.command, portWords(ray));
    append(worker.command, rayResourceWords(c));
    out += "\n# Workers: " + k + " node(s) of component " + std::to_string(i) + " (" +
           commentSafe(c.pool_name) + ").\n";
    out += renderStep(request, worker) + " &\n";
    out += "tp_background_pids+=(\"$!\")\n";
  }

  const std::string total = std::to_string(total_nodes);
  out += "\n# Wait until all " + total + " nodes joined.\n";
  renderWait(total_nodes, "not all " + total + " nodes");

  Step driver;
  driver.srun_options = {"--overlap"};
  append(driver.srun_options, group(0));
  append(driver.srun_options,
         {"--nodes=1", "--ntasks=1", "--cpus-per-task=" + std::to_string(c0.cpus_per_node),
          "--nodelist=\"$tp_head_node\""});
  for (const auto& arg : request.command) driver.command.push_back(shellQuote(arg));
  driver.with_ray_address = true;
  out += "\n# The driver: the framework command on the head node, given the head's address\n";
  out += "# explicitly (each pyxis step has its own /tmp). Its exit code is the job's.\n";
  out += "tp_driver_status=0\n";
  out += renderStep(request, driver) + " || tp_driver_status=$?\n";
  out += "exit \"$tp_driver_status\"\n";
}

std::string containerEnvName(const LaunchRequest& request, const std::string& name) {
  return isPyxis(request) ? name : "APPTAINERENV_" + name;
}

std::string renderStep(const LaunchRequest& request, const Step& step) {
  std::string out = "(\n  tp_export_job_env\n";
  if (step.with_ray_address) {
    out += "  export " + containerEnvName(request, "RAY_ADDRESS") + "=\"$tp_ray_address\"\n";
  }
  out += "  exec \"$tp_srun\"";
  for (const auto& option : step.srun_options) out += " " + option;
  out += " \\\n";
  if (isPyxis(request)) {
    std::vector<std::string> names;
    const auto add = [&names](const std::string& name) {
      for (const auto& n : names) {
        if (n == name) return;
      }
      names.push_back(name);
    };
    for (const auto& entry : request.environment) add(entry.first);
    if (step.with_ray_address) add("RAY_ADDRESS");
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
    out += "    \"${tp_container[@]}\"";
    if (!list.empty()) out += " --container-env=" + shellQuote(list);
    out += " \\\n    --";
  } else {
    out += "    -- \"${tp_container[@]}\" \\\n   ";
  }
  for (const auto& word : step.command) out += " " + word;
  out += "\n)";
  return out;
}

}  // namespace tuneplane::slurm
