// API read throughput: GET /v1/jobs/{id} through the whole server (token check, owner
// scoping, a SQLite read of the job with its attempt, JSON) against a baseline measured in
// the same run — a bare cpp-httplib handler on the same thread pool returning a fixed body of
// the same size. Both are driven by the same loopback clients (keep-alive connections, a
// fixed number of requests each); figures are requests/s and p50/p99 latency, printed with
// their ratio to the baseline. Every answer is checked: an error or a wrong body counts.
// Env: TUNEPLANE_BENCH_DIR (default: a new temp dir), TUNEPLANE_BENCH_REQUESTS (per client,
// default 5000), TUNEPLANE_BENCH_CLIENTS (default 4). Run: build/bench/api_bench
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/api_server.h"
#include "bench_dir.h"
#include "catalog/artifact_verifier.h"
#include "control/job_service.h"
#include "launch/attempt_identity.h"
#include "staging/staging_fs.h"
#include "store/sqlite_job_store.h"

namespace {

using namespace tuneplane;
using Steady = std::chrono::steady_clock;

constexpr int kJobs = 1000;
constexpr int64_t kT0 = 1'700'000'000'000;
constexpr const char* kToken = "bench-token";

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : fallback;
}

std::string jobId(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "bench-%08x", i);
  return buf;
}

void fillStore(store::JobStore& store) {
  for (int i = 0; i < kJobs; ++i) {
    store::JobRecord job;
    job.id = jobId(i);
    job.name = "bench";
    job.owner = "alice";
    job.labels = {{"team", "nlp"}};
    job.spec = "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: bench\n" +
               std::string(600, '#') + "\n";
    job.created_ms = job.updated_ms = kT0 + i;
    store::EventRecord created{0, job.id, 0, kT0 + i, "", "Pending", "submitted", "alice"};
    if (!store.createJob(job, created)) std::abort();
    store::AttemptRecord attempt;
    attempt.job_id = job.id;
    attempt.number = 1;
    attempt.phase = store::AttemptPhase::kRunning;
    attempt.submit_token = "tp-" + std::string(24, '0') + job.id.substr(6);
    attempt.staging_dir = "/shared/jobs/" + job.id + "/attempts/1";
    attempt.slurm_job_id = 1000 + i;
    attempt.created_ms = attempt.submitted_ms = kT0 + i;
    attempt.components.push_back({0,
                                  "main",
                                  static_cast<uint64_t>(1000 + i),
                                  "sCC1M8VPKSJX00",
                                  {"RUNNING"},
                                  "None",
                                  {},
                                  {},
                                  "cpu1",
                                  1'700'000'000,
                                  0});
    job.phase = store::JobPhase::kRunning;
    if (!store.commit(store::Change{job, {attempt}, {}})) std::abort();
  }
}

struct Figures {
  double per_second = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  int64_t errors = 0;
};

// `clients` threads, each with its own keep-alive connection, `requests` GETs each.
Figures load(int port, int clients, int requests, const std::function<std::string(int)>& path,
             const std::function<bool(const httplib::Result&)>& good) {
  std::vector<std::vector<double>> latencies(clients);
  std::atomic<int64_t> errors{0};
  std::vector<std::thread> threads;
  const auto start = Steady::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client http("127.0.0.1", port);
      http.set_keep_alive(true);
      http.set_tcp_nodelay(true);
      http.set_read_timeout(10, 0);
      const httplib::Headers headers = {{"Authorization", std::string("Bearer ") + kToken}};
      latencies[c].reserve(requests);
      for (int i = 0; i < requests; ++i) {
        const std::string p = path(c * requests + i);
        const auto t0 = Steady::now();
        auto res = http.Get(p.c_str(), headers);
        latencies[c].push_back(
            std::chrono::duration<double, std::milli>(Steady::now() - t0).count());
        if (!good(res)) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Steady::now() - start).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  Figures f;
  f.per_second = static_cast<double>(all.size()) / seconds;
  f.p50_ms = all[all.size() / 2];
  f.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  f.errors = errors.load();
  return f;
}

