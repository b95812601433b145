// The Ray part of the batch script (GPU jobs): a per-attempt token made on the head node, the
// head on the first node of component 0, its address as the head reports it, workers on
// every other node of every component, a bounded wait until all nodes joined, then the
// framework command as the driver on the head node. No port is fixed unless the site pins
// it (catalog::RayConfig), so jobs that share a node stay apart. See script_parts.h.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/ray_programs.h"
#include "slurm/script_parts.h"
#include "slurm/script_renderer.h"

namespace tuneplane::slurm {
namespace {

using launch::Component;
using launch::LaunchRequest;

bool isPyxis(const LaunchRequest& request) {
  return request.container_runtime == catalog::ContainerRuntime::kPyxis;
}

// `--resources='{"<pool>": G}'`: built as JSON first, so any pool name stays one JSON
// string, then quoted as one shell word.
std::string resourcesWord(const Component& c) {
  nlohmann::json resources = nlohmann::json::object();
  resources[c.pool_name] = c.gpus_per_node;
  return "--resources=" + shellQuote(resources.dump());
}

// The logical CPUs a node advertises: what Slurm gave it, or what the framework's placement
// asks per GPU when that is more (LaunchRequest::ray_min_cpus_per_gpu). Ray schedules by this
// count; the processes stay within the CPUs Slurm gave the step.
long long rayNumCpus(const LaunchRequest& request, const Component& c) {
  return std::max<long long>(
      c.cpus_per_node, static_cast<long long>(request.ray_min_cpus_per_gpu) * c.gpus_per_node);
}

std::vector<std::string> rayResourceWords(const LaunchRequest& request, const Component& c) {
  return {"--num-cpus=" + std::to_string(rayNumCpus(request, c)),
          "--num-gpus=" + std::to_string(c.gpus_per_node), resourcesWord(c), "--block"};
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// The `ray start` options and launcher flags one node gets. A pinned port is passed as it
// is; an unpinned one is either left to Ray (node and object manager: Ray binds port 0),
// set to 0 (worker ports: without a range each worker binds port 0, while within a range
// Ray checks a port free and hands it on later, which two Rays on one node can race for),
// or named as a launcher flag, so that the launcher picks it free on the node (the ports
// whose Ray defaults are fixed).
struct NodeOptions {
  std::vector<std::string> ray;    // for `ray start`
  std::vector<std::string> flags;  // for the launcher
};

void portOption(NodeOptions& node, const char* flag, const std::optional<int>& pinned,
                bool pick_free) {
  if (pinned) {
    node.ray.push_back(std::string(flag) + "=" + std::to_string(*pinned));
  } else if (pick_free) {
    node.flags.emplace_back(flag);
  }
}

NodeOptions nodeOptions(const catalog::RayConfig& ray, bool head) {
  NodeOptions node;
  if (head) {
    node.ray.push_back("--port=" + (ray.port ? std::to_string(*ray.port) : std::string("0")));
    node.ray.push_back(std::string("--include-dashboard=") + (ray.dashboard ? "true" : "false"));
    portOption(node, "--dashboard-port", ray.dashboard_port, ray.dashboard);
  }
  portOption(node, "--node-manager-port", ray.node_manager_port, false);
  portOption(node, "--object-manager-port", ray.object_manager_port, false);
  node.ray.push_back("--min-worker-port=" + std::to_string(ray.min_worker_port.value_or(0)));
  node.ray.push_back("--max-worker-port=" + std::to_string(ray.max_worker_port.value_or(0)));
  if (head) portOption(node, "--ray-client-server-port", ray.ray_client_server_port, true);
  portOption(node, "--dashboard-agent-listen-port", ray.dashboard_agent_listen_port, true);
  return node;
}

// python3 -c "$tp_ray_node_program" ROLE FLAG... -- RAY start ARG... (see ray_programs.h).
std::vector<std::string> launcherCommand(const std::string& role, const NodeOptions& node,
                                         std::vector<std::string> ray_start) {
  std::vector<std::string> command = {"python3", "-c", "\"$tp_ray_node_program\"", role};
  append(command, node.flags);
  command.push_back("--");
  append(command, ray_start);
  return command;
}

// What tp_export_ray_env exports: every Ray step gets the cluster's token, which Ray
// enforces from 2.52 on (RAY_AUTH_MODE=token).
constexpr const char* kRayTokenEnv[] = {"RAY_AUTH_MODE", "RAY_AUTH_TOKEN"};

std::string renderRayEnvFunction(const LaunchRequest& request) {
  std::string out =
      "\n# The cluster's token, for each Ray step: exported only in the step's subshell.\n";
  out += "tp_export_ray_env() {\n";
  out += "  export " + containerEnvName(request, kRayTokenEnv[0]) + "=token\n";
  out += "  export " + containerEnvName(request, kRayTokenEnv[1]) + "=\"$tp_ray_token\"\n";
  return out + "}\n";
}

// The text below exits 69 in two places.
static_assert(kExitRayHeadFailed == 69);
constexpr const char* kTokenAndRunDir = R"(
# Only this job's steps know the cluster's token, made here at run time and passed on in the
# steps' environment (never in an argument, a file or the log): Ray 2.52 and later refuse a
# node or a driver without it (RAY_AUTH_MODE=token). The head's address comes back through a
# node-local private directory.
tp_ray_token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n') || true
if [[ ${#tp_ray_token} -ne 32 ]]; then
  echo "tuneplane: could not read 16 random bytes for the Ray cluster's token" >&2
  exit 69
fi
tp_ray_run_dir=$(mktemp -d) || {
  echo "tuneplane: could not make a private directory for the Ray head's address" >&2
  exit 69
}

# Background steps (head, workers; in tp_background_pids) are stopped when this script ends,
# however it ends (the EXIT trap of the prologue calls tp_stop_background). Their tasks are
# asked first, with SIGUSR1 that srun passes on, and awaited (at most 30 s): a signal that ends
# the srun of a het job's first component makes Slurm cancel the whole het job, so the attempt
# would read as cancelled, not as ended with its own exit code. Cancelled already, or stopped
# by the job's fence (which has stopped them itself): no waiting.
tp_stop_background() {
  local pid tries=0
  if [[ $tp_killed == 0 && $tp_fenced == 0 ]]; then
    for pid in "${tp_background_pids[@]}"; do
      kill -USR1 "$pid" 2>/dev/null || true
    done
    for pid in "${tp_background_pids[@]}"; do
      while kill -0 "$pid" 2>/dev/null && ((tries < 150)); do
        sleep 0.2
        tries=$((tries + 1))
      done
    done
  fi
  for pid in "${tp_background_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  rm -rf -- "$tp_ray_run_dir"
}
)";

constexpr const char* kReadHeadAddress = R"(
# The head's address, as its launcher printed it once Ray had started. A step that ends
# without one stops the wait at once.
tp_ray_address=""
tp_read_head_address() {
  local line=""
  { IFS= read -r line <"$tp_ray_run_dir/head-address"; } 2>/dev/null || return 1
  [[ $line =~ ^[^[:space:]]+:[0-9]+$ ]] || return 1
  tp_ray_address=$line
}
)";

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
  const std::string timeout = std::to_string(ray.join_timeout_seconds);

  out += "\n# Ray across all " + std::to_string(total_nodes) + " nodes";
  out += het ? " of " + std::to_string(comps.size()) + " components.\n" : ".\n";
  out += "# Counts are rendered as numbers: REST jobs get no SLURM_CPUS_PER_TASK or\n";
  out += "# SLURM_GPUS_PER_NODE.\n";
  if (request.ray_min_cpus_per_gpu > 0) {
    out += "# Each node advertises at least " + std::to_string(request.ray_min_cpus_per_gpu) +
           " logical CPUs per GPU to Ray (--num-cpus): the framework's\n"
           "# placement group asks that many per GPU and waits until it fits.\n";
  }
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
  out += kTokenAndRunDir;
  out += renderRayEnvFunction(request);
  out += "\n# Starts Ray on one node: python3 -c PROGRAM head|worker [FLAG...] -- RAY ARG...\n";
  out += "# Each FLAG gets a port found free on that node just before Ray starts; the head\n";
  out += "# prints its address once Ray has written it into its own temporary directory.\n";
  out += "tp_ray_node_program=" + shellQuote(kRayNodeProgram) + "\n";

  const std::string ray_exe = shellQuote(ray.executable);
  const Component& c0 = comps.front();
  {
    Step head;
    head.srun_options = group(0);
    append(head.srun_options,
           {"--nodes=1", "--ntasks=1", "--cpus-per-task=" + std::to_string(c0.cpus_per_node),
            "--nodelist=\"$tp_head_node\""});
    const NodeOptions node = nodeOptions(ray, /*head=*/true);
    std::vector<std::string> start = {ray_exe, "start", "--head",
                                      "--node-ip-address=\"$tp_head_ip\""};
    append(start, node.ray);
    append(start, rayResourceWords(request, c0));
    head.command = launcherCommand("head", node, start);
    head.with_ray_token = true;
    out += "\n# Head: first node of component 0 (" + commentSafe(c0.pool_name) + ").";
    out += ray.pinsPorts() ? " The site pins Ray's ports, so this\n# job has its nodes to itself"
                             " (--exclusive).\n"
                           : " Its GCS port is Ray's free choice\n# (--port=0).\n";
    out += renderStep(request, head) + " >\"$tp_ray_run_dir/head-address\" &\n";
    out += "tp_head_pid=$!\n";
    out += "tp_background_pids+=(\"$tp_head_pid\")\n";
  }
  out += kReadHeadAddress;
  out += "tp_head_deadline=$((SECONDS + " + timeout + "))\n";
  out += "until tp_read_head_address; do\n";
  out += "  if ! kill -0 \"$tp_head_pid\" 2>/dev/null; then\n";
  out += "    tp_read_head_address && break\n";
  out += "    echo \"tuneplane: the Ray head stopped before it reported its address\" >&2\n";
  out += "    exit " + std::to_string(kExitRayHeadFailed) + "\n";
  out += "  fi\n";
  out += "  if ((SECONDS >= tp_head_deadline)); then\n";
  out += "    echo \"tuneplane: the Ray head reported no address within " + timeout + " s\" >&2\n";
  out += "    exit " + std::to_string(kExitRayHeadFailed) + "\n";
  out += "  fi\n";
  out += "  sleep 1\n";
  out += "done\n";
  out += "echo \"tuneplane: the Ray head is up at $tp_ray_address\"\n";

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
    const NodeOptions node = nodeOptions(ray, /*head=*/false);
    std::vector<std::string> start = {ray_exe, "start", "--address=\"$tp_ray_address\""};
    append(start, node.ray);
    append(start, rayResourceWords(request, c));
    worker.command = launcherCommand("worker", node, start);
    worker.with_ray_token = true;
    out += "\n# Workers: " + k + " node(s) of component " + std::to_string(i) + " (" +
           commentSafe(c.pool_name) + ").\n";
    out += renderStep(request, worker) + " &\n";
    out += "tp_background_pids+=(\"$!\")\n";
  }

  const std::string total = std::to_string(total_nodes);
  out +=
      "\n# Polls the head until N nodes are alive, at most TIMEOUT s: python3 -c PROGRAM ADDRESS\n";
  out += "# N TIMEOUT.\n";
  out += "tp_wait_program=" + shellQuote(kRayWaitProgram) + "\n";
  out += "\n# Wait until all " + total + " nodes joined.\n";
  {
    Step wait;
    wait.srun_options = {"--overlap"};
    append(wait.srun_options, group(0));
    append(wait.srun_options, {"--nodes=1", "--ntasks=1", "--nodelist=\"$tp_head_node\""});
    wait.command = {"python3", "-c", "\"$tp_wait_program\"", "\"$tp_ray_address\"", total, timeout};
    wait.with_ray_token = true;
    out += renderStep(request, wait) + " &\n";
    out += "if ! tp_wait_step \"$!\"; then\n";
    out += "  echo \"tuneplane: the Ray cluster at $tp_ray_address did not reach " + total +
           " nodes within " + timeout + " s\" >&2\n";
    out += "  exit " + std::to_string(kExitRayJoinTimeout) + "\n";
    out += "fi\n";
  }

  Step driver;
  driver.srun_options = {"--overlap"};
  append(driver.srun_options, group(0));
  append(driver.srun_options,
         {"--nodes=1", "--ntasks=1", "--cpus-per-task=" + std::to_string(c0.cpus_per_node),
          "--nodelist=\"$tp_head_node\""});
  for (const auto& arg : request.command) driver.command.push_back(shellQuote(arg));
  driver.with_ray_token = true;
  driver.with_ray_address = true;
  renderBeforeCommand(out, request);
  renderResumeRecord(out, request);
  out += "\n# The driver: the framework command on the head node, given the head's address\n";
  out += "# explicitly (each pyxis step has its own /tmp). Its exit code is the job's.\n";
  out += "tp_driver_status=0\n";
  out += renderStep(request, driver) + " &\n";
  out += "tp_wait_step \"$!\" || tp_driver_status=$?\n";
  out += "exit \"$tp_driver_status\"\n";
}

std::string containerEnvName(const LaunchRequest& request, const std::string& name) {
  return isPyxis(request) ? name : "APPTAINERENV_" + name;
}

std::string renderStep(const LaunchRequest& request, const Step& step) {
  std::string out = "(\n  tp_export_job_env\n";
  if (step.with_ray_token) out += "  tp_export_ray_env\n";
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
    if (step.with_ray_token) {
      for (const char* name : kRayTokenEnv) add(name);
    }
    if (step.with_ray_address) add("RAY_ADDRESS");
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
    out += "    \"${tp_container[@]}\"";
    if (!list.empty()) out += " --container-env=" + shellQuote(list);
    out += " \\\n    --";
  } else {
    out += "    -- \"${tp_container[@]}\" \\\n   ";
  }
  if (request.preemption_warning) out += " \"${tp_step_start[@]}\"";
  for (const auto& word : step.command) out += " " + word;
  out += "\n)";
  return out;
}

}  // namespace tuneplane::slurm
