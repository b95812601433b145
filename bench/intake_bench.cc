// Intake of a burst (issue 18): N jobs POSTed by C clients to the real `tuneplane serve`
// process over the bundled simulator `tuneplane-slurmsim` (scheduling paused, so nothing
// runs), timed from the first POST until every job is in Slurm's queue (its Slurm job
// submitted and the receipt stored), and until every job is Queued in TunePlane (its SLUIDs
// read back and stored too), against the baseline measured in the same run: the simulator's
// raw rate of held submits, sent by C threads straight to it with the real REST client (one
// connection each), the same submit body TunePlane stages. Goal: intake >= 0.5x that rate.
// The same server's raw rate of the read-back (GET /job/{id}) is measured too, and with it
// the ceiling Slurm itself sets on submits that are each read back.
// Also GET /v1/jobs/{id}'s p50/p99 on one keep-alive connection while intake runs, against
// the same GETs while serve is idle (no regression).
// Where the time goes, from serve's own /metrics: slurmrestd calls by operation, control
// loop ticks; and with TUNEPLANE_BENCH_STRACE=1, serve runs under `strace -f -c` and the
// fsync/fdatasync calls per accepted job are printed (strace slows serve: a separate run;
// TUNEPLANE_BENCH_STRACE=all counts every system call, the 15 most frequent printed);
// with TUNEPLANE_BENCH_PERF=FILE, serve runs under `perf record -g` writing FILE (read it with
// `perf report -i FILE`: where serve's CPU per job goes).
// Afterwards the simulator must hold exactly one Slurm job per accepted job (by submit
// token): none lost, none twice; exit status 1 otherwise.
// With TUNEPLANE_BENCH_LIVE=1 and the live suite's TUNEPLANE_LIVE_* variables, the same runs
// against the real slurmrestd of the test cluster instead: the baseline is its raw rate, its
// partition `cpu` is set DOWN for the burst (jobs queue, none runs: the simulator's paused
// scheduling), and afterwards every job of the run is cancelled and the partition set UP.
// Env: TUNEPLANE_BENCH_JOBS (1000; live: 200), TUNEPLANE_BENCH_CLIENTS (16),
// TUNEPLANE_BENCH_SUBMIT_CONCURRENCY (server.submit_concurrency; unset: serve's default),
// TUNEPLANE_BENCH_POLL_INTERVAL (server.poll_interval, default 10s: a real site's),
// TUNEPLANE_BENCH_DIR, TUNEPLANE_BENCH_IDENTITY=per_user (every job as the Unix user
// TUNEPLANE_BENCH_UNIX_USER, default alice; root). Run: build/bench/intake_bench (needs
// build/src/cli/tuneplane and build/src/sim/tuneplane-slurmsim, which its target builds; the
// processes are started and ended through tests/support's SlurmSimProcess and ChildProcess).
#include <httplib.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_dir.h"
#include "bench_load.h"
#include "bench_measure.h"
#include "bench_site.h"
#include "catalog/artifact_verifier.h"
#include "launch/attempt_identity.h"
#include "live/live_site.h"
#include "live/live_staging_group.h"
#include "pipeline/launch_pipeline.h"
#include "slurm/rest_client.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "support/serve_harness.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace {

using namespace tuneplane;
using bench::envInt;
using bench::Figures;
using bench::kSpec;
using bench::loadAverage;
using bench::writeText;
using Steady = std::chrono::steady_clock;
using nlohmann::json;

constexpr const char* kToken = "intake-bench-token";
constexpr double kGoalRatio = 0.5;
// Bounds on a hang, not goals.
constexpr auto kIntakeLimit = std::chrono::minutes(10);
constexpr auto kStopLimit = std::chrono::seconds(20);
// The GET reader's pause between requests during the burst (about 200 reads a second);
// TUNEPLANE_BENCH_READER_PAUSE_MS changes it (0: back to back, as before 2026-12-05).
constexpr int kReaderPauseMs = 5;

