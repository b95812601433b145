// One poll cycle of the reconciler with 10,000 tracked active jobs, against the in-process
// simulator (scheduling paused, so every job stays PENDING and nothing runs), the real REST
// client over loopback and a SqliteJobStore file. Measured on the reconciler's thread
// (CLOCK_THREAD_CPUTIME_ID; the simulator serves on threads of its own): requests, bytes
// received (response bodies) and CPU time of
//   - a steady cycle: Reconciler::tick() when nothing changed (one GET /jobs/state/ per
//     256 ids, no read by SLUID);
//   - a cycle in which 50 jobs changed (cancelled in Slurm: 50 reads by SLUID);
// against two baselines measured in the same run on the same jobs:
//   - the full listing: one GET /jobs/ decoded into records;
//   - the naive way: one GET /job/{sluid} per job (an even sample of 500, scaled).
// Goals (issue 7): steady bytes <= 1% of the full listing; CPU >= 20x less than per-job GETs.
// The tick reads from the store only the jobs written since its last one (none in a steady
// cycle); what a full read of the active jobs would cost is shown apart. Measured on a SQLite
// file and on a PostgreSQL 15 started from Debian's packages in a temporary directory (skipped,
// and said, where its binaries are missing).
// Peak memory: the VmHWM rise of a forked child doing one steady cycle, or one GET /jobs/.
// Env: TUNEPLANE_BENCH_JOBS (default 10000), TUNEPLANE_BENCH_DIR (default: a new temp dir).
// Exit status 1 when a goal is missed or a step fails. Run: build/bench/poll_cycle_bench
#include <malloc.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_dir.h"
#include "bench_measure.h"
#include "catalog/artifact_verifier.h"
#include "common/clock.h"
#include "control/reconciler.h"
#include "http/transport.h"
#include "launch/attempt_identity.h"
#include "pipeline/attempt_launcher.h"
#include "sim/simulator.h"
#include "slurm/rest_client.h"
#include "slurm/token_provider.h"
#include "staging/staging_fs.h"
#include "store/postgres_job_store.h"
#include "store/sqlite_job_store.h"
#include "support/pg_cluster.h"

namespace {

using namespace tuneplane;
using bench::loadAverage;
using bench::statusKiB;
using bench::threadCpuSeconds;
using nlohmann::json;

constexpr int kChanged = 50;  // below the reconciler's listing_threshold (64)
constexpr int kSampledGets = 500;

// The peak memory `op` adds, in KiB: run in a forked child (one thread; the parent waits and
// touches nothing meanwhile) whose high-water mark is reset first (clear_refs 5), so VmHWM
// rises only by what `op` makes resident. -1 when it cannot be measured.
template <typename Op>
long peakKiB(Op&& op) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::close(fds[0]);
    // Free heap pages the parent left resident would hide the rise: give them back first.
    ::malloc_trim(0);
    std::ofstream("/proc/self/clear_refs") << "5";
    const long before = statusKiB("VmRSS");
    op();
    const long rise = statusKiB("VmHWM") - before;
    const std::string text = std::to_string(rise);
    ::_exit(::write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  char buf[32] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof buf - 1);
  ::close(fds[0]);
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      n <= 0) {
    return -1;
  }
  return std::atol(buf);
}

// Counts what goes over the wire: requests and the bytes of every response body.
class CountingTransport final : public http::HttpTransport {
 public:
  explicit CountingTransport(std::unique_ptr<http::HttpTransport> inner)
      : inner_(std::move(inner)) {}
  tl::expected<http::HttpResponse, http::TransportFailure> perform(
      const http::HttpRequest& request) override {
    ++requests_;
    auto response = inner_->perform(request);
    if (response) bytes_ += static_cast<long long>(response->body.size());
    return response;
  }
  void reset() { requests_ = bytes_ = 0; }
  long long requests() const { return requests_; }
  long long bytes() const { return bytes_; }

 private:
  std::unique_ptr<http::HttpTransport> inner_;
  long long requests_ = 0;
  long long bytes_ = 0;
};

struct Figure {
  const char* what;
  long long requests = 0;
  long long bytes = 0;
  double cpu = 0;   // seconds of the calling thread
  double wall = 0;  // seconds
};

