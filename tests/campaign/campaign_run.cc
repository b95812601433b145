// See campaign_run.h.
#include "campaign/campaign_run.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <httplib.h>
#include <stdlib.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "../pipeline/site_fixture.h"
#include "campaign/host_faults.h"
#include "campaign/ledger.h"
#include "campaign/replica_set.h"
#include "staging/stager.h"
#include "support/pg_cluster.h"
#include "support/serve_harness.h"

namespace tuneplane::campaign {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr const char* kUserToken = "campaign-alice-token-5e1d";
constexpr const char* kOpsToken = "campaign-ops-token-90ac";  // an admin
// The site's slurm.request_timeout; kSlowAnswers holds every answer longer than it.
constexpr int kRequestTimeoutMs = 2000;
constexpr int kSlowAnswerMs = kRequestTimeoutMs + 700;
// Replicas: the lease (server.lease_seconds), short so that failovers come quickly.
constexpr int kLeaseSeconds = 2;
constexpr int kReplicas = 3;
// Bounds on a hang, not timing assertions: every job settling once the faults stop (under
// AddressSanitizer everything is several times slower), a duplicate being cancelled while the
// cluster is held busy, a purge being carried out.
#if defined(__SANITIZE_ADDRESS__)
constexpr auto kSettleLimit = 240s;
#else
constexpr auto kSettleLimit = 150s;
#endif
constexpr auto kBusyLimit = 60s;
// How long a full staging filesystem is held for its job's stage to fail: intake may be
// paused after 429 bursts (up to a minute), and then the job is not staged while it is full.
constexpr auto kFullLimit = 10s;

// The job's command: its own ledger's prologue (ledger.h: a start record now, an end record
// when it exits), then a line in its attempt's output/runs — the two witnesses of how many
// times it ran — then its work. No double quotes: hetSpec does not quote the script.
std::string witnessed(const std::string& work) {
  return ledgerPrologue() + "; echo ${SLURM_JOB_ID:-x} >> $TUNEPLANE_OUTPUT_DIR/runs; " + work;
}

std::string specFor(const Step& s) {
  using pipeline::testing::cpuSpec;
  switch (s.job) {
    case JobKind::kShort:
      return cpuSpec(witnessed("echo ok"), "", "short");
    case JobKind::kLong:
      return cpuSpec(witnessed("sleep " + std::to_string(s.sleep_s) + "; echo ok"), "", "long");
    case JobKind::kHet:
      return pipeline::testing::hetSpec(witnessed("echo het"));
    case JobKind::kFailing:
      return cpuSpec(witnessed("exit 3"), pipeline::testing::retryBlock(2, 1, "any"), "failing");
  }
  return "";
}

std::string tokenLine(const std::string& user, const std::string& token, bool admin) {
  return "    - user: " + user + "\n      token_sha256: " + staging::sha256Hex(token) +
         "\n      admin: " + (admin ? "true" : "false") + "\n";
}

class Run {
 public:
  explicit Run(const CampaignOptions& options) : options_(options) {
    outcome_.seed = options.seed;
    outcome_.mode = options.mode;
  }
  ~Run() {
    serves_.reset();  // SIGCONT what is stopped; the serves, then their proxies
    sim_.reset();     // its jobs end before their attempt directories go
    site_.reset();
    if (pg_ != nullptr && !db_name_.empty()) pg_->dropDatabase(db_name_);
    std::error_code ignored;
    if (!scratch_.empty()) fs::remove_all(scratch_, ignored);
  }