double secondsSince(Steady::time_point t0) {
  return std::chrono::duration<double>(Steady::now() - t0).count();
}

const httplib::Headers& bearer() {
  static const httplib::Headers headers = bench::bearer(kToken);
  return headers;
}

const char* perUserUnixUser();

// serve's server: section, appended to the site file `site` (its database in `dir`).
void appendServer(const std::string& site, const std::string& dir, int port) {
  std::string server =
      "server:\n  listen: 127.0.0.1:" + std::to_string(port) + "\n  db: " + dir +
      "/serve.db\n  poll_interval: " + std::to_string(envInt("TUNEPLANE_BENCH_POLL_INTERVAL", 10)) +
      "s\n";
  if (const int c = envInt("TUNEPLANE_BENCH_SUBMIT_CONCURRENCY", 0); c > 0) {
    server += "  submit_concurrency: " + std::to_string(c) + "\n";
  }
  if (const int t = envInt("TUNEPLANE_BENCH_THREADS", 0); t > 0) {
    server += "  threads: " + std::to_string(t) + "\n";
  }
  server +=
      "  tokens:\n    - user: alice\n      token_sha256: " + staging::sha256Hex(kToken) + "\n";
  if (const char* unix_user = perUserUnixUser()) {
    server += "      unix_user: " + std::string(unix_user) + "\n";
  }
  std::ofstream(site, std::ios::binary | std::ios::app) << server;
}

// TUNEPLANE_BENCH_IDENTITY=per_user: the simulator's site runs every job as the Unix user
// TUNEPLANE_BENCH_UNIX_USER (default alice; the host and the simulator must know it), so the
// intake of per_user (a submit as the user, its token cached) can be set beside shared's.
const char* perUserUnixUser() {
  const char* identity = std::getenv("TUNEPLANE_BENCH_IDENTITY");
  if (identity == nullptr || std::string(identity) != "per_user") return nullptr;
  const char* user = std::getenv("TUNEPLANE_BENCH_UNIX_USER");
  return user != nullptr && *user != '\0' ? user : "alice";
}

// The site of `site_file` made per_user: slurm.identity, and the one-time step for the user
// (users/<name>: ours, the user's group, 02750; every directory of the bench's own above it,
// `bench_root` included, searchable). Needs
// root for the group. False (said why) when it cannot be done.
bool makePerUser(const std::string& site_file, const std::string& staging_root,
                 const std::string& bench_root) {
  const char* user = perUserUnixUser();
  if (user == nullptr) return true;
  const passwd* pw = ::getpwnam(user);
  if (pw == nullptr || ::geteuid() != 0) {
    std::fprintf(stderr, "TUNEPLANE_BENCH_IDENTITY=per_user: needs root and the user %s\n", user);
    return false;
  }
  std::string text = test::readFile(site_file);
  text.replace(text.find("slurm:\n"), 7, "slurm:\n  identity: per_user\n");
  writeText(site_file, text);
  // The bench's own directories down to the staging root, and nothing above its root (never
  // /tmp itself: that would take its sticky, world-writable mode away).
  for (std::filesystem::path p = staging_root; p.string().size() >= bench_root.size();
       p = p.parent_path()) {
    ::chmod(p.c_str(), 0755);
    if (p.string() == bench_root) break;
  }
  const std::string mine = staging_root + "/users/" + user;
  std::filesystem::create_directories(mine);
  ::chmod((staging_root + "/users").c_str(), 0755);
  return ::chown(mine.c_str(), ::geteuid(), pw->pw_gid) == 0 && ::chmod(mine.c_str(), 02750) == 0;
}

// The test cluster's scontrol, run with its slurm.conf; false (said on stderr) on a failure.
bool scontrol(const live::Live& live, const std::string& conf, const std::vector<std::string>& args,
              const std::string& scratch) {
  const test::ProcessResult done = live::runSlurmCommand(live, conf, args, scratch);
  if (done.exit_code == 0) return true;
  std::fprintf(stderr, "%s %s: %s%s\n", args.front().c_str(), args.at(1).c_str(), done.err.c_str(),
               done.out.c_str());
  return false;
}

