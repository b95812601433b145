// The FIFO scheduler and the start of batch steps (part of SimulatorImpl's engine).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "sim/batch_env.h"
#include "sim/job_record.h"
#include "sim/process.h"
#include "sim/scheduler.h"
#include "sim/simulator_impl.h"

namespace tuneplane::sim {

namespace fs = std::filesystem;

void SimulatorImpl::scheduleLocked() {
  if (scheduling_paused_) return;
  ClusterUsage usage;
  for (const auto& [id, job] : jobs_) {
    if (!job.resources_held) continue;
    addUsage(usage, Allocation{job.alloc_nodes, job.alloc_cpus_per_node, job.alloc_mem_per_node,
                               job.alloc_gpus_per_node});
  }
  // Every pending job in submit order gets a try (a FIFO with backfill of whatever fits):
  // a job that does not fit waits with reason Resources and holds nothing back.
  for (auto& [id, job] : jobs_) {
    if (job.base_state != "PENDING" || job.request.hold || job.completing) continue;
    if (job.reason == "PartitionConfig") continue;     // can never start as asked
    if (!job.stuck_reason.empty()) continue;           // neverStart
    if (Clock::now() < job.begin_after) continue;      // requeued: BeginTime
    if (job.isHet() && job.het_offset != 0) continue;  // started with its leader
    std::vector<Job*> comps = componentsLocked(job);
    ClusterUsage trial = usage;
    std::vector<Allocation> allocs;
    for (Job* c : comps) {
      auto a = allocate(c->request, cluster_, trial);
      if (!a) break;
      addUsage(trial, *a);
      allocs.push_back(*a);
    }
    if (allocs.size() != comps.size()) {
      for (Job* c : comps) {
        if (c->reason != "Resources") {
          c->reason = "Resources";
          touchLocked(*c);
        }
      }
      continue;
    }
    for (size_t i = 0; i < comps.size(); ++i) {
      Job& c = *comps[i];
      c.alloc_nodes = allocs[i].nodes;
      c.alloc_cpus_per_node = allocs[i].cpus_per_node;
      c.alloc_mem_per_node = allocs[i].memory_per_node_mb;
      c.alloc_gpus_per_node = allocs[i].gpus_per_node;
      c.resources_held = true;
    }
    usage = trial;
    startLocked(comps);
  }
}

bool SimulatorImpl::startLocked(std::vector<Job*> comps) {
  Job& lead = *comps.front();
  const int64_t now = nowUnix();
  if (lead.history < history_.size()) {
    ++history_[lead.history].starts;
    history_[lead.history].runs.push_back({{"restart_cnt", lead.restart_count}});
  }
  for (Job* c : comps) {
    c->base_state = "RUNNING";
    c->reason = "None";
    c->start_time = now;
    c->end_time = c->request.time_limit_min ? now + *c->request.time_limit_min * 60 : 0;
    c->stdout_expanded = expandOutputPattern(c->request.standard_output, *c, c->alloc_nodes[0]);
    c->stderr_expanded = expandOutputPattern(
        c->request.standard_error.empty() ? c->request.standard_output : c->request.standard_error,
        *c, c->alloc_nodes[0]);
    touchLocked(*c);
  }
  const std::string job_dir = state_dir_ + "/jobs/" + std::to_string(lead.id);
  std::error_code ec;
  fs::create_directories(job_dir, ec);
  const std::string script = job_dir + "/script";
  {
    std::ofstream out(script, std::ios::binary | std::ios::trunc);
    out << lead.request.script;
  }
  chmod(script.c_str(), 0700);
  std::vector<const Job*> view(comps.begin(), comps.end());
  LaunchSpec spec;
  spec.script_path = script;
  spec.cwd = lead.request.cwd;
  spec.environment =
      batchEnvironment(view, cluster_.name, bin_dir_, job_dir, release().sluid_in_batch_env);
  spec.stdout_path = lead.stdout_expanded;
  spec.stderr_path = lead.stderr_expanded;
  spec.append_output = lead.request.append_output;
  if (!lead.request.standard_input.empty()) spec.stdin_path = lead.request.standard_input;
  auto pid = launchBatchStep(spec);
  if (!pid) {
    finishProcessLocked(lead, false, 1);
    return false;
  }
  lead.pid = *pid;
  if (lead.request.time_limit_min) {
    lead.deadline = Clock::now() + options_.minute * *lead.request.time_limit_min;
  }
  return true;
}

}  // namespace tuneplane::sim
