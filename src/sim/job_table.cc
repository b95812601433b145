// The simulator's engine: the job table and its state machine — ids, lookups by id or SLUID,
// a het job's components, submit, the ticker (process exits, time limits, epilogs, purges
// after MinJobAge), the end of a requeue, cancel and kills. Scheduling and starting a job are
// job_launch.cc's. REQUIRES: mu_ held for every *Locked function (simulator_impl.h).
#include <signal.h>

#include <filesystem>

#include "sim/process.h"
#include "sim/simulator_impl.h"
#include "sim/standins.h"

namespace tuneplane::sim {

namespace fs = std::filesystem;

uint32_t SimulatorImpl::nextIdLocked() {
  while (jobs_.count(next_id_)) ++next_id_;
  return next_id_++;
}

void SimulatorImpl::touchLocked(Job& job) {
  job.last_change = nowUnix();
  last_update_ = std::max(last_update_, job.last_change);
  if (options_.accounting) slurmdb_.observe(job);  // every change reaches slurmdbd's record
}

Job* SimulatorImpl::findLocked(const std::string& id) {
  if (looksLikeSluid(id)) {
    const auto sluid = parseSluid(id);
    if (!sluid) return nullptr;
    for (auto& [n, job] : jobs_)
      if (job.sluid == *sluid) return &job;
    return nullptr;
  }
  try {
    const auto it = jobs_.find(static_cast<uint32_t>(std::stoul(id)));
    return it == jobs_.end() ? nullptr : &it->second;
  } catch (...) {
    return nullptr;
  }
}

Job& SimulatorImpl::leaderLocked(Job& any) {
  if (!any.isHet()) return any;
  const auto leader = jobs_.find(any.het_job_id);
  return leader == jobs_.end() ? any : leader->second;
}

std::vector<Job*> SimulatorImpl::componentsLocked(Job& any) {
  if (!any.isHet()) return {&any};
  std::vector<Job*> out;
  const auto leader = jobs_.find(any.het_job_id);
  if (leader == jobs_.end()) return {&any};
  for (uint32_t id : leader->second.het_members)
    if (auto it = jobs_.find(id); it != jobs_.end()) out.push_back(&it->second);
  return out;
}

nlohmann::json SimulatorImpl::submitLocked(const SubmitPlan& plan, const UnixUser& user,
                                           uint32_t* leader_id) {
  const int64_t now = nowUnix();
  const int64_t now_ms = nowUnixMs();
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < plan.components.size(); ++i) {
    const uint32_t id = nextIdLocked();
    ids.push_back(id);
    Job job;
    job.id = id;
    job.sluid = sluids_.next(now_ms);
    job.request = plan.components[i];
    job.user = user.name;
    job.user_id = user.uid;
    job.group_id = user.gid;
    job.group = user.group;
    job.submit_time = now;
    if (plan.het) {
      job.het_job_id = ids.front();
      job.het_offset = static_cast<uint32_t>(i);
    }
    if (!plan.pending_reason.empty()) job.reason = plan.pending_reason;
    if (stuck_submits_ > 0) {
      job.stuck_reason = stuck_submit_reason_;
      job.reason = stuck_submit_reason_;
    }
    if (job.request.hold) job.reason = "JobHeldUser";
    touchLocked(job);
    jobs_[id] = std::move(job);
  }
  if (plan.het) jobs_[ids.front()].het_members = ids;
  *leader_id = ids.front();
  Job& leader = jobs_[ids.front()];
  leader.history = history_.size();
  history_.push_back(HistoryEntry{leader.id,
                                  {},
                                  leader.request.comment,
                                  static_cast<int>(ids.size()),
                                  0,
                                  "",
                                  false,
                                  json::array()});
  recordHistoryLocked(leader);
  scheduleLocked();
  wake_.notify_all();
  return nullptr;
}

