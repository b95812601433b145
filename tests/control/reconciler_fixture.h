// The reconciler against the in-process simulator: a hermetic site pointing at it, the
// real REST client, the real store (SqliteJobStore in memory), one FakeClock for every
// decision of both (the reconciler's backoffs and grace periods, the simulator's epilogs, time
// limits, requeue delays, MinJobAge and timed faults), and tick() driven by hand: a tick moves
// the clock by the poll interval, so a two-second epilog passes in four ticks. The batch
// scripts still run as real processes, so waits are bounded polls (tickUntil), never fixed
// sleeps asserted on.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../pipeline/site_fixture.h"
#include "../sim/sim_test_support.h"
#include "catalog/artifact_verifier.h"
#include "control/job_service.h"
#include "control/reconciler.h"
#include "launch/attempt_identity.h"
#include "pipeline/attempt_launcher.h"
#include "slurm/rest_client.h"
#include "staging/staging_fs.h"
#include "store/sqlite_job_store.h"

namespace tuneplane::control::testing {

using namespace tuneplane::pipeline::testing;  // SiteDir, the spec builders (site_fixture.h)

using namespace std::chrono_literals;
using nlohmann::json;

// SHA-256 over every file's relative path, mode and content under `root`, in path order:
// equal hashes mean a byte-identical tree.
inline std::string treeHash(const std::string& root) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& path : files) {
    const auto status = std::filesystem::symlink_status(path);
    all += std::filesystem::relative(path, root).string() + "\n" +
           std::to_string(static_cast<int>(status.permissions())) + "\n";
    if (std::filesystem::is_regular_file(status)) all += readFile(path.string()) + "\n";
  }
  return staging::sha256Hex(all);
}

class ReconcilerFixture : public sim::testing::SimFixture {
 protected:
  void SetUp() override {
    SimFixture::SetUp();
    if (HasFatalFailure()) return;
    auto opened = store::SqliteJobStore::open(store::SqliteJobStore::kInMemory);
    ASSERT_TRUE(opened) << opened.error().describe();
    sqlite_ = std::move(*opened);
    site_ = std::make_unique<SiteDir>(sim_->baseUrl(), false, extraJobEnv(), extraSiteYaml());
    if (const std::string slurm = extraSlurmYaml(); !slurm.empty()) site_->addSlurmYaml(slurm);
    context_ = site_->context();
    auto client = slurm::SlurmRestClient::fromSite(context_.site.slurm);
    ASSERT_TRUE(client) << client.error().describe();
    client_ = std::move(*client);
    // The REST API version (slurm.api_version: auto), chosen before the first tick as serve
    // chooses it at start: a test's first faulty request is then the one it means.
    auto negotiated = client_->negotiate();
    ASSERT_TRUE(negotiated) << negotiated.error().describe();
    launcher_ = std::make_unique<pipeline::AttemptLauncher>(context_, verifier_, random_, fs_);
    service_ = std::make_unique<JobService>(store(), *launcher_, clock_);
    reconciler_ = makeReconciler();
  }
  void TearDown() override {
    reconciler_.reset();
    client_.reset();  // closes the keep-alive connection, so the simulator stops at once
    sim_.reset();     // kills the jobs before their attempt dirs go
  }

  const Clock* simulatorClock() override { return &clock_; }
  // Between two polls of a wait, a quarter of a second passes for the simulator and the
  // reconciler alike (no tick: a test that wants the reconciler to act uses tickUntil).
  void letTimePass() override { clock_.advance(250ms); }
  virtual store::JobStore& store() { return *sqlite_; }
  virtual std::string extraJobEnv() { return ""; }
  virtual std::string extraSiteYaml() { return ""; }
  // More keys of the site's slurm: block, each line indented two spaces.
  virtual std::string extraSlurmYaml() { return ""; }
  virtual ReconcilerOptions options() {
    ReconcilerOptions o;
    o.poll_interval = 500ms;
    return o;
  }
  std::unique_ptr<Reconciler> makeReconciler() {
    return std::make_unique<Reconciler>(store(), *client_, *launcher_, clock_, options());
  }

  std::string submit(const std::string& spec_text, const std::string& owner = "ann") {
    auto job = service_->submit(spec_text, owner);
    EXPECT_TRUE(job) << (job ? "" : job.error().front().describe());
    return job ? job->id : "";
  }

  store::JobView view(const std::string& id) {
    auto v = store().getJob(id);
    EXPECT_TRUE(v && *v) << "no job " << id;
    return v && *v ? **v : store::JobView{};
  }

  // Ticks (advancing the clock by the poll interval each time) until `done` holds for the
  // job, or `limit` of real time passed. The simulator's jobs run in real time.
  bool tickUntil(const std::string& id, const std::function<bool(const store::JobView&)>& done,
                 std::chrono::milliseconds limit = 20s) {
    const auto interval = options().poll_interval;
    return tuneplane::test::waitUntil(
        [&] {
          reconciler_->tick();
          return done(view(id));
        },
        {limit, 20ms, [&] { clock_.advance(interval); }});
  }
  bool tickUntilPhase(const std::string& id, phase::JobPhase phase,
                      std::chrono::milliseconds limit = 20s) {
    const bool reached = tickUntil(
        id, [phase](const store::JobView& v) { return v.job.phase == phase; }, limit);
    if (!reached) {
      const auto v = view(id);
      ADD_FAILURE() << "job " << id << " is " << phase::toString(v.job.phase) << " ("
                    << v.job.reason << "), not " << phase::toString(phase);
    }
    return reached;
  }

  std::vector<store::EventRecord> events(const std::string& id) {
    auto all = store().events(id);
    EXPECT_TRUE(all) << "no events of " << id;
    return all ? *all : std::vector<store::EventRecord>{};
  }

  // "from→to" of every phase move of the job (attempt moves prefixed "a<n>:").
  std::vector<std::string> trail(const std::string& id) {
    std::vector<std::string> out;
    for (const auto& e : events(id)) {
      if (e.from == e.to) continue;
      out.push_back((e.attempt ? "a" + std::to_string(e.attempt) + ":" : std::string()) +
                    (e.from.empty() ? "new" : e.from) + "→" + e.to);
    }
    return out;
  }

  // Slurm jobs (records) whose comment is `token`, from the simulator's full listing.
  int slurmJobsWithToken(const std::string& token) {
    int count = 0;
    for (const auto& j : allSlurmJobs()) {
      if (j.value("comment", "") == token &&
          j.value("het_job_offset", json()).value("number", 0) == 0) {
        ++count;
      }
    }
    return count;
  }
  json allSlurmJobs() {
    auto res = get("/jobs/");
    if (!res || res->status != 200) return json::array();
    return json::parse(res->body)["jobs"];
  }

  std::unique_ptr<SiteDir> site_;
  pipeline::SiteContext context_;
  std::unique_ptr<slurm::SlurmRestClient> client_;
  catalog::ArtifactVerifier verifier_;
  launch::OpenSslRandomSource random_;
  staging::PosixStagingFs fs_;
  FakeClock clock_;
  std::unique_ptr<store::SqliteJobStore> sqlite_;
  std::unique_ptr<pipeline::AttemptLauncher> launcher_;
  std::unique_ptr<JobService> service_;
  std::unique_ptr<Reconciler> reconciler_;
};

inline bool hasStep(const std::vector<std::string>& trail, const std::string& step) {
  return std::find(trail.begin(), trail.end(), step) != trail.end();
}

}  // namespace tuneplane::control::testing
