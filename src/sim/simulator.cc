// The simulator's engine: job table, FIFO scheduler, batch-step processes, epilog,
// time limits, purge and faults. The REST surface is in http_routes.cc.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/jwt.h"
#include "sim/job_record.h"
#include "sim/process.h"
#include "sim/simulator_impl.h"
#include "sim/standins.h"

namespace tuneplane::sim {

namespace fs = std::filesystem;

namespace {

// Connections the simulator serves at once (see serve()).
constexpr size_t kWorkers = 40;

std::string readFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Result<std::unique_ptr<Simulator>> Simulator::start(const SimulatorOptions& options) {
  bool ok = false;
  const std::string key = readFile(options.jwt_key_file, &ok);
  if (!ok || key.empty())
    return fail("sim.jwt_key", options.jwt_key_file, "cannot read the JWT key file");
  ClusterConfig cluster = defaultCluster();
  if (options.cluster_file) {
    auto loaded = loadCluster(*options.cluster_file);
    if (!loaded) return fail(loaded.error());
    cluster = std::move(*loaded);
  }
  if (options.cluster_name != "tp") cluster.name = options.cluster_name;
  if (options.api_versions.empty()) {
    return fail("sim.api_versions", "--api-versions", "serve at least one REST API version");
  }
  for (const auto& version : options.api_versions) {
    if (findSimApi(version) == nullptr) {
      std::string known;
      for (const SimApi* api : simApis()) known += (known.empty() ? "" : ", ") + api->name;
      return fail(
          "sim.api_versions", "--api-versions",
          "the simulator does not serve REST API '" + version + "' (it serves " + known + ")");
    }
  }
  std::string state_dir;
  bool own = false;
  std::error_code ec;
  if (options.state_dir) {
    state_dir = *options.state_dir;
    fs::create_directories(state_dir, ec);
    if (ec) return fail("sim.state_dir", state_dir, ec.message());
  } else {
    std::string tmpl = (fs::temp_directory_path(ec) / "tuneplane-slurmsim-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) return fail("sim.state_dir", tmpl, "mkdtemp failed");
    state_dir = tmpl;
    own = true;
  }
  state_dir = fs::absolute(state_dir, ec).string();
  auto sim = std::make_unique<SimulatorImpl>(options, std::move(cluster), key, state_dir, own);
  if (auto served = sim->serve(); !served) return fail(served.error());
  return std::unique_ptr<Simulator>(std::move(sim));
}

SimulatorImpl::SimulatorImpl(SimulatorOptions options, ClusterConfig cluster, std::string key,
                             std::string state_dir, bool own_state_dir)
    : options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : system_clock_),
      served_([this] {
        std::vector<const SimApi*> served;
        for (const SimApi* api : simApis()) {
          for (const auto& name : options_.api_versions) {
            if (api->name == name) served.push_back(api);
          }
        }
        return served;
      }()),
      cluster_(std::move(cluster)),
      key_(std::move(key)),
      state_dir_(std::move(state_dir)),
      own_state_dir_(own_state_dir),
      sluids_(cluster_.cluster_id) {
  drop_submits_ = options_.fail_submits;
  duplicate_submits_ = options_.duplicate_submits;
  latency_ = options_.latency;
}

Status SimulatorImpl::serve() {
  // A dropped response is a write to a socket we shut down: never die of SIGPIPE for it.
  signal(SIGPIPE, SIG_IGN);
  bin_dir_ = state_dir_ + "/bin";
  if (auto written = writeStandins(bin_dir_); !written) return written;
  std::error_code ec;
  fs::create_directories(state_dir_ + "/jobs", ec);
  installRoutes();
  // slurmrestd (conmgr) is event-driven: an idle kept-alive connection holds none of its
  // threads, and it writes an answer with one writev. cpp-httplib holds a worker per open
  // connection and writes headers and body apart; so workers enough for every connection a
  // test or a benchmark keeps open (serve's submit_concurrency up to 64 is not exercised
  // here), and TCP_NODELAY, or Nagle holds the body until the client's delayed ACK
  // (~40 ms a submit on a reused connection).
  server_.new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  server_.set_tcp_nodelay(true);
  const std::string& listen = options_.listen;
  std::string host = "127.0.0.1";
  int port = 0;
  const bool unix_socket = listen.rfind("unix:", 0) == 0;
  if (!unix_socket) {
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos) return fail("sim.listen", listen, "expected HOST:PORT");
    host = listen.substr(0, colon);
    try {
      port = std::stoi(listen.substr(colon + 1));
    } catch (...) {
      return fail("sim.listen", listen, "bad port");
    }
  }
  if (port == 0) {
    port_ = server_.bind_to_any_port(host);
  } else {
    port_ = server_.bind_to_port(host, port) ? port : -1;
  }
  if (port_ <= 0) return fail("sim.listen", listen, "cannot bind");
  if (unix_socket) {
    auto bridge = UnixBridge::start(listen.substr(5), port_);
    if (!bridge) return fail(bridge.error());
    bridge_ = std::move(*bridge);
  }
  server_thread_ = std::thread([this] {
    server_.listen_after_bind();
    listen_returned_ = true;
  });
  // httplib 0.11's stop() does nothing until listen_after_bind() has marked the server
  // running (0.12 added wait_until_ready for this): a Simulator destroyed right after
  // start, as in a test that fails at once, would leave the accept loop running and the
  // join in the destructor hanging. So start() returns once the loop runs (or has ended).
  while (!server_.is_running() && !listen_returned_) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ticker_thread_ = std::thread([this] { tickerLoop(); });
  return ok();
}

SimulatorImpl::~SimulatorImpl() {
  stopping_ = true;
  wake_.notify_all();
  bridge_.reset();
  server_.stop();
  if (server_thread_.joinable()) server_thread_.join();
  if (ticker_thread_.joinable()) ticker_thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, job] : jobs_) {
    if (job.pid > 0) {
      signalProcessGroup(job.pid, SIGKILL);
      while (!pollProcess(job.pid)) usleep(1000);
      job.pid = -1;
    }
  }
  if (own_state_dir_) {
    std::error_code ec;
    fs::remove_all(state_dir_, ec);
  }
}

