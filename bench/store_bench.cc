// Store read throughput: SqliteJobStore::getJob on a file database holding 10,000 jobs × 2
// attempts (one het component each), single-threaded and with 2 reader threads while a
// writer commits (synchronous=FULL, so each commit waits for its fsync). Baselines measured
// in the same run: a bare `SELECT 1` round trip on a cached statement (the floor of any
// read), and the same job read naively (fresh prepared statements per call, no snapshot).
// Also: activeJobs() over all 10,000 jobs (the reconciler's read), one listing page, and
// commits one change per transaction against 100 per commitAll, and single commits from 8
// threads at once (group commit: changes per transaction).
// Env: TUNEPLANE_BENCH_DIR (default: a new temp dir), TUNEPLANE_BENCH_SECONDS (per figure,
// default 1). Run: build/bench/store_bench
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench_dir.h"
#include "bench_measure.h"
#include "store/job_writes.h"
#include "store/record_rows.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_job_store.h"

namespace {

using tuneplane::bench::loadAverage;
using tuneplane::bench::statusKiB;
using tuneplane::bench::threadCpuSeconds;

using namespace tuneplane::store;
using SteadyClock = std::chrono::steady_clock;

constexpr int kJobs = 10000;
constexpr int64_t kT0 = 1'700'000'000'000;

double envSeconds() {
  const char* v = std::getenv("TUNEPLANE_BENCH_SECONDS");
  const double s = v != nullptr ? std::atof(v) : 0.0;
  return s > 0 ? s : 1.0;
}

std::string jobId(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "bench-%08x", i);
  return buf;
}

Change jobChange(int i) {
  JobRecord job;
  job.id = jobId(i);
  job.name = "bench";
  job.owner = i % 2 == 0 ? "alice" : "bob";
  job.labels = {{"team", "nlp"}};
  job.spec = "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: bench\n" +
             std::string(600, '#') + "\n";
  job.phase = JobPhase::kRunning;
  job.reason = "running";
  job.created_ms = kT0 + i;
  job.updated_ms = kT0 + i;
  Change change{job, {}, {}};
  for (int n = 1; n <= 2; ++n) {
    AttemptRecord a;
    a.job_id = job.id;
    a.number = n;
    a.phase = n == 1 ? AttemptPhase::kFailed : AttemptPhase::kRunning;
    a.cause = n == 1 ? EndCause::kInfrastructure : EndCause::kNone;
    a.reason = n == 1 ? "NODE_FAIL" : "running";
    a.submit_token = "tp-" + job.id + "-" + std::to_string(n);
    a.staging_dir = "/shared/tuneplane/jobs/" + job.id + "/attempts/" + std::to_string(n);
    a.slurm_job_id = static_cast<uint64_t>(100000 + 2 * i + n);
    a.components = {ComponentRecord{0,
                                    "main",
                                    a.slurm_job_id,
                                    "s0C1000000" + std::to_string(i),
                                    {"RUNNING"},
                                    "None",
                                    std::nullopt,
                                    std::nullopt,
                                    "gpu[1-2]",
                                    1'700'000'000,
                                    0}};
    a.created_ms = kT0 + i;
    change.attempts.push_back(a);
  }
  change.events.push_back(EventRecord{0, job.id, 0, kT0 + i, "", "Pending", "created", "alice"});
  return change;
}

// Fills the database through the store's own write path, in one transaction with
// synchronous=OFF (10,000 fsyncs would take minutes and measure the disk, not the store).
bool populate(const std::string& path) {
  {
    auto store = SqliteJobStore::open(path);  // creates the schema
    if (!store) {
      std::fprintf(stderr, "open: %s\n", store.error().describe().c_str());
      return false;
    }
  }
  auto connection = SqliteConnection::open(path, SQLITE_OPEN_READWRITE, 5000);
  if (!connection) return false;
  Connection& c = **connection;
  if (!c.exec("PRAGMA synchronous = OFF; PRAGMA foreign_keys = ON; BEGIN")) return false;
  for (int i = 0; i < kJobs; ++i) {
    if (auto done = applyChange(c, jobChange(i)); !done) {
      std::fprintf(stderr, "populate: %s\n", done.error().describe().c_str());
      return false;
    }
  }
  return c.exec("COMMIT").has_value();
}

