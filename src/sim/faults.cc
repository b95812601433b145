// The faults a test injects, through Simulator (simulator.h) or the admin route
// (admin_routes.cc): lost or reset submit answers, failed requests, latency, expired tokens,
// jobs ended, preempted, requeued, kept pending or purged at once, DELETEs that stall, reads that
// lie, claims that cannot be created. Each takes mu_ and wakes the ticker where jobs changed.
#include <signal.h>

#include <algorithm>

#include "sim/process.h"
#include "sim/simulator_impl.h"

namespace tuneplane::sim {

void SimulatorImpl::dropNextSubmitResponses(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  drop_submits_ = count;
}

void SimulatorImpl::resetNextSubmitConnections(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  reset_submits_ = count;
}

void SimulatorImpl::failNextRequests(int count, int http_status) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_requests_ = count;
  fail_status_ = http_status;
}

void SimulatorImpl::setLatency(std::chrono::milliseconds latency) {
  std::lock_guard<std::mutex> lock(mu_);
  latency_ = latency;
}

void SimulatorImpl::expireTokens() {
  std::lock_guard<std::mutex> lock(mu_);
  token_cutoff_ = realNowUnix();  // compared with the iat its minter stamped
  expired_tokens_.insert(seen_tokens_.begin(), seen_tokens_.end());
  seen_tokens_.clear();
}

Status SimulatorImpl::endJob(const std::string& id, const std::string& base_state) {
  static const std::map<std::string, std::string> kReasons = {
      {"NODE_FAIL", "NodeDown"},     {"PREEMPTED", "None"},    {"OUT_OF_MEMORY", "OutOfMemory"},
      {"FAILED", "NonZeroExitCode"}, {"TIMEOUT", "TimeLimit"}, {"BOOT_FAIL", "NodeDown"},
      {"DEADLINE", "DeadLine"},      {"CANCELLED", "None"}};
  const auto reason = kReasons.find(base_state);
  if (reason == kReasons.end())
    return fail("sim.end_job", "state", "unsupported end state " + base_state);
  std::lock_guard<std::mutex> lock(mu_);
  Job* job = findLocked(id);
  if (!job) return fail("sim.end_job", "job", "unknown job " + id);
  Job& leader = leaderLocked(*job);
  if (leader.base_state != "RUNNING")
    return fail("sim.end_job", "job", "job " + id + " is not running");
  beginKillLocked(leader, base_state, reason->second, SIGKILL);
  wake_.notify_all();
  return ok();
}

namespace {

// The kill-warning signal a job was submitted with, by Slurm's name (sig_name2num): "USR2",
// "SIGUSR2" or a number; TERM when it has none (what a preemption sends then).
int warningSignal(const std::string& name) {
  if (name.empty()) return SIGTERM;
  const std::string bare = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  static const std::map<std::string, int> kSignals = {
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"INT", SIGINT},
      {"HUP", SIGHUP},   {"QUIT", SIGQUIT}, {"ALRM", SIGALRM}, {"URG", SIGURG},
      {"CONT", SIGCONT}, {"KILL", SIGKILL}};
  if (const auto it = kSignals.find(bare); it != kSignals.end()) return it->second;
  if (!bare.empty() && std::all_of(bare.begin(), bare.end(), ::isdigit)) return std::stoi(bare);
  return SIGTERM;
}

}  // namespace

Status SimulatorImpl::preemptJob(const std::string& id, std::chrono::seconds grace) {
  std::lock_guard<std::mutex> lock(mu_);
  Job* job = findLocked(id);
  if (!job) return fail("sim.preempt", "job", "unknown job " + id);
  Job& leader = leaderLocked(*job);
  if (leader.base_state != "RUNNING" || leader.completing || !leader.kill_state.empty())
    return fail("sim.preempt", "job", "job " + id + " is not running");
  if (leader.preempt_time != 0) return fail("sim.preempt", "job", "job " + id + " is preempted");
  const int64_t now = nowUnix();
  for (Job* c : componentsLocked(leader)) {
    c->preempt_time = now;
    c->end_time = now + grace.count();
    touchLocked(*c);
  }
  leader.grace_end = steadyNow() + std::chrono::duration_cast<SimInstant>(grace);
  // slurmctld's _preempt_signal: SIGCONT, then the warning (or TERM) to the steps.
  const std::string srun = state_dir_ + "/bin/srun";
  signalStepProcesses(leader.pid, srun, SIGCONT);
  signalStepProcesses(leader.pid, srun, warningSignal(leader.request.kill_warning_signal));
  wake_.notify_all();
  return ok();
}