  CampaignOutcome go() {
    const auto began = Steady::now();
    const std::vector<Step> schedule = makeSchedule(options_.seed, options_.size, options_.mode);
    say("campaign seed " + std::to_string(options_.seed) + ", " + describe(options_.mode) + " (" +
        replayCommand(options_.seed, options_.mode) + "): " + std::to_string(options_.size.jobs) +
        " jobs, " + std::to_string(options_.size.faults) + " faults\n" + describe(schedule));
    if (!start()) return outcome_;
    outcome_.started = true;
    for (const Step& s : schedule) {
      // The schedule's pace: real time passes between steps while the real serve processes
      // and the simulator run the jobs already in (what a step finds depends on it).
      std::this_thread::sleep_for(std::chrono::milliseconds(s.pause_ms));
      fireDueCancels(false);
      if (s.is_fault) {
        strike(s);
      } else {
        submit(s);
      }
    }
    // The faults stop; what the user asked for still happens.
    clearFaults();
    fireDueCancels(true);
    const auto settling = Steady::now();
    settle();
    say("  the faults stopped after " + std::to_string(seconds(settling - began)) +
        " s; every job settled " + std::to_string(seconds(Steady::now() - settling)) + " s later");
    gather();
    outcome_.verdict = checkInvariants(observed_);
    keepEvidence();
    for (std::string& unclean : serves_->stopAll())
      outcome_.verdict.violations.push_back(std::move(unclean));
    outcome_.serve_starts_refused = serves_->startsRefused();
    outcome_.seconds = std::chrono::duration<double>(Steady::now() - began).count();
    return outcome_;
  }

 private:
  static int seconds(Steady::duration d) {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
  }
  bool replicated() const { return options_.mode == CampaignMode::kReplicasPostgres; }
  // With TUNEPLANE_CAMPAIGN_KEEP=DIR, a run with a violation, or with a requeued job that
  // Slurm started again before TunePlane cancelled it, leaves serve's logs (each replica's),
  // the simulator's history and every job (with its events) in DIR/seed-N/ for a post-mortem.
  void keepEvidence() const {
    const char* keep = std::getenv("TUNEPLANE_CAMPAIGN_KEEP");
    if (keep == nullptr ||
        (outcome_.verdict.violations.empty() && outcome_.verdict.refused_starts == 0)) {
      return;
    }
    const fs::path dir = fs::path(keep) / ("seed-" + std::to_string(options_.seed));
    std::error_code ignored;
    fs::create_directories(dir, ignored);
    for (size_t i = 0; i < serves_->size(); ++i) {
      for (const char* log : {"serve.out", "serve.err"}) {
        const std::string to = replicated() ? std::to_string(i) + "-" + log : log;
        fs::copy_file(fs::path(serves_->dir(i)) / log, dir / to,
                      fs::copy_options::overwrite_existing, ignored);
      }
    }
    test::writeFile(dir / "slurm.json", observed_.slurm.dump(1));
    json jobs = json::object();
    for (const auto& [id, job] : observed_.jobs) {
      jobs[id] = {{"job", job},
                  {"events", observed_.events.count(id) ? observed_.events.at(id) : json()}};
    }
    test::writeFile(dir / "jobs.json", jobs.dump(1));
    say("  evidence kept in " + dir.string());
  }

  void say(const std::string& line) const {
    if (options_.verbose) std::cout << line << std::endl;
  }