// Calls per second of wall time, and per second of this thread's CPU time: the machine is
// shared, so the CPU figure (what one dedicated core would do) is the one to compare.
struct Rate {
  double wall = 0;
  double cpu = 0;
};

// Calls `op(i)`, i a pseudo-random job, for `seconds`. `op` returns false on an error.
template <typename Op>
Rate rate(double seconds, Op&& op, std::atomic<bool>* failed) {
  const auto start = SteadyClock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  const double cpu0 = threadCpuSeconds();
  long long calls = 0;
  uint32_t x = 12345;
  while (SteadyClock::now() < end) {
    for (int k = 0; k < 64; ++k) {
      x = x * 1664525u + 1013904223u;
      if (!op(static_cast<int>((x >> 8) % kJobs))) failed->store(true);
      ++calls;
    }
  }
  const double wall = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const double cpu = threadCpuSeconds() - cpu0;
  return {static_cast<double>(calls) / wall, static_cast<double>(calls) / cpu};
}

// getJob done naively: the same three reads, each statement prepared and finalized per call.
bool naiveGetJob(SqliteConnection& c, const std::string& id) {
  auto once = [&](const std::string& sql, auto&& row) {
    auto stmt = c.prepare(sql);
    if (!stmt) return false;
    Query q(stmt->get());
    q.bind(1, id);
    for (;;) {
      auto more = q.step();
      if (!more) return false;
      if (!*more) return true;
      row(q);
    }
  };
  JobView view;
  bool ok = once(std::string("SELECT ") + kJobColumns + " FROM jobs j WHERE j.id = ?1",
                 [&](Query& q) { view.job = readJob(q, 0).value(); });
  ok = ok && once("SELECT key, value FROM job_labels WHERE job_id = ?1",
                  [&](Query& q) { view.job.labels.emplace(q.text(0), q.text(1)); });
  ok = ok && once(std::string("SELECT ") + kAttemptColumns + ", " + kComponentColumns +
                      " FROM attempts a LEFT JOIN components c ON c.job_id = a.job_id AND"
                      " c.attempt = a.number WHERE a.job_id = ?1 ORDER BY a.number, c.idx",
                  [&](Query& q) {
                    view.attempts.push_back(readAttempt(q, 0).value());
                    view.attempts.back().components.push_back(
                        readComponent(q, kAttemptColumnCount).value());
                  });
  return ok && view.attempts.size() == 2;
}

}  // namespace