template <typename Op>
Figure measure(const char* what, CountingTransport& wire, Op&& op) {
  wire.reset();
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = threadCpuSeconds();
  op();
  Figure f{what};
  f.cpu = threadCpuSeconds() - cpu0;
  f.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  f.requests = wire.requests();
  f.bytes = wire.bytes();
  return f;
}

void print(const Figure& f) {
  std::printf("  %-34s %7lld req %12lld B %9.1f ms CPU %9.1f ms wall\n", f.what, f.requests,
              f.bytes, f.cpu * 1e3, f.wall * 1e3);
}

int envJobs() {
  const char* v = std::getenv("TUNEPLANE_BENCH_JOBS");
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > kChanged ? n : 10000;
}

std::string hex32(int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%032x", i + 1);
  return buf;
}

// A job as the reconciler would have stored it after resolving its receipt.
store::Change queuedJob(int i, const slurm::JobRecord& slurm_job, const std::string& token,
                        int64_t now_ms) {
  store::JobRecord job;
  char id[32];
  std::snprintf(id, sizeof id, "bench-%08x", i);
  job.id = id;
  job.name = "bench";
  job.owner = "alice";
  job.spec =
      "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: bench\nspec:\n"
      "  framework: {name: custom, task: custom, runtime_id: custom-demo, command: [true]}\n"
      "  resources:\n    pools:\n      - {name: main, nodes: 1, gpus_per_node: 0, cpus: 1, "
      "memory_gb: 1}\n";
  job.phase = phase::JobPhase::kQueued;
  job.reason = "waiting";
  job.created_ms = job.updated_ms = now_ms;
  store::AttemptRecord a;
  a.job_id = job.id;
  a.number = 1;
  a.phase = phase::AttemptPhase::kQueued;
  a.reason = "waiting";
  a.submit_token = token;
  a.staging_dir = "/nonexistent/tuneplane/jobs/" + job.id + "/attempts/1";
  a.slurm_job_id = slurm_job.job_id;
  a.created_ms = a.submitted_ms = now_ms;
  store::ComponentRecord c;
  c.pool = "main";
  c.slurm_job_id = slurm_job.job_id;
  c.sluid = slurm_job.sluid;
  c.state = slurm_job.job_state;
  c.reason = slurm_job.state_reason;
  a.components.push_back(c);
  return store::Change{job, {a}, {}};
}

