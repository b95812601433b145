// Issue 19's fault test: three real `tuneplane serve` replicas on one PostgreSQL database
// and the simulator (postgres_e2e_fixture.h). kJobs tiny CPU jobs are submitted round-robin
// through all three; meanwhile the leader is SIGKILLed five times and restarted, and once
// SIGSTOPped past its lease and resumed (SIGCONT), at seeded moments:
//   - at random: a seeded pause after a seeded job, whatever the leader is doing then;
//   - between an attempt's durable intent and its submit: the simulator refuses every token
//     (401), so the leader's submit is refused before Slurm acts and the attempt waits in
//     Staging to be sent again — killed there, the attempt is the next leader's to send;
//   - while a submit is on the wire: the simulator holds every answer (latency) and the
//     leader is killed once the attempt is Submitting; the simulator carries the submit out
//     after the leader has died, and nobody gets its receipt;
//   - the pause: as on the wire, but SIGSTOP; once another replica leads, SIGCONT: the old
//     leader's receipt write must be refused by the epoch
//     (tuneplane_store_fenced_writes_total > 0 on it).
// Then: every job is found (none lost) and ends in a terminal phase; every attempt's submit
// token is carried by at most one Slurm job (from the simulator's full listing, where
// finished jobs stay: --min-job-age), every Slurm job carries the token of an attempt we
// know, and the held jobs ran exactly once. A submit that the kill cut off before it left
// stays SubmitUnknown (nothing is submitted again without proof); once its lookups found
// nothing, the test abandons it as an operator would. The seed is printed; rerun a schedule
// with TUNEPLANE_FAULT_SEED=N. Every wait is bounded; nothing asserts on time.
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "postgres_e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

// The issue's 300: the jobs are tiny and the simulator runs 16 at once, so all of them pass
// in about two minutes on 2 shared cores (docs/developers.md). Under AddressSanitizer (CI's
// test-asan) every process is several times slower and the LONG bound is 300 s: 100 jobs
// there, with every strike and every check the same.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kJobs = 100;
#else
constexpr int kJobs = 300;
#endif
constexpr int kReplicas = 3;
// How long the simulator holds every answer while a submit is to be caught on the wire: far
// longer than the test takes to see Submitting and strike (a bound, not a measurement).
constexpr int64_t kHoldMs = 3000;
// A bound on everything settling once the last job is in (a hang, not a timing assertion).
constexpr std::chrono::milliseconds kSettleLimit = 240s;

enum class Fault { kAtRandom, kBeforeSubmit, kOnTheWire, kPause };

const char* describe(Fault fault) {
  switch (fault) {
    case Fault::kAtRandom:
      return "SIGKILL at random";
    case Fault::kBeforeSubmit:
      return "SIGKILL between durable intent and submit";
    case Fault::kOnTheWire:
      return "SIGKILL with the submit on the wire";
    case Fault::kPause:
      return "SIGSTOP past the lease, then SIGCONT";
  }
  return "";
}

struct Strike {
  int after_job = 0;  // struck once this many jobs are in
  Fault fault = Fault::kAtRandom;
  int delay_ms = 0;  // kAtRandom: how long after that
};

uint64_t chooseSeed() {
  if (const char* given = std::getenv("TUNEPLANE_FAULT_SEED"))
    return std::strtoull(given, nullptr, 10);
  return std::random_device{}();
}

class ServeE2eReplicaFaultTest : public ServeE2ePostgresTest {
 protected:
  ServeE2eReplicaFaultTest() {
    // The test cluster with a larger CPU node (16 jobs at once), so 300 jobs pass quickly.
    cluster_file_ = cluster_dir_.write("cluster.yaml",
                                       "nodes:\n"
                                       "  - {name: gpu1, cpus: 4, memory_mb: 4096, gpus: 2, "
                                       "gpu_type: h100, features: [h100]}\n"
                                       "  - {name: gpu2, cpus: 4, memory_mb: 4096, gpus: 2, "
                                       "gpu_type: a100, features: [a100]}\n"
                                       "  - {name: cpu1, cpus: 16, memory_mb: 32768}\n"
                                       "partitions:\n"
                                       "  - {name: gpu, nodes: [gpu1, gpu2]}\n"
                                       "  - {name: cpu, nodes: [cpu1], default: true}\n");
  }

  std::vector<std::string> simArgs() const override {
    // Finished jobs stay listed for the whole test: the duplicate check reads them all.
    return {"--epilog-ms",   "300",  "--kill-wait-ms", "500",
            "--min-job-age", "3600", "--cluster",      cluster_file_};
  }

  std::unique_ptr<test::ServeProcess> startReplica() {
    return test::ServeProcess::start(site_->site(), db(), site_->dir());
  }