std::string SimulatorImpl::baseUrl() const {
  if (options_.listen.rfind("unix:", 0) == 0) return "unix://" + options_.listen.substr(5);
  const auto colon = options_.listen.rfind(':');
  return "http://" + options_.listen.substr(0, colon) + ":" + std::to_string(port_);
}

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

namespace {

// A job's state as the history shows it: the base state, then ",COMPLETING" while it is.
std::string historyState(const Job& job) {
  return job.base_state + (job.completing ? ",COMPLETING" : "");
}

}  // namespace

void SimulatorImpl::recordHistoryLocked(const Job& leader) {
  HistoryEntry& entry = history_[leader.history];
  const std::string sluid = formatSluid(leader.sluid);
  if (entry.sluids.empty() || entry.sluids.back() != sluid) entry.sluids.push_back(sluid);
  entry.state = historyState(leader);
}

nlohmann::json SimulatorImpl::history() const {
  std::lock_guard<std::mutex> lock(mu_);
  json jobs = json::array();
  for (const HistoryEntry& entry : history_) {
    std::string state = entry.state;
    if (!entry.purged) {  // still held: its id names it (a purged id may be reused)
      const auto live = jobs_.find(entry.job_id);
      if (live != jobs_.end()) {
        state = historyState(live->second);
      }
    }
    jobs.push_back({{"job_id", entry.job_id},
                    {"sluids", entry.sluids},
                    {"comment", entry.comment},
                    {"components", entry.components},
                    {"starts", entry.starts},
                    {"runs", entry.runs},
                    {"state", state},
                    {"purged", entry.purged}});
  }
  return {{"jobs", std::move(jobs)}};
}

size_t SimulatorImpl::jobCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.size();
}

uint32_t SimulatorImpl::nextIdLocked() {
  while (jobs_.count(next_id_)) ++next_id_;
  return next_id_++;
}

int64_t SimulatorImpl::realNowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void SimulatorImpl::waitForClockLocked(std::unique_lock<std::mutex>& lock, SimInstant until) {
  constexpr auto kRecheck = std::chrono::milliseconds(5);
  while (!stopping_) {
    const auto left = until - steadyNow();
    if (left.count() <= 0) return;
    wake_.wait_for(lock, std::min<std::chrono::milliseconds>(left, kRecheck));
  }
}

int64_t SimulatorImpl::unixMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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