// Where the jobs go: the simulator (scheduling paused), or the test cluster's real
// slurmrestd with its partition `cpu` DOWN for the run; the destructor leaves the cluster
// as it was (every job of its user cancelled, the partition UP).
struct Target {
  std::string name;  // printed with the baseline
  std::string site_file;
  std::unique_ptr<test::SlurmSimProcess> sim;
  std::optional<live::Live> live;
  std::string slurm_conf, scratch, live_dir;

  Target() = default;
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;
  ~Target() {
    if (!live) return;
    scontrol(*live, slurm_conf, {"scancel", "--user=" + live->user}, scratch);
    scontrol(*live, slurm_conf, {"scontrol", "update", "PartitionName=cpu", "State=UP"}, scratch);
    if (!live_dir.empty()) staging::PosixStagingFs().removeTree(live_dir);  // staged: read-only
  }
};

// The simulator, or with `live_run` (TUNEPLANE_BENCH_LIVE=1) the test cluster; nullptr (said why)
// when it cannot be had.
std::unique_ptr<Target> makeTarget(bool live_run, const std::string& root, int port) {
  auto target = std::make_unique<Target>();
  target->scratch = root;
  if (live_run) {
    target->live = live::liveConfig();
    if (!target->live) {
      std::fprintf(stderr, "TUNEPLANE_BENCH_LIVE: %s\n", live::kSkipReason);
      return nullptr;
    }
    target->slurm_conf = live::liveSlurmConf(*target->live);
    if (target->slurm_conf.empty()) {
      std::fprintf(stderr, "TUNEPLANE_BENCH_LIVE: no slurm.conf: set TUNEPLANE_LIVE_SLURM_CONF\n");
      return nullptr;
    }
    // Run as root, serve stages through the live user's group (as the live suite's serve).
    std::string staging;
    if (::geteuid() == 0 && target->live->user != "root") {
      staging = "staging:\n  group: " + live::stagingGroup(target->live->user) + "\n";
    }
    auto dir = live::makeLiveSite(*target->live, "intake-bench-", target->live->url, "", staging);
    if (!dir) {
      std::fprintf(stderr, "cannot make a site under %s\n", target->live->shared_dir.c_str());
      return nullptr;
    }
    target->name = "slurmrestd";
    target->live_dir = *dir;
    target->site_file = *dir + "/site.yaml";
    appendServer(target->site_file, *dir, port);
    return target;
  }
  const std::string key_file = root + "/jwt.key";
  writeText(key_file, "0123456789abcdef0123456789abcdef-intake-bench-key");
  // serve refuses a key others can read (doctor/credential_checks.h).
  std::filesystem::permissions(
      key_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  // The simulator (its output in ROOT/slurmsim.out|.err), scheduling paused.
  target->sim = test::SlurmSimProcess::start(root, key_file, {"--min-job-age", "3600"});
  if (!target->sim) return nullptr;
  if (target->sim->setFaults({{"pause_scheduling", true}}) != 200) {
    std::fprintf(stderr, "cannot pause the simulator's scheduling\n");
    return nullptr;
  }
  target->name = "simulator";
  const std::string site_dir = root + "/site";
  target->site_file = bench::writeSite(site_dir, target->sim->url(), key_file);
  appendServer(target->site_file, site_dir, port);
  if (!makePerUser(target->site_file, site_dir + "/staging", root)) return nullptr;
  target->name = perUserUnixUser() != nullptr ? "simulator, per_user" : "simulator";
  return target;
}

// Held submits of the raw baseline, cancelled before the burst (the test cluster's queue
// then holds the burst's jobs only; the simulator never runs a held job anyway).
bool cancelRawSubmits(const Target& target) {
  if (!target.live) return true;
  return scontrol(*target.live, target.slurm_conf,
                  {"scancel", "--user=" + target.live->user, "--state=PENDING"}, target.scratch) &&
         scontrol(*target.live, target.slurm_conf,
                  {"scontrol", "update", "PartitionName=cpu", "State=DOWN"}, target.scratch);
}

// Jobs of alice in phase Queued (one listing page of up to 1000, then the next pages).
int64_t queuedCount(httplib::Client& http) {
  int64_t n = 0;
  std::string cont;
  for (;;) {
    std::string path = "/v1/jobs?phase=Queued&limit=1000";
    if (!cont.empty()) path += "&continue=" + httplib::detail::encode_query_param(cont);
    auto res = http.Get(path, bearer());
    if (!res || res->status != 200) return -1;
    const json page = json::parse(res->body, nullptr, false);
    if (!page.is_object()) return -1;
    n += static_cast<int64_t>(page.value("items", json::array()).size());
    cont = page.value("continue", "");
    if (cont.empty()) return n;
  }
}

// Two counts from serve's /metrics, what the watcher polls during the burst (listing a
// thousand jobs every 20 ms cost serve about a tenth of its CPU, which the bench then
// measured as intake's): receipts stored (`tuneplane_submit_latency_seconds_count`: the job
// is in Slurm's queue) and jobs in phase Queued (`tuneplane_jobs{phase="Queued"}`: its SLUIDs
// read back and stored too). -1 each when /metrics did not answer.
struct IntakeCounts {
  int64_t receipts = -1;
  int64_t queued = -1;
};

IntakeCounts intakeCounts(httplib::Client& http) {
  auto res = http.Get("/metrics", bearer());
  if (!res || res->status != 200) return {};
  const auto count = [&body = res->body](const std::string& line) -> int64_t {
    const auto at = body.find("\n" + line + " ");
    if (at == std::string::npos) return 0;  // nothing counted yet: no line
    return std::atoll(body.c_str() + at + 2 + line.size());
  };
  return {count("tuneplane_submit_latency_seconds_count"),
          count("tuneplane_jobs{phase=\"Queued\"}")};
}

// serve's /metrics lines that say where the time went.
std::map<std::string, double> metrics(int port) {
  std::map<std::string, double> out;
  httplib::Client http("127.0.0.1", port);
  auto res = http.Get("/metrics", bearer());
  if (!res || res->status != 200) return out;
  std::istringstream lines(res->body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("tuneplane_slurm_requests_total", 0) != 0 &&
        line.rfind("tuneplane_control_ticks_total", 0) != 0) {
      continue;
    }
    const auto space = line.rfind(' ');
    out[line.substr(0, space)] = std::atof(line.c_str() + space + 1);
  }
  return out;
}