  static httplib::Headers auth(const char* token) {
    return {{"Authorization", std::string("Bearer ") + token}};
  }

  // POST /v1/jobs through `replica`; the new job's id ("" reported).
  std::string post(const test::ServeProcess& replica, const std::string& spec) {
    httplib::Client client(replica.url());
    client.set_read_timeout(30);
    auto res = client.Post("/v1/jobs", auth(kAliceToken), spec, "application/yaml");
    if (!res || res->status != 201) {
      ADD_FAILURE() << "POST /v1/jobs via " << replica.url() << ": "
                    << (res ? std::to_string(res->status) + " " + res->body : "no answer");
      return "";
    }
    return json::parse(res->body).value("id", "");
  }

  // GET /v1/jobs/ID through any live replica; a discarded value when none answered 200.
  json getJob(const std::string& id) {
    for (const auto& replica : replicas_) {
      if (!replica || paused_ == replica.get()) continue;
      httplib::Client client(replica->url());
      client.set_read_timeout(10);
      auto res = client.Get("/v1/jobs/" + id, auth(kAliceToken));
      if (res && res->status == 200) return json::parse(res->body, nullptr, false);
    }
    return json::value_t::discarded;
  }

  // Polls job ID until `accept`; the last job seen (reported when never).
  json waitJob(const std::string& id, const std::function<bool(const json&)>& accept,
               const std::string& what) {
    json last;
    if (!test::waitUntil(
            [&] {
              last = getJob(id);
              return !last.is_discarded() && accept(last);
            },
            kJobLimit, 50ms)) {
      ADD_FAILURE() << "job " << id << " never " << what << "; last seen:\n" << last.dump(2);
    }
    return last;
  }

  // The replica that leads (tuneplane_leader 1), leaving out `besides`; -1 when none does
  // within the bound.
  int waitLeader(const test::ServeProcess* besides = nullptr) {
    int found = -1;
    test::waitUntil(
        [&] {
          for (int i = 0; i < kReplicas; ++i) {
            if (replicas_[i].get() == besides || replicas_[i].get() == paused_) continue;
            if (leaderGauge(replicas_[i]->url()) == 1) found = i;
          }
          return found >= 0;
        },
        kJobLimit);
    if (found < 0) ADD_FAILURE() << "no replica took the lease";
    return found;
  }

  // A submit that a kill cut off before it left stays SubmitUnknown: nothing is submitted
  // again without proof. Once it was looked for twice in vain (and no Slurm job carries its
  // token), the test abandons it as an operator would; true when it did (or had before).
  bool abandonIfItsSubmitNeverLeft(const std::string& id, const json& job) {
    if (abandoned_.count(id)) return true;
    if (job.is_discarded() || job["attempts"].empty()) return false;
    const json& attempt = job["attempts"].back();
    if (attempt.value("phase", "") != "SubmitUnknown" || attempt.value("lookups", 0) < 2) {
      return false;
    }
    const std::string token = attempt.value("submit_token", "");
    EXPECT_TRUE(test::slurmJobsWithComment(site_->site(), token).empty()) << token;
    for (const auto& replica : replicas_) {
      if (!replica || paused_ == replica.get()) continue;
      httplib::Client client(replica->url());
      client.set_read_timeout(10);
      auto res = client.Post(
          "/v1/jobs/" + id + "/attempts/" + std::to_string(attempt.value("number", 0)) + "/abandon",
          auth(kOpsToken), R"({"reason": "the fault test: its submit never left"})",
          "application/json");
      if (!res) continue;  // that replica is down: the next one
      EXPECT_EQ(res->status, 202) << res->body;
      abandoned_.insert(id);
      return true;
    }
    return false;
  }

  // Waits until every job in so far has ended (or was abandoned, its submit cut off by an
  // earlier kill): the held submit is then the leader's only request, not one behind dozens
  // of others slowed by the hold.
  void waitDrained() {
    for (const std::string& id : ids_) {
      waitJob(
          id,
          [&](const json& job) {
            return job.value("terminal", false) || abandonIfItsSubmitNeverLeft(id, job);
          },
          "ended");
    }
  }

  void killAndRestart(int leader) {
    replicas_[leader]->crash();
    replicas_[leader] = startReplica();
    ASSERT_NE(replicas_[leader], nullptr);
  }

  // One job through the next replica in turn.
  std::string submitNext() {
    const std::string id = post(*replicas_[ids_.size() % kReplicas], cpuSpec("echo ok"));
    if (!id.empty()) ids_.push_back(id);
    return id;
  }

