// See campaign_run.h.
#include "campaign/campaign_run.h"

#include <httplib.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "../pipeline/site_fixture.h"
#include "campaign/host_faults.h"
#include "staging/stager.h"
#include "support/serve_harness.h"

namespace tuneplane::campaign {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr const char* kUserToken = "campaign-alice-token-5e1d";
constexpr const char* kOpsToken = "campaign-ops-token-90ac";  // an admin: abandons
// The site's slurm.request_timeout; kSlowAnswers holds every answer longer than it.
constexpr int kRequestTimeoutMs = 2000;
constexpr int kSlowAnswerMs = kRequestTimeoutMs + 700;
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

// Each run of a job's command appends a line to its attempt's output/runs: the job's own
// witness of how many times it ran. No double quotes: hetSpec does not quote the script.
std::string ledger() {
  return "echo ${SLURM_JOB_ID:-x} >> $TUNEPLANE_OUTPUT_DIR/runs";
}

std::string specFor(const Step& s) {
  using pipeline::testing::cpuSpec;
  switch (s.job) {
    case JobKind::kShort:
      return cpuSpec(ledger() + "; echo ok", "", "short");
    case JobKind::kLong:
      return cpuSpec(ledger() + "; sleep " + std::to_string(s.sleep_s) + "; echo ok", "", "long");
    case JobKind::kHet:
      return pipeline::testing::hetSpec(ledger() + "; echo het");
    case JobKind::kFailing:
      return cpuSpec(ledger() + "; exit 3", pipeline::testing::retryBlock(2, 1, "any"), "failing");
  }
  return "";
}

std::string tokenLine(const std::string& user, const std::string& token, bool admin) {
  return "    - user: " + user + "\n      token_sha256: " + staging::sha256Hex(token) +
         "\n      admin: " + (admin ? "true" : "false") + "\n";
}

class Run {
 public:
  explicit Run(const CampaignOptions& options) : options_(options) { outcome_.seed = options.seed; }
  ~Run() {
    serve_.reset();
    sim_.reset();  // its jobs end before their attempt directories go
    site_.reset();
    std::error_code ignored;
    if (!scratch_.empty()) fs::remove_all(scratch_, ignored);
  }

