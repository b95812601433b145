// The FIFO scheduler and the start of batch steps (part of SimulatorImpl's engine).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "sim/batch_env.h"
#include "sim/job_record.h"
#include "sim/process.h"
#include "sim/scheduler.h"
#include "sim/simulator_impl.h"
#include "sim/standins.h"

namespace tuneplane::sim {

namespace fs = std::filesystem;

void SimulatorImpl::spoilClaimLocked(const std::string& stdout_path) {
  const fs::path dir = fs::path(stdout_path).parent_path();
  if (dir.empty()) return;
  const fs::path claim = dir / "claim";
  std::error_code ec;
  if (claims_as_links_) {
    fs::create_symlink(dir / ".no-such-dir" / "claim", claim, ec);
  } else {
    fs::create_directory(claim, ec);
  }
}

void SimulatorImpl::scheduleLocked() {
  if (scheduling_paused_) return;
  ClusterUsage usage;
  for (const auto& [id, job] : jobs_) {
    if (!job.resources_held) continue;
    addUsage(usage, Allocation{job.alloc_nodes, job.alloc_cpus_per_node, job.alloc_mem_per_node,
                               job.alloc_gpus_per_node});
  }
  // Every pending job in submit order gets a try (a FIFO with backfill of whatever fits):
  // a job that does not fit holds nothing back. It waits with reason Resources when it is
  // the first of its partition that does not fit, else Priority (a job ahead of it waits
  // too), as slurmctld says; its start_time is the backfill scheduler's estimate.
  std::set<std::string> blocked_partitions;
  std::vector<std::vector<Job*>> waiting;
  for (auto& [id, job] : jobs_) {
    if (job.base_state != "PENDING" || job.request.hold || job.completing) continue;
    if (job.reason == "PartitionConfig") continue;     // can never start as asked
    if (!job.stuck_reason.empty()) continue;           // neverStart
    if (steadyNow() < job.begin_after) continue;       // requeued: BeginTime
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
      bool behind = false;
      for (Job* c : comps) behind = behind || blocked_partitions.count(c->request.partition) > 0;
      const char* reason = behind ? "Priority" : "Resources";
      for (Job* c : comps) {
        blocked_partitions.insert(c->request.partition);
        if (c->reason != reason) {
          c->reason = reason;
          touchLocked(*c);
        }
      }
      waiting.push_back(std::move(comps));
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
  estimateStartsLocked(waiting);
}

void SimulatorImpl::estimateStartsLocked(const std::vector<std::vector<Job*>>& waiting) {
  if (waiting.empty()) return;
  std::vector<HeldAllocation> held;
  for (const auto& [id, job] : jobs_) {
    if (!job.resources_held) continue;
    held.push_back({Allocation{job.alloc_nodes, job.alloc_cpus_per_node, job.alloc_mem_per_node,
                               job.alloc_gpus_per_node},
                    job.end_time});
  }
  const int64_t now = nowUnix();
  // In submit order (the sim's priority), each estimate reserves what the job would take
  // until its time limit, as the backfill scheduler plans: a job behind it starts later.
  for (const std::vector<Job*>& comps : waiting) {
    std::vector<const JobRequest*> requests;
    for (const Job* c : comps) requests.push_back(&c->request);
    const StartEstimate estimate = estimateStart(requests, cluster_, held, now);
    for (std::size_t i = 0; i < comps.size(); ++i) {
      Job* c = comps[i];
      // Like slurmctld's backfill, an estimate only moves later (a job that starts early
      // does so by starting); none at all until the jobs ahead have ends.
      if (estimate.start > c->start_time) {
        c->start_time = estimate.start;
        touchLocked(*c);
      }
      if (estimate.start > 0) {
        const auto limit = c->request.time_limit_min;
        held.push_back({estimate.allocations[i], limit ? estimate.start + *limit * 60 : 0});
      }
    }
  }
}

bool SimulatorImpl::startLocked(std::vector<Job*> comps) {
  Job& lead = *comps.front();
  const int64_t now = nowUnix();
  if (lead.history < history_.size()) {
    ++history_[lead.history].starts;
    history_[lead.history].runs.push_back(
        {{"restart_cnt", lead.restart_count}, {"start_us", unixMicros()}});
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
  fs::remove(job_dir + "/" + kHetCancelMark, ec);  // a requeued run starts unmarked
  {
    std::ofstream out(script, std::ios::binary | std::ios::trunc);
    out << lead.request.script;
  }
  chmod(script.c_str(), 0700);
  if (uncreatable_claims_ > 0) {
    --uncreatable_claims_;
    spoilClaimLocked(lead.stdout_expanded);
  }
  std::vector<const Job*> view(comps.begin(), comps.end());
  LaunchSpec spec;
  spec.script_path = script;
  spec.first_line = lead.request.script.substr(0, lead.request.script.find('\n'));
  spec.cwd = lead.request.cwd;
  spec.environment =
      batchEnvironment(view, cluster_.name, bin_dir_, job_dir, release().sluid_in_batch_env);
  spec.stdout_path = lead.stdout_expanded;
  spec.stderr_path = lead.stderr_expanded;
  spec.append_output = lead.request.append_output;
  spec.umask = submittedUmask(lead.request.environment);
  if (!lead.request.standard_input.empty()) spec.stdin_path = lead.request.standard_input;
  auto pid = launchBatchStep(spec);
  if (!pid) {
    finishProcessLocked(lead, false, 1);
    return false;
  }
  lead.pid = *pid;
  if (lead.request.time_limit_min) {
    lead.deadline = steadyNow() + options_.minute * *lead.request.time_limit_min;
  }
  return true;
}

}  // namespace tuneplane::sim