  // Submits a job while the simulator holds every answer kHoldMs, waits until the leader's
  // POST for it is out, and returns the job then (its token: the one to be carried out once).
  json submitIntoHold() {
    EXPECT_EQ(sim_->setFaults({{"latency_ms", kHoldMs}}), 200);
    const std::string id = submitNext();
    const json submitting = waitJob(
        id,
        [](const json& job) {
          return !job["attempts"].empty() && job["attempts"][0].value("phase", "") == "Submitting";
        },
        "reached Submitting");
    // Submitting is durable before the POST leaves; real time passes for the leader's serve
    // process to send it to the simulator process, which holds it kHoldMs before acting on it.
    // Neither process shows that the POST has arrived, so there is nothing to wait for.
    std::this_thread::sleep_for(300ms);
    return submitting;
  }

  void strike(const Strike& s) {
    const int leader = waitLeader();
    ASSERT_GE(leader, 0);
    std::cout << "  " << ids_.size() << " jobs in: " << describe(s.fault) << " (replica " << leader
              << " leads)" << std::endl;
    switch (s.fault) {
      case Fault::kAtRandom:
        // A moment drawn at random: real time passes while the serve processes work, then the
        // leader is killed wherever it is.
        std::this_thread::sleep_for(std::chrono::milliseconds(s.delay_ms));
        killAndRestart(leader);
        return;
      case Fault::kBeforeSubmit: {
        // Every token refused: the submit is refused before Slurm acts on it (twice, with a
        // fresh token between), and the attempt waits in Staging to be sent again.
        ASSERT_EQ(sim_->setFaults({{"fail_requests", 1000000}, {"fail_status", 401}}), 200);
        const std::string id = submitNext();
        const json staged = waitJob(
            id,
            [](const json& job) {
              return !job["attempts"].empty() &&
                     job["attempts"][0].value("phase", "") == "Staging" &&
                     job["attempts"][0].value("lookups", 0) >= 1;
            },
            "waited in Staging to be sent again");
        ASSERT_EQ(staged["attempts"][0].value("phase", ""), "Staging") << staged.dump(2);
        killAndRestart(leader);
        ASSERT_EQ(sim_->setFaults({{"fail_requests", 0}}), 200);
        held_.push_back(id);
        return;
      }
      case Fault::kOnTheWire: {
        const json submitting = submitIntoHold();
        killAndRestart(leader);
        ASSERT_EQ(sim_->setFaults({{"latency_ms", 0}}), 200);
        held_.push_back(submitting.value("id", ""));
        return;
      }
      case Fault::kPause: {
        const json submitting = submitIntoHold();
        test::ServeProcess& old = *replicas_[leader];
        old.process().signal(SIGSTOP);
        paused_ = &old;
        ASSERT_EQ(sim_->setFaults({{"latency_ms", 0}}), 200);
        // Past its lease: another replica ends its session and takes over.
        const int next = waitLeader(&old);
        ASSERT_GE(next, 0);
        old.process().signal(SIGCONT);
        paused_ = nullptr;
        // Its submit's answer is in; its receipt write is refused by the epoch.
        int64_t fenced = 0;
        EXPECT_TRUE(test::waitUntil(
            [&] {
              fenced = metric(old.url(), "tuneplane_store_fenced_writes_total").value_or(0);
              return fenced > 0 && leaderGauge(old.url()) == 0;
            },
            kJobLimit))
            << "the resumed old leader: fenced writes " << fenced << ", tuneplane_leader "
            << leaderGauge(old.url());
        fenced_ = fenced;
        held_.push_back(submitting.value("id", ""));
        return;
      }
    }
  }

  tuneplane::testing::TempDir cluster_dir_;
  std::string cluster_file_;
  std::vector<std::unique_ptr<test::ServeProcess>> replicas_;
  const test::ServeProcess* paused_ = nullptr;  // while SIGSTOPped: asked nothing
  std::vector<std::string> ids_;                // every job accepted (201)
  std::vector<std::string> held_;               // the jobs whose submit a strike caught
  std::set<std::string> abandoned_;             // the jobs whose submit a kill cut off
  int64_t fenced_ = 0;
};

