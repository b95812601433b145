// What the API benchmarks share: keep-alive loopback clients driving a server and their
// figures (rate, p50/p99 latency, wrong answers), the requests they send (a stored job's GET,
// a spec's POST) and how they check the answers, and a store filled with jobs to read.
// Thread-safety: load() and loadUntil() run on their own client threads; the rest is plain
// functions.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/job_store.h"

namespace tuneplane::bench {

inline constexpr int64_t kT0 = 1'700'000'000'000;

// A positive integer from the environment variable `name`, else `fallback`.
inline int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : fallback;
}

// The API benchmarks' sizes from the environment: TUNEPLANE_BENCH_CLIENTS (default 4),
// TUNEPLANE_BENCH_REQUESTS (GETs per client, default 5000), TUNEPLANE_BENCH_POSTS (POSTs per
// client, default 100).
struct Sizes {
  int clients = envInt("TUNEPLANE_BENCH_CLIENTS", 4);
  int gets = envInt("TUNEPLANE_BENCH_REQUESTS", 5000);
  int posts = envInt("TUNEPLANE_BENCH_POSTS", 100);
};

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

// The Authorization header of `token`'s caller.
inline httplib::Headers bearer(const std::string& token) {
  return {{"Authorization", "Bearer " + token}};
}

// GET /v1/jobs/{id} of the stored jobs jobId(0..stored-1) in turn, as `auth`.
inline Send getStoredJob(httplib::Headers auth, int stored) {
  return [auth = std::move(auth), stored](httplib::Client& http, int i) {
    return http.Get(("/v1/jobs/" + jobId(i % stored)).c_str(), auth);
  };
}

// An answer with `status`, whatever its body.
inline Check answers(int status) {
  return [status](const httplib::Result& res, int) { return res && res->status == status; };
}

// A 200 whose body has `size` bytes (what every fillStore job's GET answers).
inline Check okOfSize(std::size_t size) {
  return [size](const httplib::Result& res, int) {
    return res && res->status == 200 && res->body.size() == size;
  };
}

// POST /v1/jobs of the YAML `spec`, as `auth`.
inline Send postSpec(httplib::Headers auth, std::string spec) {
  return [auth = std::move(auth), spec = std::move(spec)](httplib::Client& http, int) {
    return http.Post("/v1/jobs", auth, spec, "application/yaml");
  };
}

// A 201 with the new job's id, kept in ids[i] (each i is written by one client thread only).
inline Check createdInto(std::vector<std::string>& ids) {
  return [&ids](const httplib::Result& res, int i) {
    if (!res || res->status != 201) return false;
    const auto body = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
    ids[static_cast<std::size_t>(i)] = body.is_object() ? body.value("id", "") : "";
    return !ids[static_cast<std::size_t>(i)].empty();
  };
}

// Request 0 of `send` on a connection of its own: its body when it answers `status`, else
// nullopt (said on stderr, after `what`). What a benchmark sends once before it measures (a
// sample answer's size, a first job).
inline std::optional<std::string> sendOnce(int port, const Send& send, int status,
                                           const char* what) {
  httplib::Client http("127.0.0.1", port);
  auto res = send(http, 0);
  if (!res || res->status != status) {
    const std::string got = res ? std::to_string(res->status) + " " + res->body : "no answer";
    std::fprintf(stderr, "%s: not %d but %s\n", what, status, got.c_str());
    return std::nullopt;
  }
  return res->body;
}

// A client connection as every benchmark drives one: keep-alive, no Nagle delay, a 30 s bound
// on a read.
inline void keepAlive(httplib::Client& http) {
  http.set_keep_alive(true);
  http.set_tcp_nodelay(true);
  http.set_read_timeout(30, 0);
}

// Request `n` on `http`: its latency (ms) appended to `latencies`, a wrong answer counted.
inline void timedRequest(httplib::Client& http, int n, const Send& send, const Check& check,
                         std::vector<double>& latencies, std::atomic<int64_t>& errors) {
  const auto t0 = std::chrono::steady_clock::now();
  auto res = send(http, n);
  latencies.push_back(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  if (!check(res, n)) ++errors;
}

// The figures of requests that took `latencies` (ms, in any order) over `seconds`.
inline Figures figures(std::vector<double> latencies, double seconds, int64_t errors) {
  Figures f;
  if (latencies.empty()) return f;
  std::sort(latencies.begin(), latencies.end());
  f.per_second = static_cast<double>(latencies.size()) / seconds;
  f.p50_ms = latencies[latencies.size() / 2];
  f.p99_ms = latencies[std::min(latencies.size() - 1, latencies.size() * 99 / 100)];
  f.errors = errors;
  f.good = static_cast<int64_t>(latencies.size()) - f.errors;
  return f;
}

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
      keepAlive(http);
      latencies[c].reserve(requests);
      for (int i = 0; i < requests; ++i) {
        timedRequest(http, c * requests + i, send, check, latencies[c], errors);
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  return figures(std::move(all), seconds, errors.load());
}

inline Figures load(int port, int clients, int requests, const Send& send, const Check& check) {
  return load(std::vector<int>{port}, clients, requests, send, check);
}

// One keep-alive connection to `port` sending request after request (n = 0, 1, …), `pause`
// apart, until `done` is set: what a reader sees while something else loads the server.
inline Figures loadUntil(int port, const std::atomic<bool>& done, const Send& send,
                         const Check& check,
                         std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
  std::vector<double> latencies;
  std::atomic<int64_t> errors{0};
  httplib::Client http("127.0.0.1", port);
  keepAlive(http);
  const auto start = std::chrono::steady_clock::now();
  for (int n = 0; !done.load(); ++n) {
    timedRequest(http, n, send, check, latencies, errors);
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return figures(std::move(latencies), seconds, errors.load());
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
