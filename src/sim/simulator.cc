// The simulator's lifetime: start (the JWT key, the cluster file, the API versions, the state
// directory), serve (bind, the server and ticker threads) and the destructor; the clock's
// readings and the history tests read. The engine (job table, ticker, kills) is in
// job_table.cc, the faults tests inject in faults.cc, the REST surface in http_routes.cc.
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

}  // namespace tuneplane::sim