void print(const char* name, const Figures& f, const Figures& base) {
  std::printf(
      "%-34s %9.0f req/s (%.2fx baseline)  p50 %.3f ms  p99 %.3f ms (%.2fx baseline)  "
      "errors %lld\n",
      name, f.per_second, f.per_second / base.per_second, f.p50_ms, f.p99_ms,
      f.p99_ms / base.p99_ms, static_cast<long long>(f.errors));
}

}  // namespace

int main() {
  const int requests = envInt("TUNEPLANE_BENCH_REQUESTS", 5000);
  const int clients = envInt("TUNEPLANE_BENCH_CLIENTS", 4);
  bench::BenchDir dir;
  auto opened = store::SqliteJobStore::open(dir.path() + "/api_bench.db");
  if (!opened) {
    std::fprintf(stderr, "store: %s\n", opened.error().describe().c_str());
    return 1;
  }
  store::SqliteJobStore& store = **opened;
  fillStore(store);

  // The server as `tuneplane serve` builds it, minus the control loop (idle here).
  control::SiteContext site;
  catalog::ArtifactVerifier verifier;
  launch::OpenSslRandomSource random;
  staging::PosixStagingFs fs;
  SystemClock clock;
  control::AttemptLauncher launcher(site, verifier, random, fs);
  control::JobService service(store, launcher, clock);
  api::Metrics metrics;
  api::ApiDependencies deps{service, store, launcher, metrics, api::readLog, {}, {}, {}, {}, {}};
  api::ServerOptions options;
  options.tokens = {{"alice", api::sha256Hex(kToken), false}};
  auto server = api::ApiServer::start(std::move(deps), options);
  if (!server) {
    std::fprintf(stderr, "server: %s\n", server.error().describe().c_str());
    return 1;
  }

  // The same size of body as the API's answer, from a bare handler on the same pool size.
  std::string sample;
  {
    httplib::Client http("127.0.0.1", (*server)->port());
    auto res = http.Get(("/v1/jobs/" + jobId(0)).c_str(),
                        {{"Authorization", std::string("Bearer ") + kToken}});
    if (!res || res->status != 200) {
      std::fprintf(stderr, "GET /v1/jobs/{id} does not answer 200\n");
      return 1;
    }
    sample = res->body;
  }
  httplib::Server bare;
  bare.new_task_queue = [] { return new httplib::ThreadPool(api::kDefaultThreads); };
  bare.set_keep_alive_max_count(1000);
  bare.set_tcp_nodelay(true);  // as the API server
  bare.Get(R"(/v1/jobs/([^/]+))", [&sample](const httplib::Request&, httplib::Response& res) {
    res.set_content(sample, "application/json; charset=utf-8");
  });
  const int bare_port = bare.bind_to_any_port("127.0.0.1");
  std::thread bare_thread([&bare] { bare.listen_after_bind(); });
  while (!bare.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  const auto path = [](int i) { return "/v1/jobs/" + jobId(i % kJobs); };
  const auto ok = [](const httplib::Result& res) {
    return res && res->status == 200 && res->body.size() > 100;
  };
  std::printf("api_bench: %d clients x %d GETs, %d jobs in SQLite (WAL, file), %u cores\n", clients,
              requests, kJobs, std::thread::hardware_concurrency());
  // Warm both up, then measure the baseline and the API alternately, twice, keeping each
  // one's best, so a neighbour's burst on a shared machine does not decide the ratio.
  load(bare_port, clients, 200, path, ok);
  load((*server)->port(), clients, 200, path, ok);
  Figures base, api_figures;
  for (int round = 0; round < 2; ++round) {
    const Figures b = load(bare_port, clients, requests, path, ok);
    const Figures a = load((*server)->port(), clients, requests, path, ok);
    if (b.per_second > base.per_second) base = b;
    if (a.per_second > api_figures.per_second) api_figures = a;
    base.errors = std::max(base.errors, b.errors);
    api_figures.errors = std::max(api_figures.errors, a.errors);
  }
  print("baseline: bare httplib handler", base, base);
  print("GET /v1/jobs/{id}", api_figures, base);
  bare.stop();
  bare_thread.join();
  (*server)->stop();
  return api_figures.errors == 0 && base.errors == 0 ? 0 : 1;
}