int run() {
  const int jobs = envJobs();
  bench::BenchDir dir;
  if (!dir.ok()) return 1;
  const std::string key_file = dir.path() + "/jwt.key";
  std::ofstream(key_file) << "0123456789abcdef0123456789abcdef-bench-key";
  std::filesystem::create_directories(dir.path() + "/work");

  sim::SimulatorOptions sim_options;
  sim_options.jwt_key_file = key_file;
  sim_options.state_dir = dir.path() + "/sim";
  auto simulator = sim::Simulator::start(sim_options);
  if (!simulator) {
    std::fprintf(stderr, "simulator: %s\n", simulator.error().describe().c_str());
    return 1;
  }
  (*simulator)->pauseScheduling(true);  // every job stays PENDING; nothing runs

  catalog::SlurmSite site;
  site.url = (*simulator)->baseUrl();
  site.user = "tpuser";
  site.jwt_key_file = key_file;
  // The simulator builds a 10,000-job listing (~80 MB) slowly; this bounds a hang only.
  site.request_timeout = std::chrono::minutes(10);
  auto tokens = slurm::makeTokenProvider(site);
  auto curl = http::CurlHttpTransport::create(slurm::restClientOptionsFromSite(site).http);
  if (!tokens || !curl) {
    std::fprintf(stderr, "client setup failed\n");
    return 1;
  }
  auto counting = std::make_unique<CountingTransport>(std::move(*curl));
  CountingTransport& wire = *counting;
  slurm::SlurmRestClient client(slurm::restClientOptionsFromSite(site), std::move(counting),
                                std::move(*tokens));

  std::printf("poll_cycle_bench: %d tracked jobs (simulator, scheduling paused)\n", jobs);
  const auto progress = [start = std::chrono::steady_clock::now()](const char* what) {
    std::fprintf(stderr, "  [%.0f s] %s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                 what);
  };
  std::vector<std::string> token_of(jobs);
  for (int i = 0; i < jobs; ++i) {
    token_of[i] = "tp-" + hex32(i);
    json job = {{"name", "bench"},
                {"comment", token_of[i]},
                {"partition", "cpu"},
                {"current_working_directory", dir.path() + "/work"},
                {"environment", json::array({"PATH=/usr/bin:/bin"})},
                {"standard_output", dir.path() + "/work/%j.out"},
                {"requeue", false},
                {"script", "#!/bin/bash\ntrue\n"}};
    if (auto receipt = client.submit({{"job", job}}); !receipt) {
      std::fprintf(stderr, "submit %d: %s\n", i, receipt.error().describe().c_str());
      return 1;
    }
  }
  progress("submitted");
  auto listed = client.listJobs(std::nullopt);
  if (!listed || static_cast<int>(listed->jobs.size()) != jobs) {
    std::fprintf(stderr, "listing: expected %d jobs\n", jobs);
    return 1;
  }

  // The baselines: the store plays no part in them.
  const Figure listing =
      measure("baseline: one GET /jobs/", wire, [&] { (void)client.listJobs(std::nullopt); });
  const long listing_peak = peakKiB([&] { (void)client.listJobs(std::nullopt); });
  // The simulator answers a single-job GET in time that grows with the jobs it holds (tens
  // of ms at 10,000), so the naive way is measured on an even sample of the jobs and scaled:
  // the client's cost of one GET does not depend on how many jobs there are.
  int failed_gets = 0;
  const int sample = std::min(jobs, kSampledGets);
  Figure per_job = measure("baseline: GET /job/{sluid} each", wire, [&] {
    for (int k = 0; k < sample; ++k) {
      const auto& r = listed->jobs[static_cast<size_t>(k) * static_cast<size_t>(jobs / sample)];
      if (!client.getJob(r.sluid)) ++failed_gets;
    }
  });
  const double scale = static_cast<double>(jobs) / sample;
  per_job.requests = static_cast<long long>(static_cast<double>(per_job.requests) * scale);
  per_job.bytes = static_cast<long long>(static_cast<double>(per_job.bytes) * scale);
  per_job.cpu *= scale;
  per_job.wall *= scale;
  print(listing);
  print(per_job);
  if (sample < jobs)
    std::printf("  (per-job GETs: %d sampled evenly, scaled x%.0f)\n", sample, scale);
  bool ok = failed_gets == 0;
  if (failed_gets != 0) std::fprintf(stderr, "%d per-job GETs failed\n", failed_gets);

  // The same cycle on each store: the jobs stored as the reconciler leaves them, a fresh
  // reconciler (this process has verified no job yet), then the steady and changed cycles.
  // Each run cancels its own 50 jobs in Slurm (offset by `round`).
  int round = 0;
  auto onStore = [&](const char* name, store::JobStore& store) {
    std::printf("\n%s:\n", name);
    SystemClock clock;
    {
      std::vector<store::Change> changes;
      std::map<std::string, const slurm::JobRecord*> by_token;
      for (const auto& r : listed->jobs) by_token[r.comment] = &r;
      for (int i = 0; i < jobs; ++i) {
        changes.push_back(queuedJob(i, *by_token.at(token_of[i]), token_of[i], clock.nowMs()));
      }
      if (auto done = store.commitAll(changes); !done) {
        std::fprintf(stderr, "store: %s\n", done.error().describe().c_str());
        return false;
      }
    }
    progress("stored");
    // Never asked to launch anything: every job is already Queued.
    pipeline::SiteContext context;
    catalog::ArtifactVerifier verifier;
    launch::OpenSslRandomSource random;
    staging::PosixStagingFs fs;
    pipeline::AttemptLauncher launcher(context, verifier, random, fs);
    control::Reconciler reconciler(store, client, launcher, clock);

    const Figure first =
        measure("first tick (verifies every job)", wire, [&] { reconciler.tick(); });
    // The first tick stored what it read of every job (the bench's rows are not what the
    // reconciler would have stored); the next reads those writes back, as any cycle after a
    // change of every job would. From then on nothing changes.
    const Figure readback =
        measure("next tick (reads the first's writes)", wire, [&] { reconciler.tick(); });
    control::TickReport steady_report;
    const Figure steady =
        measure("steady cycle (nothing changed)", wire, [&] { steady_report = reconciler.tick(); });
    // What reading every active job would cost the cycle (the control loop reads only what
    // changed since its last cycle: none of it in a steady one).
    const Figure active =
        measure("  (a full read of the active jobs)", wire, [&] { (void)store.activeJobs(); });
    // Peak memory, in a child process (see peakKiB): the steady cycle against the listing.
    const long steady_peak = peakKiB([&] { reconciler.tick(); });
    for (int i = 0; i < kChanged; ++i) {
      const size_t k = static_cast<size_t>(i) * (jobs / kChanged) + static_cast<size_t>(round);
      (void)client.cancel(listed->jobs[k].sluid, std::nullopt);
    }
    ++round;
    control::TickReport changed_report;
    const Figure changed =
        measure("cycle with 50 jobs changed", wire, [&] { changed_report = reconciler.tick(); });
    print(first);
    print(readback);
    print(steady);
    print(active);
    print(changed);

    const double bytes_ratio =
        static_cast<double>(steady.bytes) / static_cast<double>(listing.bytes);
    const double changed_bytes_ratio =
        static_cast<double>(changed.bytes) / static_cast<double>(listing.bytes);
    const double cpu_ratio = per_job.cpu / steady.cpu;
    const double changed_cpu_ratio = per_job.cpu / changed.cpu;
    std::printf("steady cycle bytes / full listing:      %.3f%% (goal <= 1%%)\n",
                100 * bytes_ratio);
    std::printf("changed cycle bytes / full listing:     %.3f%%\n", 100 * changed_bytes_ratio);
    std::printf("per-job GETs CPU / steady cycle CPU:    %.1fx (goal >= 20x)\n", cpu_ratio);
    std::printf("per-job GETs CPU / changed cycle CPU:   %.1fx\n", changed_cpu_ratio);
    std::printf("full listing CPU / steady cycle CPU:    %.1fx\n", listing.cpu / steady.cpu);
    std::printf("steady cycle CPU / a full store read:   %.2f\n", steady.cpu / active.cpu);
    std::printf(
        "peak memory added:                      steady cycle %.1f MiB, one GET /jobs/ %.1f MiB\n",
        steady_peak / 1024.0, listing_peak / 1024.0);
    bool met = true;
    if (steady_report.fetches != 0 || steady_report.listings != 0 || steady_report.errors != 0) {
      std::fprintf(stderr, "steady tick: %d fetches, %d listings, %d errors (expected none)\n",
                   steady_report.fetches, steady_report.listings, steady_report.errors);
      met = false;
    }
    if (changed_report.fetches != kChanged || changed_report.errors != 0) {
      std::fprintf(stderr, "changed tick: %d fetches (expected %d), %d errors\n",
                   changed_report.fetches, kChanged, changed_report.errors);
      met = false;
    }
    if (bytes_ratio > 0.01 || cpu_ratio < 20) met = false;
    std::printf("%s: %s\n", name, met ? "goal met" : "goal NOT met");
    return met;
  };

  auto sqlite = store::SqliteJobStore::open(dir.path() + "/tuneplane.db");
  if (!sqlite) {
    std::fprintf(stderr, "store: %s\n", sqlite.error().describe().c_str());
    return 1;
  }
  ok = onStore("SQLite (WAL, a file)", **sqlite) && ok;
  sqlite->reset();

  // PostgreSQL from Debian's packages, in a temporary directory (tests/support/pg_cluster.h).
  std::string why;
  auto cluster = test::PgCluster::start(why);
  if (!cluster) {
    std::printf("\nPostgreSQL: not measured (%s)\n", why.c_str());
  } else {
    const std::string database = cluster->createDatabase(why);
    auto postgres =
        database.empty()
            ? Result<std::unique_ptr<store::PostgresJobStore>>(fail("store.io", "", why))
            : store::PostgresJobStore::open(cluster->uri(database));
    if (!postgres) {
      std::fprintf(stderr, "PostgreSQL store: %s\n", postgres.error().describe().c_str());
      ok = false;
    } else {
      ok = onStore("PostgreSQL 15 (loopback)", **postgres) && ok;
    }
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  return run();
}