void SimulatorImpl::leaveRejectedLocked(const SubmitRejection& rejection, const UnixUser& user) {
  if (rejection.leftover == Leftover::kNone || rejection.components.empty()) return;
  SubmitPlan plan;
  plan.het = rejection.leftover == Leftover::kCancelledLeader;
  plan.components = {rejection.components.front()};
  if (plan.components[0].partition.empty() && cluster_.defaultPartition())
    plan.components[0].partition = cluster_.defaultPartition()->name;
  uint32_t id = 0;
  plan.components[0].hold = true;  // never scheduled: it is final at once
  submitLocked(plan, user, &id);
  Job& job = jobs_[id];
  job.request.hold = false;
  job.end_time = job.start_time = job.submit_time;
  job.epilog_end = steadyNow();
  if (rejection.leftover == Leftover::kFailedRecord) {
    job.base_state = "FAILED";
    job.reason = "BadConstraints";
    job.exit_code = ExitCode{"SIGNALED", 0, SIGHUP};
  } else {
    job.base_state = "CANCELLED";
    job.reason = "None";
  }
  touchLocked(job);
}

void SimulatorImpl::tickerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    tickLocked();
    wake_.wait_for(lock, std::chrono::milliseconds(10));
  }
}

void SimulatorImpl::tickLocked() {
  const auto now = steadyNow();
  for (auto& [id, job] : jobs_) {
    if (job.pid > 0) {
      if (const auto exit = pollProcess(job.pid)) {
        // Like slurmstepd ending the step's cgroup: nothing the script left behind survives.
        signalProcessGroup(job.pid, SIGKILL);
        job.pid = -1;
        finishProcessLocked(job, exit->signaled, exit->code);
      } else if (job.kill_state.empty() && job.preempt_time != 0 && now >= job.grace_end) {
        // The grace time is over: TERM to everything, KILL after KillWait; the record's
        // preempt_time and end_time now say when (23_preemption.json, keeps_running).
        beginKillLocked(job, "PREEMPTED", "None", SIGTERM);
        for (Job* c : componentsLocked(job)) c->preempt_time = c->end_time;
      } else if (job.kill_state.empty() && job.request.time_limit_min && now >= job.deadline) {
        beginKillLocked(job, "TIMEOUT", "TimeLimit", SIGTERM);
      } else if (!job.kill_state.empty() && now >= job.kill_escalate) {
        signalProcessGroup(job.pid, SIGKILL);
      }
    }
  }
  for (auto& [id, job] : jobs_) {
    if (job.completing && job.pid <= 0 && now >= job.epilog_end) {
      const Job* leader =
          job.isHet() && jobs_.count(job.het_job_id) ? &jobs_[job.het_job_id] : &job;
      if (leader->pid > 0) continue;
      job.completing = false;
      job.resources_held = false;
      if (job.requeuing) finishRequeueLocked(job);
      touchLocked(job);
    }
  }
  scheduleLocked();
  // Purge after MinJobAge, measured from when the job stopped holding resources.
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& job = it->second;
    const bool done = job.finished() && !job.completing && job.pid <= 0;
    if (done && (now >= job.epilog_end + options_.min_job_age || job.purge_early)) {
      if (job.history < history_.size()) {
        recordHistoryLocked(job);
        history_[job.history].purged = true;
      }
      std::error_code ec;
      fs::remove_all(state_dir_ + "/jobs/" + std::to_string(job.id), ec);
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

void SimulatorImpl::finishRequeueLocked(Job& job) {
  job.requeuing = false;
  job.sluid = sluids_.next(nowUnixMs());
  if (job.history < history_.size()) recordHistoryLocked(job);
  job.submit_time = nowUnix();
  job.start_time = job.end_time = 0;
  job.alloc_nodes.clear();
  job.alloc_cpus_per_node = job.alloc_gpus_per_node = 0;
  job.alloc_mem_per_node = 0;
  job.kill_state.clear();
  job.pid = -1;
  job.begin_after = steadyNow() + options_.requeue_delay;
  // start_time reads as the new begin time, as slurmctld shows it.
  job.start_time = job.submit_time +
                   std::chrono::duration_cast<std::chrono::seconds>(options_.requeue_delay).count();
  if (!job.request.hold) job.reason = "BeginTime";
}

void SimulatorImpl::cancelLocked(Job& leader) {
  if (leader.requeuing) {
    // job_signal on a requeue in progress: "prevent job requeue, otherwise preserve state".
    for (Job* c : componentsLocked(leader)) {
      c->base_state = "CANCELLED";
      c->requeuing = false;
      touchLocked(*c);
    }
    leader.kill_state = "CANCELLED";
    return;
  }
  if (leader.base_state != "PENDING") {
    beginKillLocked(leader, "CANCELLED", leader.reason, SIGTERM);
    return;
  }
  const int64_t now = nowUnix();
  for (Job* c : componentsLocked(leader)) {
    c->base_state = "CANCELLED";
    // As slurmctld ends a pending job: start and end now (no estimate left behind).
    c->start_time = now;
    c->end_time = now;
    c->epilog_end = steadyNow();
    touchLocked(*c);
  }
}

void SimulatorImpl::beginKillLocked(Job& leader, const std::string& state,
                                    const std::string& reason, int sig) {
  const int64_t now = nowUnix();
  for (Job* c : componentsLocked(leader)) {
    c->base_state = state;
    c->reason = reason;
    c->completing = true;
    c->end_time = now;
    c->epilog_end = SimInstant::max();  // set when the process has gone
    touchLocked(*c);
  }
  leader.kill_state = state;
  leader.kill_escalate = steadyNow() + options_.kill_wait;
  signalProcessGroup(leader.pid, sig);
  // The epilog clock starts when the step is gone (see finishProcessLocked).
}

void SimulatorImpl::finishProcessLocked(Job& leader, bool signaled, int code) {
  ExitCode exit;
  if (signaled) {
    exit = ExitCode{"SIGNALED", 0, code};
  } else if (code != 0) {
    exit = ExitCode{"ERROR", code, 0};
  }
  std::string state = leader.kill_state;
  std::string reason;
  // A het job's first component whose step srun was ended by a signal (the srun stand-in
  // leaves this mark): Slurm cancelled the whole job then, whatever the script did after.
  std::error_code ec;
  if (state.empty() &&
      fs::exists(state_dir_ + "/jobs/" + std::to_string(leader.id) + "/" + kHetCancelMark, ec)) {
    state = "CANCELLED";
    reason = "None";
  }
  if (state.empty() && leader.preempt_time != 0) {
    // Ended in its grace time, whatever its exit: Slurm sets PREEMPTED as the step ends,
    // before the batch script's own exit code is known (23_preemption.json: exit 0 and 3
    // both read SUCCESS/0).
    state = "PREEMPTED";
    reason = "None";
    exit = ExitCode{};
  }
  if (state.empty()) {
    state = (!signaled && code == 0) ? "COMPLETED" : "FAILED";
    reason = state == "COMPLETED" ? "None" : "NonZeroExitCode";
  }
  if (leader.history < history_.size() && !history_[leader.history].runs.empty()) {
    json& run = history_[leader.history].runs.back();
    run[signaled ? "signal" : "exit_code"] = code;
    // When the simulator saw the step gone (it then kills what the script left): no process
    // of this run outlives it.
    run["end_us"] = unixMicros();
  }
  const int64_t now = nowUnix();
  const auto epilog_end = steadyNow() + options_.epilog;
  for (Job* c : componentsLocked(leader)) {
    if (leader.kill_state.empty()) {
      c->base_state = state;
      c->reason = reason;
      c->end_time = now;
    }
    if (!c->requeuing) c->exit_code = exit;  // a requeue's kill leaves exit_code as it was
    c->completing = true;
    c->epilog_end = epilog_end;
    touchLocked(*c);
  }
}

}  // namespace tuneplane::sim