// A raw rate against the server: `clients` threads, each its own connected client, `total`
// calls of `call(client, i)` (true: answered as expected) spread over them, timed from the
// first. Returns calls/s (0 on an error, said with `what`).
double rawRate(const catalog::SlurmSite& slurm_site, int clients, size_t total, const char* what,
               const std::function<bool(slurm::SlurmRestClient&, size_t)>& call) {
  std::vector<std::unique_ptr<slurm::SlurmRestClient>> rest;
  for (int c = 0; c < clients; ++c) {
    auto client = slurm::SlurmRestClient::fromSite(slurm_site);
    if (!client) return 0;
    (*client)->ping();  // connect and mint a token before the clock starts
    rest.push_back(std::move(*client));
  }
  std::atomic<size_t> next{0};
  std::atomic<int> errors{0};
  const auto t0 = Steady::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (size_t i = next++; i < total; i = next++) {
        if (!call(*rest[static_cast<size_t>(c)], i)) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = secondsSince(t0);
  if (errors > 0) {
    std::fprintf(stderr, "raw %s: %d errors\n", what, errors.load());
    return 0;
  }
  return static_cast<double>(total) / seconds;
}

// The simulator's raw rate of held submits: `total` submits of `body` (hold: true) with fresh
// tokens. Returns submits/s (0 on an error); `ids` gets the jobs' numeric ids.
double rawSubmitRate(const catalog::SlurmSite& slurm_site, const json& body, int clients, int total,
                     std::vector<uint64_t>* ids = nullptr) {
  std::vector<uint64_t> made(static_cast<size_t>(total));
  const double rate = rawRate(slurm_site, clients, made.size(), "submits",
                              [&](slurm::SlurmRestClient& client, size_t i) {
                                json b = body;
                                char token[40];
                                std::snprintf(token, sizeof token, "raw-%08zu", i);
                                b["job"]["comment"] = token;
                                b["job"]["hold"] = true;
                                auto receipt = client.submit(b);
                                if (receipt) made[i] = receipt->job_id;
                                return receipt.has_value();
                              });
  if (rate > 0 && ids != nullptr) *ids = std::move(made);
  return rate;
}

// The raw rate of the read-back DESIGN asks after every submit (GET /job/<numeric id>, which
// is how TunePlane learns a job's SLUIDs), over the held jobs of the baseline, each read once.
// Returns reads/s (0 on an error).
double rawReadBackRate(const catalog::SlurmSite& slurm_site, const std::vector<uint64_t>& ids,
                       int clients) {
  return rawRate(slurm_site, clients, ids.size(), "read-backs",
                 [&](slurm::SlurmRestClient& client, size_t i) {
                   auto records = client.getJob(std::to_string(ids[i]));
                   return records && !records->empty();
                 });
}

// Calls per system call from `strace -c` output: name → calls.
std::map<std::string, long> straceCalls(const std::string& text) {
  std::map<std::string, long> out;
  std::istringstream lines(text);
  std::string line;
  const std::regex row(R"(^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$)");
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, m, row) && m[2] != "total") {
      out[m[2]] = std::atol(m[1].str().c_str());
    }
  }
  return out;
}