  CampaignOutcome go() {
    const auto began = Steady::now();
    const std::vector<Step> schedule = makeSchedule(options_.seed, options_.size);
    say("campaign seed " + std::to_string(options_.seed) + " (" + replayCommand(options_.seed) +
        "): " + std::to_string(options_.size.jobs) + " jobs, " +
        std::to_string(options_.size.faults) + " faults\n" + describe(schedule));
    if (!start()) return outcome_;
    outcome_.started = true;
    for (const Step& s : schedule) {
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
    settle();
    gather();
    outcome_.verdict = checkInvariants(observed_);
    keepEvidence();
    if (serve_) {
      const auto stopped = serve_->stop();
      if (stopped != 0) {
        outcome_.verdict.violations.push_back("serve did not stop cleanly on SIGTERM");
      }
      serve_.reset();
    }
    outcome_.seconds = std::chrono::duration<double>(Steady::now() - began).count();
    return outcome_;
  }

 private:
  // With TUNEPLANE_CAMPAIGN_KEEP=DIR, a run with a violation, or with a requeued job that
  // Slurm started again before TunePlane cancelled it, leaves serve's logs, the simulator's
  // history and every job (with its events) in DIR/seed-N/ for a post-mortem.
  void keepEvidence() const {
    const char* keep = std::getenv("TUNEPLANE_CAMPAIGN_KEEP");
    if (keep == nullptr ||
        (outcome_.verdict.violations.empty() && outcome_.verdict.refused_starts == 0)) {
      return;
    }
    const fs::path dir = fs::path(keep) / ("seed-" + std::to_string(options_.seed));
    std::error_code ignored;
    fs::create_directories(dir, ignored);
    for (const char* log : {"serve.out", "serve.err"}) {
      fs::copy_file(fs::path(site_->dir()) / log, dir / log, fs::copy_options::overwrite_existing,
                    ignored);
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
    const std::string server = "server:\n  poll_interval: 200ms\n  tokens:\n" +
                               tokenLine("alice", kUserToken, false) +
                               tokenLine("ops", kOpsToken, true);
    site_ = std::make_unique<pipeline::testing::SiteDir>(
        sim_->url(), false, "    PYTHONPATH: " + fake_ray + "/py\n",
        server + "ray:\n  executable: " + fake_ray + "/ray\n  join_timeout_seconds: 20\n");
    site_->addSlurmYaml("  request_timeout: " + std::to_string(kRequestTimeoutMs) + "ms\n");
    host_ = std::make_unique<HostFaults>(scratch_ + "/host-faults");
    serve_ = test::ServeProcess::start(site_->site(), db(), site_->dir(), 0, serveEnv());
    if (!serve_) return false;
    port_ = serve_->port();
    return true;
  }

  std::string db() const { return site_->dir() + "/tuneplane.db"; }
  std::vector<std::string> serveEnv() const { return host_->environment(site_->stagingRoot()); }

  std::unique_ptr<httplib::Client> api() const {
    auto client = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client->set_connection_timeout(2, 0);
    client->set_read_timeout(15, 0);
    return client;
  }
  static httplib::Headers auth(const char* token) {
    return {{"Authorization", std::string("Bearer ") + token}};
  }

  json getJob(const std::string& id) const {
    auto res = api()->Get("/v1/jobs/" + id, auth(kUserToken));
    if (!res || res->status != 200) return json::value_t::discarded;
    return json::parse(res->body, nullptr, false);
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
               {"pause_scheduling", false}});
    host_->setFull(false);  // a stepped clock stays where it is, as a host's does
  }