TEST_F(ServeE2eReplicaFaultTest, ThreeReplicasLoseNoJobAndRunNoAttemptTwiceThroughKillsAndAPause) {
  const uint64_t seed = chooseSeed();
  std::cout << "fault test seed " << seed << " (rerun: TUNEPLANE_FAULT_SEED=" << seed << ")"
            << std::endl;
  RecordProperty("seed", std::to_string(seed));
  std::mt19937_64 random(seed);

  // The schedule: five kills (one before a submit, one on the wire, three at random) and the
  // pause, in a seeded order after seeded jobs.
  std::vector<Fault> faults = {Fault::kBeforeSubmit, Fault::kOnTheWire, Fault::kAtRandom,
                               Fault::kAtRandom,     Fault::kAtRandom,  Fault::kPause};
  std::shuffle(faults.begin(), faults.end(), random);
  std::set<int> moments;
  while (moments.size() < faults.size()) {
    moments.insert(std::uniform_int_distribution<int>(kJobs / 10, kJobs - 1)(random));
  }
  std::vector<Strike> schedule;
  auto moment = moments.begin();
  for (Fault fault : faults) {
    schedule.push_back({*moment++, fault, std::uniform_int_distribution<int>(0, 1500)(random)});
  }
  for (const Strike& s : schedule) {
    std::cout << "  after job " << s.after_job << ": " << describe(s.fault)
              << (s.fault == Fault::kAtRandom ? " (+" + std::to_string(s.delay_ms) + " ms)" : "")
              << std::endl;
  }

  replicas_.push_back(std::move(serve_));
  for (int i = 1; i < kReplicas; ++i) {
    replicas_.push_back(startReplica());
    ASSERT_NE(replicas_.back(), nullptr);
  }
  ASSERT_GE(waitLeader(), 0);

  auto next = schedule.begin();
  while (static_cast<int>(ids_.size()) < kJobs) {
    if (next != schedule.end() && static_cast<int>(ids_.size()) >= next->after_job) {
      if (next->fault != Fault::kAtRandom) waitDrained();
      strike(*next++);
      if (HasFatalFailure()) return;
      continue;
    }
    ASSERT_FALSE(submitNext().empty());
  }
  ASSERT_EQ(next, schedule.end());

  // Everything settles; a submit cut off before it left is abandoned (above).
  std::map<std::string, json> last;
  const bool settled = test::waitUntil(
      [&] {
        bool all = true;
        for (const std::string& id : ids_) {
          if (last.count(id) && last[id].value("terminal", false)) continue;
          last[id] = getJob(id);
          const json& job = last[id];
          if (job.is_discarded()) return false;
          if (job.value("terminal", false)) continue;
          all = false;
          abandonIfItsSubmitNeverLeft(id, job);
        }
        return all;
      },
      kSettleLimit, 500ms);

  std::map<std::string, int> phases;
  for (const std::string& id : ids_) {
    ASSERT_FALSE(last[id].is_discarded()) << "job " << id << " lost";
    ++phases[last[id].value("phase", "")];
  }
  std::cout << "jobs:";
  for (const auto& [phase, count] : phases) std::cout << " " << phase << " " << count;
  std::cout << "; abandoned " << abandoned_.size() << "; fenced writes on the resumed leader "
            << fenced_ << "\n";
  ASSERT_TRUE(settled) << "not every job ended";
  EXPECT_EQ(static_cast<int>(ids_.size()), kJobs);

  // Every Slurm job carries the token of one attempt of ours, and no token more than one.
  std::map<std::string, std::vector<uint64_t>> by_token;
  for (const slurm::JobRecord& record : test::slurmJobs(site_->site())) {
    by_token[record.comment].push_back(record.job_id);
  }
  std::set<std::string> tokens;
  for (const std::string& id : ids_) {
    const json& job = last[id];
    for (const json& attempt : job["attempts"]) {
      const std::string token = attempt.value("submit_token", "");
      tokens.insert(token);
      EXPECT_LE(by_token[token].size(), 1u) << "job " << id << ": token " << token;
    }
    if (job.value("phase", "") == "Succeeded") {
      EXPECT_EQ(by_token[job["attempts"].back().value("submit_token", "")].size(), 1u) << id;
    }
  }
  for (const auto& [token, jobs] : by_token) {
    EXPECT_TRUE(jobs.empty() || tokens.count(token))
        << "a Slurm job of no known attempt: " << token;
  }
  // The jobs a strike caught in their submit ran exactly once, as their first attempt.
  ASSERT_EQ(held_.size(), 3u);
  for (const std::string& id : held_) {
    const json& job = last[id];
    EXPECT_EQ(job.value("phase", ""), "Succeeded") << job.dump(2);
    ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
    EXPECT_EQ(by_token[job["attempts"][0].value("submit_token", "")].size(), 1u) << job.dump(2);
  }
  EXPECT_GT(fenced_, 0);

  const std::string logs = test::readFile(site_->dir() + "/serve.err");
  EXPECT_NE(logs.find("[store.fenced]"), std::string::npos);  // the fenced write, in the log
  for (auto& replica : replicas_) EXPECT_EQ(replica->stop(), 0);
  replicas_.clear();
}

}  // namespace
}  // namespace tuneplane::cli::testing