int main() {
  const double seconds = envSeconds();
  const tuneplane::bench::BenchDir bench_dir;
  if (!bench_dir.ok()) return 1;
  const std::string& dir = bench_dir.path();
  const std::string path = dir + "/store-bench.db";
  std::filesystem::remove(path);
  std::printf("store_bench: %d jobs x 2 attempts in %s, %.1f s per figure\n", kJobs, path.c_str(),
              seconds);
  if (!populate(path)) return 1;
  std::printf("database: %.1f MB\n",
              static_cast<double>(std::filesystem::file_size(path)) / (1 << 20));

  std::atomic<bool> failed{false};
  std::vector<std::string> ids;
  for (int i = 0; i < kJobs; ++i) ids.push_back(jobId(i));

  // Baselines on a connection of their own.
  auto raw = SqliteConnection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, 5000);
  if (!raw) return 1;
  SqliteConnection& baseline = **raw;
  const Rate select1 = rate(
      seconds,
      [&](int) {
        auto q = baseline.query("SELECT 1");
        return q && q->step().value_or(false) && q->integer(0) == 1;
      },
      &failed);
  const Rate naive = rate(
      seconds, [&](int i) { return naiveGetJob(baseline, ids[i]); }, &failed);

  auto opened = SqliteJobStore::open(path, {.reader_connections = 4});
  if (!opened) {
    std::fprintf(stderr, "open: %s\n", opened.error().describe().c_str());
    return 1;
  }
  SqliteJobStore& store = **opened;
  // Each update carries the version its job was read at, as the reconciler's do (a commit from
  // an older version is refused: store.stale); a commit moves it on by one. One slot per job:
  // the concurrent writers below update disjoint jobs.
  std::vector<int64_t> versions(kJobs, 0);
  for (int i = 0; i < kJobs; ++i) {
    auto view = store.getJob(ids[i]);
    if (!view || !view->has_value()) return 1;
    versions[i] = (*view)->job.version;
  }
  auto commitUpdate = [&](Change change, int i) {
    change.job->version = versions[i];
    if (!store.commit(change)) return false;
    ++versions[i];
    return true;
  };
  auto getJob = [&](int i) {
    auto view = store.getJob(ids[i]);
    return view && view->has_value() && (*view)->attempts.size() == 2;
  };
  const Rate single = rate(seconds, getJob, &failed);

  // Two readers while a writer commits (each commit updates one job and adds an event).
  std::atomic<bool> stop{false};
  std::atomic<long long> commits{0};
  std::thread writer([&] {
    for (int k = 0; !stop.load(); ++k) {
      Change change = jobChange(k % kJobs);
      change.job->updated_ms = kT0 + 1'000'000 + k;
      change.events[0] =
          EventRecord{0, change.job->id, 2, kT0 + k, "Running", "Running", "poll", "reconciler"};
      if (!commitUpdate(change, k % kJobs)) failed = true;
      ++commits;
    }
  });
  Rate both[2];
  const auto t0 = SteadyClock::now();
  std::thread r0([&] { both[0] = rate(seconds, getJob, &failed); });
  std::thread r1([&] { both[1] = rate(seconds, getJob, &failed); });
  r0.join();
  r1.join();
  stop = true;
  writer.join();
  const double wall = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  const double concurrent = both[0].wall + both[1].wall;
  // Wall throughput of two readers if each had a core: the sum of their CPU rates.
  const double concurrent_cpu = both[0].cpu + both[1].cpu;

  // The reconciler's read and one API listing page.
  auto t1 = SteadyClock::now();
  const double active_cpu0 = threadCpuSeconds();
  auto active = store.activeJobs();
  const double active_cpu_ms = (threadCpuSeconds() - active_cpu0) * 1e3;
  const double active_ms =
      std::chrono::duration<double, std::milli>(SteadyClock::now() - t1).count();
  if (!active || active->size() != static_cast<std::size_t>(kJobs)) failed = true;
  JobQuery page_query;
  page_query.limit = 100;
  const Rate pages = rate(
      seconds,
      [&](int) {
        auto page = store.listJobs(page_query);
        return page && page->jobs.size() == 100;
      },
      &failed);

  // Commit throughput: one change per transaction against 100 per transaction (commitAll).
  auto changeFor = [](int k) {
    Change change = jobChange(k % kJobs);
    change.job->updated_ms = kT0 + 2'000'000 + k;
    change.events[0] =
        EventRecord{0, change.job->id, 2, kT0 + k, "Running", "Running", "poll", "reconciler"};
    return change;
  };
  long long singles = 0;
  const auto c0 = SteadyClock::now();
  while (SteadyClock::now() - c0 < std::chrono::duration<double>(seconds)) {
    if (!commitUpdate(changeFor(static_cast<int>(singles)), static_cast<int>(singles % kJobs)))
      failed = true;
    ++singles;
  }
  const double single_rate =
      static_cast<double>(singles) / std::chrono::duration<double>(SteadyClock::now() - c0).count();
  long long batched = 0;
  const auto b0 = SteadyClock::now();
  while (SteadyClock::now() - b0 < std::chrono::duration<double>(seconds)) {
    std::vector<Change> batch;
    for (int k = 0; k < 100; ++k) {
      const int i = static_cast<int>((batched + k) % kJobs);
      batch.push_back(changeFor(static_cast<int>(batched) + k));
      batch.back().job->version = versions[i];
    }
    if (!store.commitAll(batch)) failed = true;
    for (int k = 0; k < 100; ++k) ++versions[static_cast<std::size_t>((batched + k) % kJobs)];
    batched += 100;
  }
  const double batch_rate =
      static_cast<double>(batched) / std::chrono::duration<double>(SteadyClock::now() - b0).count();
  // The same single commits from 8 threads at once (the launch stage's default), which group
  // commit (store/group_commit.h) applies in shared transactions.
  constexpr int kCommitThreads = 8;
  const auto stats0 = store.writeStats();
  std::atomic<long long> grouped{0};
  const auto g0 = SteadyClock::now();
  {
    std::vector<std::thread> writers;
    for (int t = 0; t < kCommitThreads; ++t) {
      writers.emplace_back([&, t] {
        for (int k = t; SteadyClock::now() - g0 < std::chrono::duration<double>(seconds);
             k += kCommitThreads) {
          if (!commitUpdate(changeFor(k), k % kJobs)) failed = true;
          ++grouped;
        }
      });
    }
    for (auto& w : writers) w.join();
  }
  const double grouped_rate = static_cast<double>(grouped.load()) /
                              std::chrono::duration<double>(SteadyClock::now() - g0).count();
  const auto stats1 = store.writeStats();
  const double per_transaction = static_cast<double>(stats1.writes - stats0.writes) /
                                 static_cast<double>(stats1.transactions - stats0.transactions);

  std::printf("                                           calls/s wall   calls/s per CPU-second\n");
  auto line = [](const char* what, const Rate& r) {
    std::printf("%-42s %12.0f %14.0f\n", what, r.wall, r.cpu);
  };
  line("SELECT 1 round trip (cached statement)", select1);
  line("getJob naive (fresh statements)", naive);
  line("getJob, 1 thread", single);
  line("getJob, reader thread A (with writer)", both[0]);
  line("getJob, reader thread B (with writer)", both[1]);
  line("listJobs limit=100 (pages)", pages);
  std::printf(
      "getJob, 2 threads + writer: %.0f /s wall; %.0f /s if each reader had a core; "
      "writer %.0f commits/s (fsync each)\n",
      concurrent, concurrent_cpu, static_cast<double>(commits.load()) / wall);
  std::printf("activeJobs (%d jobs, %d attempts): %.1f ms wall, %.1f ms CPU\n", kJobs, 2 * kJobs,
              active_ms, active_cpu_ms);
  std::printf("commit: %.0f changes/s one per transaction, %.0f changes/s 100 per commitAll\n",
              single_rate, batch_rate);
  std::printf("commit from %d threads: %.0f changes/s, %.1f per transaction (group commit)\n",
              kCommitThreads, grouped_rate, per_transaction);
  std::printf("RATIO getJob/naive (CPU): %.2f\n", single.cpu / naive.cpu);
  std::printf("RATIO getJob cost in SELECT-1 round trips (CPU): %.1f\n", select1.cpu / single.cpu);
  std::printf("RATIO getJob 2 readers+writer / 1 reader (CPU rates): %.2f\n",
              concurrent_cpu / single.cpu);
  std::printf("RATIO commitAll(100)/commit changes per second: %.1f\n", batch_rate / single_rate);
  std::printf("RATIO commit from %d threads / from 1 thread, changes per second: %.1f\n",
              kCommitThreads, grouped_rate / single_rate);

  opened->reset();
  raw->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  if (failed) {
    std::fprintf(stderr, "some operation failed\n");
    return 1;
  }
  return 0;
}