  void submit(const Step& s) {
    auto res = api()->Post("/v1/jobs", auth(kUserToken), specFor(s), "application/yaml");
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
    auto res = api()->Post("/v1/jobs/" + id + "/cancel", auth(kUserToken), "", "application/json");
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
  json runningJob(uint32_t pick) const {
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

  void struck(const Step& s, const std::string& detail) {
    ++outcome_.faults_injected;
    ++outcome_.by_fault[describeStrike(s)];
    say("  FAULT " + std::string(describeStrike(s)) + (detail.empty() ? "" : ": " + detail));
  }
  void skipped(const Step& s) {
    ++outcome_.faults_skipped;
    say("  (no target for " + std::string(describe(s.fault)) + ": skipped)");
  }

  void strike(const Step& s) {
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
            s.fault == Fault::kPurge ? json{{"purge", who}}
            : s.fault == Fault::kRequeue
                ? json{{"requeue", who}}
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
      case Fault::kStagingFull: {
        // Full for the window, a job submitted into it, and held full until that job's stage
        // has failed (within a bound: intake may be backing off after 429 bursts); it is
        // staged again once there is room.
        host_->setFull(true);
        struck(s, std::to_string(s.window_ms) + " ms");
        const auto until = Steady::now() + std::chrono::milliseconds(s.window_ms);
        Step job;
        job.job = JobKind::kShort;
        submit(job);
        std::string reason;
        test::pollUntil(
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
        return;
      }
      case Fault::kClockStep:
        host_->stepClock(std::chrono::minutes(s.step_minutes));
        struck(s, "+" + std::to_string(s.step_minutes) + " min");
        return;
      case Fault::kKillServe:
        struck(s, "down " + std::to_string(s.window_ms) + " ms");
        serve_->crash();
        serve_.reset();
        std::this_thread::sleep_for(std::chrono::milliseconds(s.window_ms));
        serve_ = test::ServeProcess::start(site_->site(), db(), site_->dir(), port_, serveEnv());
        if (!serve_) throw std::runtime_error("serve did not restart");
        return;
    }
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
    const bool cancelled = test::pollUntil(
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
      test::pollUntil([&] { return !duplicates().second; }, kBusyLimit, 200ms);
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
    test::pollUntil(
        [&] {
          for (const json& j : slurmHistory()) {
            if (j.value("job_id", 0u) == id && !j.value("purged", false)) return false;
          }
          return true;
        },
        10s, 50ms);
    if (setFaults({{"restart", true}})) struck(s, "Slurm job " + std::to_string(id));
  }

  // Every job terminal, or bounded. A lost receipt whose token no Slurm job carries after two
  // lookups is abandoned as an operator would (its submit never reached Slurm).
  void settle() {
    std::map<std::string, json> last;
    test::pollUntil(
        [&] {
          bool all = true;
          const json slurm = slurmHistory();
          for (const std::string& id : observed_.ids) {
            if (last.count(id) && last[id].value("terminal", false)) continue;
            last[id] = getJob(id);
            const json& job = last[id];
            if (!job.is_object()) return false;
            if (job.value("terminal", false)) continue;
            all = false;
            if (job["attempts"].empty() || observed_.abandoned.count(id)) continue;
            const json& attempt = job["attempts"].back();
            const std::string token = attempt.value("submit_token", "");
            if (attempt.value("phase", "") != "SubmitUnknown" || attempt.value("lookups", 0) < 2 ||
                !slurmJobsWithToken(slurm, token).empty()) {
              continue;
            }
            auto res = api()->Post(
                "/v1/jobs/" + id + "/attempts/" + std::to_string(attempt.value("number", 0)) +
                    "/abandon",
                auth(kOpsToken), R"({"reason": "fault campaign: its submit never reached Slurm"})",
                "application/json");
            if (res && res->status == 202) {
              observed_.abandoned.insert(id);
              ++outcome_.abandoned;
              say("  abandoned the lost receipt of " + id + " (no Slurm job has its token)");
            }
          }
          return all;
        },
        kSettleLimit, 500ms);
  }

  void gather() {
    for (const std::string& id : observed_.ids) {
      observed_.jobs[id] = getJob(id);
      auto res = api()->Get("/v1/jobs/" + id + "/events", auth(kUserToken));
      if (res && res->status == 200) {
        const json body = json::parse(res->body, nullptr, false);
        if (body.is_object()) observed_.events[id] = body["items"];
      }
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
  std::unique_ptr<test::ServeProcess> serve_;
  std::unique_ptr<HostFaults> host_;
  int port_ = 0;
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
    failed.verdict.violations.push_back(std::string("the run stopped: ") + e.what());
    return failed;
  }
}

std::string replayCommand(uint64_t seed) {
  const std::string env = "TUNEPLANE_CAMPAIGN_SEED=" + std::to_string(seed);
  return env + " ctest --test-dir build -R FaultCampaign.Seed --output-on-failure  (or: " + env +
         " build/tests/campaign_test --gtest_filter=FaultCampaign.Seed)";
}

std::string summarize(const CampaignOutcome& o) {
  std::ostringstream out;
  out << o.faults_injected << " faults, " << o.verdict.jobs << " jobs, " << o.verdict.lost
      << " lost, " << o.verdict.run_twice << " run twice (seed " << o.seed << ", "
      << static_cast<int>(o.seconds) << " s; " << o.faults_skipped << " faults without a target, "
      << o.user_cancels << " user cancels, " << o.abandoned << " lost receipts abandoned, "
      << o.verdict.refused_starts << " starts refused by the script, " << o.stages_refused
      << " stages failed on a full filesystem)\n  phases:";
  for (const auto& [phase, n] : o.verdict.phases) out << " " << phase << " " << n;
  out << "\n  faults:";
  for (const auto& [fault, n] : o.by_fault) out << " [" << fault << "] " << n;
  for (const std::string& v : o.verdict.violations) out << "\n  VIOLATION " << v;
  return out.str();
}

}  // namespace tuneplane::campaign