  bool start() {
    std::string tmpl = (fs::temp_directory_path() / "tp-campaign-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return false;
    scratch_ = tmpl;
    const std::string key = scratch_ + "/jwt.key";
    test::writeFile(key, pipeline::testing::kJwtKey);
    // Room for many jobs at once: the nodes are bookkeeping in the simulator.
    const std::string cluster = scratch_ + "/cluster.yaml";
    test::writeFile(cluster,
                    "nodes:\n"
                    "  - {name: gpu1, cpus: 32, memory_mb: 65536, gpus: 8, gpu_type: h100, "
                    "features: [h100]}\n"
                    "  - {name: gpu2, cpus: 32, memory_mb: 65536, gpus: 8, gpu_type: a100, "
                    "features: [a100]}\n"
                    "  - {name: cpu1, cpus: 64, memory_mb: 131072}\n"
                    "partitions:\n"
                    "  - {name: gpu, nodes: [gpu1, gpu2]}\n"
                    "  - {name: cpu, nodes: [cpu1], default: true}\n");
    // Finished jobs stay listed for the whole run (only the purge faults forget one).
    sim_ = test::SlurmSimProcess::start(scratch_, key,
                                        {"--epilog-ms", "300", "--kill-wait-ms", "500",
                                         "--min-job-age", "86400", "--cluster", cluster});
    if (!sim_) return false;
    const std::string fake_ray = pipeline::testing::writeFakeRay(scratch_);
    std::string server = "server:\n  poll_interval: 200ms\n";
    if (replicated()) server += "  lease_seconds: " + std::to_string(kLeaseSeconds) + "\n";
    // TUNEPLANE_CAMPAIGN_IDENTITY=per_user (root): alice's jobs run as the Unix user `nobody`
    // (every Debian host has it), submitted, read and cancelled as that user, staged under
    // users/nobody/ (issue 44).
    const char* identity = std::getenv("TUNEPLANE_CAMPAIGN_IDENTITY");
    const bool per_user = identity != nullptr && std::string(identity) == "per_user";
    server += "  tokens:\n" + tokenLine("alice", kUserToken, false) +
              (per_user ? "      unix_user: nobody\n" : "") + tokenLine("ops", kOpsToken, true);
    site_ = std::make_unique<pipeline::testing::SiteDir>(
        sim_->url(), false, "    PYTHONPATH: " + fake_ray + "/py\n",
        server + "ray:\n  executable: " + fake_ray + "/ray\n  join_timeout_seconds: 20\n");
    site_->addSlurmYaml("  request_timeout: " + std::to_string(kRequestTimeoutMs) + "ms\n");
    if (per_user && !makePerUser()) return false;
    host_ = std::make_unique<HostFaults>(scratch_ + "/host-faults");
    if (!replicated()) {
      serves_ = ReplicaSet::single(site_->site(), site_->dir() + "/tuneplane.db", site_->dir(),
                                   serveEnv());
      return serves_ != nullptr;
    }
    std::string why;
    pg_ = test::sharedPostgres(why);
    if (pg_ == nullptr) {
      outcome_.start_error = "no PostgreSQL: " + why;
      return false;
    }
    db_name_ = pg_->createDatabase(why);
    if (db_name_.empty()) {
      outcome_.start_error = "no database: " + why;
      return false;
    }
    serves_ = ReplicaSet::replicas(kReplicas, site_->site(), *pg_, db_name_, site_->dir(),
                                   serveEnv(), why);
    if (!serves_) outcome_.start_error = why;
    return serves_ != nullptr;
  }

  // The one-time step for `nobody` and a path it can walk (root only); false, said why, else.
  bool makePerUser() {
    const passwd* nobody = ::getpwnam("nobody");
    if (nobody == nullptr || ::geteuid() != 0) {
      outcome_.start_error = "per_user needs root and the user nobody";
      return false;
    }
    site_->addSlurmYaml("  identity: per_user\n");
    for (const std::string& dir : {scratch_, site_->dir(), site_->stagingRoot()}) {
      ::chmod(dir.c_str(), 0755);
    }
    const std::string users = site_->stagingRoot() + "/users";
    std::filesystem::create_directories(users + "/nobody");
    ::chmod(users.c_str(), 0755);
    return ::chown((users + "/nobody").c_str(), ::geteuid(), nobody->pw_gid) == 0 &&
           ::chmod((users + "/nobody").c_str(), 02750) == 0;
  }

  std::vector<std::string> serveEnv() const { return host_->environment(site_->stagingRoot()); }

  json getFromAny(const std::string& path) { return serves_->getFromAny(path, kUserToken); }
  json getJob(const std::string& id) { return getFromAny("/v1/jobs/" + id); }
  std::optional<httplib::Response> postToAny(const std::string& path, const std::string& body,
                                             const char* content_type, const char* token) {
    return serves_->postToAny(path, body, content_type, token, outcome_.submits_retried,
                              [this](const std::string& line) { say(line); });
  }

  json slurmHistory() const {
    httplib::Client client(sim_->url());
    client.set_read_timeout(15, 0);
    auto res = client.Get("/sim/admin/jobs");
    if (!res || res->status != 200) return json::array();
    const json body = json::parse(res->body, nullptr, false);
    return body.is_object() ? body["jobs"] : json::array();
  }

  bool setFaults(const json& body) {
    const int status = sim_->setFaults(body);
    if (status != 200)
      say("  (the simulator refused " + body.dump() + ": " + std::to_string(status) + ")");
    return status == 200;
  }

  void clearFaults() {
    setFaults({{"latency_ms", 0},
               {"fail_requests", 0},
               {"drop_submit_responses", 0},
               {"duplicate_submits", 0},
               {"pause_scheduling", false},
               {"lie_reads_ms", 0},
               {"uncreatable_claims", 0}});
    host_->setFull(false);  // a stepped clock stays where it is, as a host's does
    serves_->clear();
  }

  void submit(const Step& s) {
    const auto res = postToAny("/v1/jobs", specFor(s), "application/yaml", kUserToken);
    if (!res || res->status != 201) {
      outcome_.verdict.violations.push_back(
          "POST /v1/jobs refused: " +
          (res ? std::to_string(res->status) + " " + res->body : std::string("no answer")));
      return;
    }
    const std::string id = json::parse(res->body).value("id", "");
    observed_.ids.push_back(id);
    kinds_[id] = describe(s.job);
    if (s.cancel_after_ms >= 0) {
      cancels_.emplace_back(Steady::now() + std::chrono::milliseconds(s.cancel_after_ms), id);
    }
  }

  void cancel(const std::string& id) {
    const auto res = postToAny("/v1/jobs/" + id + "/cancel", "", "application/json", kUserToken);
    ++outcome_.user_cancels;
    // 202: recorded; 409: it had already ended.
    if (!res || (res->status != 202 && res->status != 200 && res->status != 409)) {
      outcome_.verdict.violations.push_back(
          id + ": the user's cancel failed: " +
          (res ? std::to_string(res->status) + " " + res->body : std::string("no answer")));
    }
  }

  void fireDueCancels(bool all) {
    const auto now = Steady::now();
    for (auto it = cancels_.begin(); it != cancels_.end();) {
      if (all || it->first <= now) {
        cancel(it->second);
        it = cancels_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // The Slurm jobs (the simulator's history) running now, single ones only when `single`.
  std::vector<json> running(bool single) const {
    std::vector<json> found;
    for (const json& j : slurmHistory()) {
      if (j.value("state", "") == "RUNNING" && (!single || j.value("components", 1) == 1))
        found.push_back(j);
    }
    return found;
  }
  static std::string sluidOf(const json& slurm_job) { return slurm_job["sluids"].back(); }

  // A TunePlane job whose last attempt runs, starting the search at a seeded index.
  json runningJob(uint32_t pick) {
    const size_t n = observed_.ids.size();
    for (size_t i = 0; i < n; ++i) {
      const json job = getJob(observed_.ids[(pick + i) % n]);
      if (!job.is_object() || job["attempts"].empty()) continue;
      const json& attempt = job["attempts"].back();
      if (attempt.value("phase", "") == "Running" && attempt["components"][0]["sluid"].is_string())
        return job;
    }
    return json::value_t::discarded;
  }

  // --- Faults.

  void struck(const Step& s, const std::string& detail) {
    ++outcome_.faults_injected;
    ++outcome_.by_fault[describeStrike(s)];
    say("  FAULT " + std::string(describeStrike(s)) + (detail.empty() ? "" : ": " + detail));
  }
  void skipped(const Step& s, const std::string& why = "no target") {
    ++outcome_.faults_skipped;
    say("  (" + why + " for " + std::string(describe(s.fault)) + ": skipped)");
  }

  void strike(const Step& s) {
    if (!replicated() && static_cast<int>(s.fault) >= kSingleServeFaultKinds &&
        s.fault != Fault::kLyingReads && s.fault != Fault::kClaimUncreatable) {
      return skipped(s, "one serve, no proxy");  // never drawn so (schedule.h)
    }
    switch (s.fault) {
      case Fault::kDropSubmit:
        if (setFaults({{s.reset ? "reset_submit_connections" : "drop_submit_responses", 1}})) {
          struck(s, "");
        }
        return;
      case Fault::kServerErrors:
        if (setFaults({{"fail_requests", s.count}, {"fail_status", s.status}})) struck(s, "");
        return;
      case Fault::kThrottle:
        if (setFaults({{"fail_requests", s.count}, {"fail_status", 429}})) struck(s, "");
        return;
      case Fault::kSlowAnswers:
        if (!setFaults({{"latency_ms", kSlowAnswerMs}})) return;
        struck(s, std::to_string(s.window_ms) + " ms");
        // The fault's window: the simulator process answers slowly for this long in real time
        // while the serve processes go on asking it.
        std::this_thread::sleep_for(std::chrono::milliseconds(s.window_ms));
        setFaults({{"latency_ms", 0}});
        return;
      case Fault::kDuplicateSubmit:
        return duplicateOnABusyCluster(s);
      case Fault::kSlurmRestart:
        if (setFaults({{"restart", true}})) struck(s, "");
        return;
      case Fault::kPurge:
      case Fault::kRequeue:
      case Fault::kNodeFail: {
        const std::vector<json> candidates = running(s.fault != Fault::kNodeFail);
        if (candidates.empty()) return skipped(s);
        const json& target = candidates[s.pick % candidates.size()];
        const json who = {{"job", sluidOf(target)}};
        const json body =
            s.fault == Fault::kPurge     ? json{{"purge", who}}
            : s.fault == Fault::kRequeue ? json{{"requeue", who}}
            : s.preempt ? json{{"preempt", {{"job", sluidOf(target)}, {"grace_s", s.grace_s}}}}
                        : json{{"end_job", {{"job", sluidOf(target)}, {"state", "NODE_FAIL"}}}};
        if (setFaults(body)) struck(s, "Slurm job " + std::to_string(target.value("job_id", 0)));
        return;
      }
      case Fault::kIdReuse:
        return reuseAnId(s);
      case Fault::kStallDelete: {
        const json job = runningJob(s.pick);
        if (!job.is_object()) return skipped(s);
        const std::string sluid = job["attempts"].back()["components"][0]["sluid"];
        if (!setFaults({{"stall_deletes",
                         {{"job", sluid}, {"count", 1}, {"hold_ms", kRequestTimeoutMs + 1500}}}}))
          return;
        struck(s, job.value("id", ""));
        cancel(job.value("id", ""));
        return;
      }
      case Fault::kExpireTokens:
        if (setFaults({{"expire_tokens", true}})) struck(s, "");
        return;
      case Fault::kStagingFull:
        return fillStaging(s);
      case Fault::kClockStep:
        host_->stepClock(std::chrono::minutes(s.step_minutes));
        struck(s, "+" + std::to_string(s.step_minutes) + " min");
        return;
      case Fault::kKillServe:
        return killAndRestart(s);
      case Fault::kLyingReads:
        if (setFaults({{"lie_reads_ms", s.hold_ms}})) struck(s, std::to_string(s.hold_ms) + " ms");
        return;
      case Fault::kClaimUncreatable:
        if (setFaults({{"uncreatable_claims", s.count},
                       {"claim_as", s.status == 503 ? "dangling_link" : "directory"}})) {
          struck(s, "the next " + std::to_string(s.count) + " starts");
        }
        return;
      case Fault::kStopLeader:
        return replicaStrike(s, serves_->stopTheLeaderInsideItsTransaction());
      case Fault::kLeaseRetaken:
        return replicaStrike(s, serves_->loseAndRetakeTheLease());
      case Fault::kDbCut:
        return replicaStrike(s, serves_->cutConnections(s.pick, s.reset));
      case Fault::kDbStallWriter:
        // It thaws by itself: the steps go on meanwhile.
        return replicaStrike(s,
                             serves_->freezeAWriter(s.pick, std::chrono::milliseconds(s.hold_ms)));
      case Fault::kDbDelay:
        return replicaStrike(
            s, serves_->delayTraffic(s.pick, std::chrono::milliseconds(s.chunk_delay_ms),
                                     std::chrono::milliseconds(s.hold_ms)));
    }
  }

  void replicaStrike(const Step& s, const ReplicaStrike& done) {
    outcome_.takeovers += done.takeovers;
    if (done.violation) outcome_.verdict.violations.push_back(*done.violation);
    if (done.struck) {
      struck(s, done.detail);
    } else {
      skipped(s, done.detail);
    }
  }

  // Full for the window, a job submitted into it, and held full until that job's stage has
  // failed (within a bound: intake may be backing off after 429 bursts); it is staged again
  // once there is room.
  void fillStaging(const Step& s) {
    host_->setFull(true);
    struck(s, std::to_string(s.window_ms) + " ms");
    const auto until = Steady::now() + std::chrono::milliseconds(s.window_ms);
    Step job;
    job.job = JobKind::kShort;
    submit(job);
    std::string reason;
    test::waitUntil(
        [&] {
          const json got = getJob(observed_.ids.back());
          reason = got.is_object() ? got.value("reason", "") : "";
          return reason.find("staging failed") != std::string::npos;
        },
        kFullLimit, 100ms);
    std::this_thread::sleep_until(until);
    host_->setFull(false);
    say("  " + observed_.ids.back() + " while full: " + reason);
    if (reason.find("No space left on device") != std::string::npos) ++outcome_.stages_refused;
  }

  // SIGKILL at this step, whatever it is doing, and a restart on the same address (and the
  // same proxy): the one serve, or a replica (the leader for an even pick).
  void killAndRestart(const Step& s) {
    const size_t i = replicated() ? serves_->target(s.pick) : 0;
    struck(s, serves_->name(i) + " down " + std::to_string(s.window_ms) + " ms");
    if (!serves_->crashAndRestart(i, std::chrono::milliseconds(s.window_ms)))
      throw std::runtime_error(serves_->name(i) + " did not restart");
  }

  // A POST carried out twice with its answer lost, while the cluster is busy (scheduling
  // paused: nothing starts): TunePlane must find both copies by the attempt's token and
  // cancel the later one before it can run. Held busy until no token has two live Slurm jobs.
  void duplicateOnABusyCluster(const Step& s) {
    const size_t before = slurmHistory().size();
    if (!setFaults(
            {{"pause_scheduling", true}, {"duplicate_submits", 1}, {"drop_submit_responses", 1}}))
      return;
    struck(s, "");
    Step job;
    job.job = JobKind::kShort;
    submit(job);
    // Whether a submit since `before` was doubled, and whether a token has two live jobs.
    auto duplicates = [&] {
      const json slurm = slurmHistory();
      std::map<std::string, int> made, live;
      for (size_t i = 0; i < slurm.size(); ++i) {
        const std::string token = slurm[i].value("comment", "");
        if (i >= before) ++made[token];
        if (!ended(slurm[i])) ++live[token];
      }
      std::pair<bool, bool> found{false, false};  // doubled, two live
      for (const auto& [token, count] : made) found.first = found.first || count > 1;
      for (const auto& [token, count] : live) found.second = found.second || count > 1;
      return found;
    };
    // Held busy until the doubled submit has happened and no token has two live Slurm jobs.
    const bool cancelled = test::waitUntil(
        [&] {
          const auto [doubled, two_live] = duplicates();
          return doubled && !two_live;
        },
        kBusyLimit, 200ms);
    // The doubling stops first, the cluster still busy: a submit doubled in the moment the
    // wait gave up (TunePlane held its submits back that long, e.g. after a 429 burst: seed
    // 14269232471071717463) is found and cancelled before anything may start.
    setFaults({{"duplicate_submits", 0}, {"drop_submit_responses", 0}});
    if (!cancelled) {
      say("  (no doubled submit was cancelled while the cluster was held busy)");
      test::waitUntil([&] { return !duplicates().second; }, kBusyLimit, 200ms);
    }
    setFaults({{"pause_scheduling", false}});
  }

  static bool ended(const json& slurm_job) {
    const std::string state = slurm_job.value("state", "");
    return state.rfind("PENDING", 0) != 0 && state.rfind("RUNNING", 0) != 0;
  }

  // A finished Slurm job purged now, then a restart: the next submit gets its numeric id.
  void reuseAnId(const Step& s) {
    std::vector<json> finished;
    for (const json& j : slurmHistory()) {
      if (!j.value("purged", false) && ended(j) &&
          j.value("state", "").find("COMPLETING") == std::string::npos)
        finished.push_back(j);
    }
    if (finished.empty()) return skipped(s);
    const json& target = finished[s.pick % finished.size()];
    const uint32_t id = target.value("job_id", 0u);
    if (!setFaults({{"purge", {{"job", std::to_string(id)}}}})) return;
    test::waitUntil(
        [&] {
          for (const json& j : slurmHistory()) {
            if (j.value("job_id", 0u) == id && !j.value("purged", false)) return false;
          }
          return true;
        },
        10s, 50ms);
    if (setFaults({{"restart", true}})) struck(s, "Slurm job " + std::to_string(id));
  }

  // Every job terminal, or bounded. Nothing is done for TunePlane meanwhile: an attempt that
  // waits for an operator stays where it is, and its job counts as lost.
  void settle() {
    std::map<std::string, json> last;
    std::map<std::string, std::string> seen;  // each job's phase and reason, as last printed
    const auto began = Steady::now();
    test::waitUntil(
        [&] {
          bool all = true;
          for (const std::string& id : observed_.ids) {
            if (last.count(id) && last[id].value("terminal", false)) continue;
            last[id] = getJob(id);
            const json& job = last[id];
            if (!job.is_object()) return false;
            all = all && job.value("terminal", false);
            const std::string now = job.value("phase", "") + ": " + job.value("reason", "");
            if (!job.value("terminal", false) && seen[id] != now) {
              seen[id] = now;
              say("  settling, +" + std::to_string(seconds(Steady::now() - began)) + " s: " + id +
                  " " + now);
            }
          }
          return all;
        },
        kSettleLimit, 500ms);
  }

  // Every job the user owns, by listing them (a POST whose answer was lost may have made one
  // the campaign never heard of); each one the campaign did not know is added, and waited for.
  void findUnknownJobs() {
    std::set<std::string> known(observed_.ids.begin(), observed_.ids.end());
    std::vector<std::string> found;
    std::string token;
    for (int page = 0; page < 100; ++page) {
      const json list =
          getFromAny("/v1/jobs?limit=1000" + (token.empty() ? "" : "&continue=" + token));
      if (!list.is_object()) {
        outcome_.verdict.violations.push_back("GET /v1/jobs did not answer");
        return;
      }
      for (const json& item : list.value("items", json::array())) {
        const std::string id = item.value("id", "");
        if (!known.count(id)) found.push_back(id);
      }
      token = list.value("continue", "");
      if (token.empty()) break;
    }
    for (const std::string& id : found) {
      say("  " + id + ": made by a POST whose answer never came (found by listing)");
      observed_.ids.push_back(id);
      kinds_[id] = "found by listing";
      ++outcome_.found_by_listing;
    }
    if (!found.empty()) settle();
  }

  void gather() {
    findUnknownJobs();
    for (const std::string& id : observed_.ids) {
      observed_.jobs[id] = getJob(id);
      const json events = getFromAny("/v1/jobs/" + id + "/events");
      if (events.is_object()) observed_.events[id] = events["items"];
    }
    observed_.slurm = slurmHistory();
    for (const std::string& id : observed_.ids) {
      const json& job = observed_.jobs[id];
      if (!job.is_object()) continue;
      say("  " + id + " (" + kinds_[id] + "): " + job.value("phase", "") + " after " +
          std::to_string(job["attempts"].size()) + " attempts: " + job.value("reason", ""));
    }
  }

  const CampaignOptions options_;
  CampaignOutcome outcome_;
  Observed observed_;
  std::string scratch_;
  std::unique_ptr<test::SlurmSimProcess> sim_;
  std::unique_ptr<pipeline::testing::SiteDir> site_;
  std::unique_ptr<ReplicaSet> serves_;
  test::PgCluster* pg_ = nullptr;
  std::string db_name_;
  std::unique_ptr<HostFaults> host_;
  std::vector<std::pair<Steady::time_point, std::string>> cancels_;
  std::map<std::string, std::string> kinds_;  // job id → its kind, for the log
};

}  // namespace

CampaignOutcome runCampaign(const CampaignOptions& options) {
  Run run(options);
  try {
    return run.go();
  } catch (const std::exception& e) {
    CampaignOutcome failed;
    failed.seed = options.seed;
    failed.mode = options.mode;
    failed.verdict.violations.push_back(std::string("the run stopped: ") + e.what());
    return failed;
  }
}

const char* modeName(CampaignMode mode) {
  return mode == CampaignMode::kReplicasPostgres ? "replicas" : "sqlite";
}

std::optional<CampaignMode> modeNamed(const std::string& name) {
  if (name == "replicas") return CampaignMode::kReplicasPostgres;
  if (name == "sqlite" || name.empty()) return CampaignMode::kSingleSqlite;
  return std::nullopt;
}

std::string replayCommand(uint64_t seed, CampaignMode mode) {
  const std::string env = "TUNEPLANE_CAMPAIGN_SEED=" + std::to_string(seed) +
                          " TUNEPLANE_CAMPAIGN_MODE=" + modeName(mode);
  return env + " ctest --test-dir build -R FaultCampaign.Seed --output-on-failure  (or: " + env +
         " build/tests/campaign_test --gtest_filter=FaultCampaign.Seed)";
}

std::string summarize(const CampaignOutcome& o) {
  std::ostringstream out;
  out << o.faults_injected << " faults, " << o.verdict.jobs << " jobs, " << o.verdict.lost
      << " lost, " << o.verdict.run_twice << " run twice, " << o.verdict.overlapping
      << " overlapping runs, " << o.verdict.out_of_order << " out of order (seed " << o.seed << ", "
      << modeName(o.mode) << ", " << static_cast<int>(o.seconds) << " s; " << o.faults_skipped
      << " faults without a target, " << o.user_cancels << " user cancels, "
      << o.verdict.commands_run << " commands run by the jobs' ledgers, "
      << o.verdict.refused_starts << " starts refused by the script, " << o.stages_refused
      << " stages failed on a full filesystem";
  if (o.mode == CampaignMode::kReplicasPostgres) {
    out << ", " << o.takeovers << " takeovers, " << o.submits_retried
        << " requests sent again to another replica, " << o.found_by_listing
        << " jobs found by listing, " << o.serve_starts_refused
        << " replica starts refused (store busy) and tried again";
  }
  if (!o.start_error.empty()) out << "; did not start: " << o.start_error;
  out << ")\n  phases:";
  for (const auto& [phase, n] : o.verdict.phases) out << " " << phase << " " << n;
  out << "\n  faults:";
  for (const auto& [fault, n] : o.by_fault) out << " [" << fault << "] " << n;
  for (const std::string& v : o.verdict.violations) out << "\n  VIOLATION " << v;
  return out.str();
}

}  // namespace tuneplane::campaign