int run() {
  const bool live_run = std::getenv("TUNEPLANE_BENCH_LIVE") != nullptr;
  const int jobs = envInt("TUNEPLANE_BENCH_JOBS", live_run ? 200 : 1000);
  const int clients = envInt("TUNEPLANE_BENCH_CLIENTS", 16);
  const char* strace_what = std::getenv("TUNEPLANE_BENCH_STRACE");
  const bool use_strace = strace_what != nullptr;
  const bool strace_all = use_strace && std::string(strace_what) == "all";
  const char* perf_file = std::getenv("TUNEPLANE_BENCH_PERF");
  const bool wrapped = use_strace || perf_file != nullptr;  // serve is a child of the tool
  bench::BenchDir dir;
  if (!dir.ok()) return 1;
  const std::string root = dir.path();
  const int port = test::freeLoopbackPort();
  auto target = makeTarget(live_run, root, port);
  if (!target) return 1;
  std::printf("intake_bench: %u cores, load average %.2f; %d jobs by %d clients, on the %s\n",
              std::thread::hardware_concurrency(), loadAverage(), jobs, clients,
              target->name.c_str());
  const std::string& site_file = target->site_file;
  auto site = pipeline::loadSiteContext(site_file, pipeline::SiteEnvironment{});
  if (!site) {
    std::fprintf(stderr, "site: %s\n", site.error().front().describe().c_str());
    return 1;
  }

  // Baseline: the body TunePlane would stage for this spec, sent raw and held.
  catalog::ArtifactVerifier verifier;
  launch::OpenSslRandomSource random;
  auto prepared = pipeline::prepareText(kSpec, *site, pipeline::PrepareOptions{}, verifier, random);
  if (!prepared) {
    std::fprintf(stderr, "spec: %s\n", prepared.error().front().describe().c_str());
    return 1;
  }
  // The simulator's best rate over a few sender counts (it serves a fixed number of
  // connections at once), each after a warm-up.
  double raw_rate = 0;
  std::vector<uint64_t> raw_ids;
  for (int threads : {1, 4, 8, clients}) {
    rawSubmitRate(site->site.slurm, prepared->submit_body, threads, 50);  // warm-up
    const double rate =
        rawSubmitRate(site->site.slurm, prepared->submit_body, threads, jobs, &raw_ids);
    if (rate <= 0) return 1;
    std::printf("baseline: %s's raw held submits, %2d threads  %8.1f submits/s\n",
                target->name.c_str(), threads, rate);
    raw_rate = std::max(raw_rate, rate);
  }
  // What the per-job read-back costs the same server (the last baseline's jobs, each read
  // once), and so the most Slurm itself could take in of submits each followed by its read:
  // the intake ceiling if serve cost nothing.
  double read_rate = 0;
  for (int threads : {8, clients}) {
    const double rate = rawReadBackRate(site->site.slurm, raw_ids, threads);
    if (rate <= 0) return 1;
    std::printf("baseline: %s's raw GET /job/{id} (the read-back), %2d threads  %8.1f reads/s\n",
                target->name.c_str(), threads, rate);
    read_rate = std::max(read_rate, rate);
  }
  const double pair_rate = 1 / (1 / raw_rate + 1 / read_rate);
  std::printf(
      "ceiling: a submit and its read-back each, at those rates: %.1f jobs/s = %.3fx the raw "
      "submits\n",
      pair_rate, pair_rate / raw_rate);

  if (!cancelRawSubmits(*target)) return 1;

  // serve, optionally under strace or perf.
  // TUNEPLANE_BENCH_SERVE: another build's `tuneplane` as serve (an A/B of two versions).
  const char* serve_binary = std::getenv("TUNEPLANE_BENCH_SERVE");
  std::vector<std::string> serve_args = {
      serve_binary != nullptr ? std::string(serve_binary) : test::tuneplaneBinary(), "serve",
      "--site", site_file};
  if (use_strace) {
    serve_args.insert(serve_args.begin(), {"strace", "-f", "-c", "-o", root + "/strace.txt"});
    if (!strace_all) {
      serve_args.insert(serve_args.begin() + 3,
                        {"-e", "trace=fsync,fdatasync,sync_file_range,syncfs"});
    }
  } else if (perf_file != nullptr) {
    serve_args.insert(serve_args.begin(), {"perf", "record", "-F", "999",
                                           "--call-graph=dwarf,16384", "-o", perf_file, "--"});
  }
  auto serve = test::ChildProcess::start(serve_args, {.scratch = root}, "serve",
                                         test::ChildProcess::Output::kTruncate);
  if (!serve) return 1;
  httplib::Client http("127.0.0.1", port);
  http.set_keep_alive(true);
  if (!test::waitUntil(
          [&] {
            auto res = http.Get("/healthz");
            return res && res->status == 200;
          },
          test::kServerStartLimit)) {
    std::fprintf(stderr, "serve did not answer /healthz; see %s/serve.err\n", root.c_str());
    return 1;
  }
  // One job first, to GET while intake runs, and once it is Queued the idle figures.
  const bench::Send post = bench::postSpec(bearer(), kSpec);
  const auto first = bench::sendOnce(port, post, 201, "POST /v1/jobs");
  if (!first) return 1;
  const std::string sample_id = json::parse(*first).value("id", "");
  if (!test::waitUntil([&] { return queuedCount(http) == 1; }, std::chrono::seconds(60))) {
    std::fprintf(stderr, "the first job never became Queued\n");
    return 1;
  }
  // GET /v1/jobs/{id} of that job on one keep-alive connection.
  const bench::Send get = [&sample_id](httplib::Client& client, int) {
    return client.Get("/v1/jobs/" + sample_id, bearer());
  };
  const Figures idle = bench::load(port, 1, 2000, get, bench::answers(200));
  const auto before = metrics(port);

  // The burst.
  std::vector<std::string> ids(static_cast<size_t>(jobs));
  std::atomic<int> next{0};
  std::atomic<int> post_errors{0};
  std::atomic<bool> done{false};
  const bench::Check created = bench::createdInto(ids);
  // CPU used during intake by serve (not under strace or perf: serve is their child then), the
  // simulator and this process (the clients and the GET reader): on a machine Slurm shares,
  // serve's CPU per job bounds intake.
  const auto cpuNow = [&] {
    return std::array<double, 3>{wrapped ? -1 : bench::processCpuSeconds(serve->pid()),
                                 target->sim ? bench::processCpuSeconds(target->sim->pid()) : -1,
                                 bench::processCpuSeconds(::getpid())};
  };
  const auto cpu_before = cpuNow();
  Figures busy;
  // A user's status reads, paced: a reader sending GETs back to back took a sixth of serve's
  // CPU (1,400 GETs a second), which the bench then counted against intake.
  const char* pause_env = std::getenv("TUNEPLANE_BENCH_READER_PAUSE_MS");
  const std::chrono::milliseconds reader_pause(pause_env != nullptr ? std::atoi(pause_env)
                                                                    : kReaderPauseMs);
  std::thread reader(
      [&] { busy = bench::loadUntil(port, done, get, bench::answers(200), reader_pause); });
  const auto t0 = Steady::now();
  std::vector<std::thread> posters;
  for (int c = 0; c < clients; ++c) {
    posters.emplace_back([&] {
      httplib::Client client("127.0.0.1", port);
      bench::keepAlive(client);
      for (int i = next++; i < jobs; i = next++) {
        if (!created(post(client, i), i)) ++post_errors;
      }
    });
  }
  for (auto& t : posters) t.join();
  const double posted_s = secondsSince(t0);
  httplib::Client watcher("127.0.0.1", port);
  int64_t queued = 0;
  double intake_s = -1;  // until the last receipt is stored
  const bool all_queued = test::waitUntil(
      [&] {
        const IntakeCounts counts = intakeCounts(watcher);
        if (intake_s < 0 && counts.receipts >= jobs + 1) intake_s = secondsSince(t0);
        queued = counts.queued;
        return queued == jobs + 1;
      },
      kIntakeLimit);
  const double queued_s = secondsSince(t0);
  if (intake_s < 0) intake_s = queued_s;
  done = true;
  reader.join();
  const auto cpu_after = cpuNow();
  const auto after = metrics(port);
  if (!all_queued) {
    std::fprintf(stderr, "after %.0f s only %lld of %d jobs Queued\n", queued_s,
                 static_cast<long long>(queued), jobs + 1);
  }
  // The gauge's count, confirmed once by the API's own listing.
  const int64_t listed = queuedCount(watcher);
  if (all_queued && listed != jobs + 1) {
    std::fprintf(stderr, "the gauge said %d Queued, GET /v1/jobs?phase=Queued lists %lld\n",
                 jobs + 1, static_cast<long long>(listed));
  }
  const double intake_rate = jobs / intake_s;
  const double queued_rate = jobs / queued_s;
  std::printf("POST answered: %d jobs in %.2f s (%d errors)\n", jobs, posted_s, post_errors.load());
  std::printf(
      "intake: %d jobs POSTed -> all in Slurm's queue, receipts stored  %8.1f jobs/s (%.2f s)\n",
      jobs, intake_rate, intake_s);
  std::printf(
      "        and all Queued in TunePlane, SLUIDs read back and stored %8.1f jobs/s (%.2f s)\n",
      queued_rate, queued_s);
  std::printf(
      "ratio intake / raw held submits: %.3fx (goal >= %.1fx: %s); with the read-backs %.3fx\n",
      intake_rate / raw_rate, kGoalRatio, intake_rate / raw_rate >= kGoalRatio ? "met" : "NOT met",
      queued_rate / raw_rate);
  std::printf("GET /v1/jobs/{id} idle:        p50 %.3f ms  p99 %.3f ms  (%lld, %lld errors)\n",
              idle.p50_ms, idle.p99_ms, static_cast<long long>(idle.good + idle.errors),
              static_cast<long long>(idle.errors));
  std::printf(
      "GET /v1/jobs/{id} during intake (%lld ms apart): p50 %.3f ms  p99 %.3f ms  (%lld, %lld "
      "errors); "
      "p99 ratio %.2fx\n",
      static_cast<long long>(reader_pause.count()), busy.p50_ms, busy.p99_ms,
      static_cast<long long>(busy.good + busy.errors), static_cast<long long>(busy.errors),
      idle.p99_ms > 0 ? busy.p99_ms / idle.p99_ms : 0);
  std::printf("CPU during intake (%u cores x %.2f s = %.1f CPU-s there were):",
              std::thread::hardware_concurrency(), queued_s,
              std::thread::hardware_concurrency() * queued_s);
  const char* const cpu_names[] = {"serve", "simulator", "bench clients"};
  for (size_t i = 0; i < cpu_before.size(); ++i) {
    if (cpu_before[i] < 0 || cpu_after[i] < 0) continue;
    std::printf(" %s %.1f s (%.2f ms/job)", cpu_names[i], cpu_after[i] - cpu_before[i],
                (cpu_after[i] - cpu_before[i]) * 1000 / jobs);
  }
  std::printf("\n");
  std::printf("where the time went (serve's /metrics, during intake):\n");
  for (const auto& [name, value] : after) {
    const double delta = value - (before.count(name) ? before.at(name) : 0);
    if (delta != 0)
      std::printf("  %-80s %8.0f (%.2f per job)\n", name.c_str(), delta, delta / jobs);
  }

  // None lost, none twice: the simulator's jobs by submit token.
  auto lister = slurm::SlurmRestClient::fromSite(site->site.slurm);
  if (!lister) return 1;
  auto listing = (*lister)->listJobs(std::nullopt);
  if (!listing) {
    std::fprintf(stderr, "GET /jobs/: %s\n", listing.error().describe().c_str());
    return 1;
  }
  std::map<std::string, int> by_token;
  for (const auto& r : listing->jobs) {
    // The test cluster keeps the ended jobs of earlier runs a while: this run's all pend.
    const bool pending = !r.job_state.empty() && r.job_state.front() == "PENDING";
    if (launch::isValidSubmitToken(r.comment) && (!target->live || pending)) ++by_token[r.comment];
  }
  int twice = 0;
  for (const auto& [token, n] : by_token) twice += n > 1 ? 1 : 0;
  std::printf("Slurm holds %zu TunePlane jobs (%d accepted + 1), %d submitted twice\n",
              by_token.size(), jobs, twice);
  // SIGTERM to serve's group (under strace or perf, the tool and serve), as serve's unit stops it.
  ::kill(-serve->pid(), SIGTERM);
  serve->waitExit(kStopLimit);
  target.reset();  // the simulator: SIGTERM, a bounded wait; the test cluster: as it was
  if (use_strace) {
    const auto calls = straceCalls(test::readFile(root + "/strace.txt"));
    std::vector<std::pair<long, std::string>> by_count;
    long total = 0, syncs = 0;
    for (const auto& [name, n] : calls) {
      by_count.emplace_back(n, name);
      total += n;
      if (name.find("sync") != std::string::npos) syncs += n;
    }
    std::sort(by_count.rbegin(), by_count.rend());
    if (by_count.size() > 15) by_count.resize(15);
    for (const auto& [n, name] : by_count) {
      std::printf("  strace: %-16s %8ld calls (%.2f per job, whole run)\n", name.c_str(), n,
                  static_cast<double>(n) / (jobs + 1));
    }
    std::printf("  strace: fsync-like calls in all: %.2f per job\n",
                static_cast<double>(syncs) / (jobs + 1));
    if (strace_all) {
      std::printf("  strace: system calls in all: %.1f per job\n",
                  static_cast<double>(total) / (jobs + 1));
    }
  }
  std::printf("load average %.2f\n", loadAverage());
  const bool ok = all_queued && listed == jobs + 1 && post_errors == 0 && twice == 0 &&
                  static_cast<int>(by_token.size()) == jobs + 1;
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  ::signal(SIGPIPE, SIG_IGN);
  return run();
}