void SimulatorImpl::duplicateNextSubmits(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  duplicate_submits_ = count;
}

Status SimulatorImpl::requeueJob(const std::string& id, bool hold) {
  std::lock_guard<std::mutex> lock(mu_);
  Job* job = findLocked(id);
  if (!job) return fail("sim.requeue", "job", "unknown job " + id);
  Job& leader = leaderLocked(*job);
  if (leader.base_state != "RUNNING" || leader.completing)
    return fail("sim.requeue", "job", "job " + id + " is not running");
  // Like _job_requeue_op: the job is PENDING again at once, COMPLETING while its step is
  // killed and the epilog runs, restart_cnt counts it; held at once for requeuehold, else
  // its reason stays what it was.
  beginKillLocked(leader, "PENDING", hold ? "JobHeldUser" : leader.reason, SIGTERM);
  for (Job* c : componentsLocked(leader)) {
    c->requeuing = true;
    ++c->restart_count;
    if (hold) {
      c->request.hold = true;
      c->state_description = "job requeued in held state";
    }
  }
  wake_.notify_all();
  return ok();
}

Status SimulatorImpl::stallDeletes(const std::string& id, int count,
                                   std::chrono::milliseconds hold) {
  std::lock_guard<std::mutex> lock(mu_);
  Job* job = findLocked(id);
  if (!job) return fail("sim.stall_deletes", "job", "unknown job " + id);
  stalled_deletes_[job->id] = StalledDeletes{count, hold};
  return ok();
}

bool SimulatorImpl::stallDeleteLocked(std::unique_lock<std::mutex>& lock, const Job& job) {
  const auto it = stalled_deletes_.find(job.id);
  if (it == stalled_deletes_.end() || it->second.count <= 0) return false;
  --it->second.count;
  waitForClockLocked(lock, steadyNow() + it->second.hold);
  return true;
}

Status SimulatorImpl::neverStart(const std::string& id, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  Job* job = findLocked(id);
  if (!job) return fail("sim.never_start", "job", "unknown job " + id);
  Job& leader = leaderLocked(*job);
  if (leader.base_state != "PENDING" || leader.completing)
    return fail("sim.never_start", "job", "job " + id + " is not pending");
  for (Job* c : componentsLocked(leader)) {
    c->stuck_reason = reason;
    c->reason = reason.empty() ? "None" : reason;
    touchLocked(*c);
  }
  scheduleLocked();
  wake_.notify_all();
  return ok();
}

void SimulatorImpl::neverStartNextSubmits(int count, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  stuck_submits_ = count;
  stuck_submit_reason_ = reason;
}

void SimulatorImpl::restart() {
  std::lock_guard<std::mutex> lock(mu_);
  next_id_ = 1;
}

void SimulatorImpl::pauseScheduling(bool paused) {
  std::lock_guard<std::mutex> lock(mu_);
  scheduling_paused_ = paused;
  wake_.notify_all();
}

Status SimulatorImpl::purgeJob(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Job* job = findLocked(id);
  if (!job) return fail("sim.purge", "job", "unknown job " + id);
  for (Job* c : componentsLocked(*job)) c->purge_early = true;  // forgotten once ended
  wake_.notify_all();
  return ok();
}

void SimulatorImpl::lieAboutReads(std::chrono::milliseconds window) {
  std::lock_guard<std::mutex> lock(mu_);
  lie_until_ = window.count() > 0 ? steadyNow() + window : SimInstant{};
}

void SimulatorImpl::makeNextClaimsUncreatable(int count, bool as_dangling_link) {
  std::lock_guard<std::mutex> lock(mu_);
  uncreatable_claims_ = count;
  claims_as_links_ = as_dangling_link;
}

}  // namespace tuneplane::sim
