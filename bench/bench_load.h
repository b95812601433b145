// What the API benchmarks share: keep-alive loopback clients driving a server and their
// figures (rate, p50/p99 latency, wrong answers), and a store filled with jobs to read.
// Thread-safety: load() runs its own client threads; the rest is plain functions.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "store/job_store.h"

namespace tuneplane::bench {

inline constexpr int64_t kT0 = 1'700'000'000'000;

// A positive integer from the environment variable `name`, else `fallback`.
inline int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : fallback;
}

// The id of the i-th stored job.
inline std::string jobId(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "bench-%08x", i);
  return buf;
}

// Stores `count` jobs (jobId(0..count-1)), alice's, each with one Running attempt: what the
// GET benchmarks read.
inline void fillStore(store::JobStore& store, int count) {
  for (int i = 0; i < count; ++i) {
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
    attempt.phase = phase::AttemptPhase::kRunning;
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
    job.phase = phase::JobPhase::kRunning;
    if (!store.commit(store::Change{job, {attempt}, {}})) std::abort();
  }
}

struct Figures {
  double per_second = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  int64_t good = 0;    // answers `check` accepted
  int64_t errors = 0;  // everything else: no answer, another status, a wrong body
};

// Request number `i` (0 ≤ i < clients × requests) on a client's connection.
using Send = std::function<httplib::Result(httplib::Client&, int i)>;
// Whether answer `i` is right (may record what it needs; each i is checked once).
using Check = std::function<bool(const httplib::Result&, int i)>;

// `clients` threads, each with its own keep-alive connection to ports[c % ports.size()],
// `requests` requests each.
inline Figures load(const std::vector<int>& ports, int clients, int requests, const Send& send,
                    const Check& check) {
  std::vector<std::vector<double>> latencies(clients);
  std::atomic<int64_t> errors{0};
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client http("127.0.0.1", ports[static_cast<std::size_t>(c) % ports.size()]);
      http.set_keep_alive(true);
      http.set_tcp_nodelay(true);
      http.set_read_timeout(30, 0);
      latencies[c].reserve(requests);
      for (int i = 0; i < requests; ++i) {
        const int n = c * requests + i;
        const auto t0 = std::chrono::steady_clock::now();
        auto res = send(http, n);
        latencies[c].push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        if (!check(res, n)) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  Figures f;
  f.per_second = static_cast<double>(all.size()) / seconds;
  f.p50_ms = all[all.size() / 2];
  f.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  f.errors = errors.load();
  f.good = static_cast<int64_t>(all.size()) - f.errors;
  return f;
}

inline Figures load(int port, int clients, int requests, const Send& send, const Check& check) {
  return load(std::vector<int>{port}, clients, requests, send, check);
}

// One line: rate and latencies, with their ratio to `base`'s.
inline void print(const char* name, const Figures& f, const Figures& base) {
  std::printf(
      "%-34s %9.0f req/s (%.2fx baseline)  p50 %.3f ms  p99 %.3f ms (%.2fx baseline)  "
      "errors %lld\n",
      name, f.per_second, f.per_second / base.per_second, f.p50_ms, f.p99_ms,
      f.p99_ms / base.p99_ms, static_cast<long long>(f.errors));
}

}  // namespace tuneplane::bench
