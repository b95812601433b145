// The real Reconciler driven by hand against FakeSlurmClient (fake_slurm_client.h): an
// in-memory SqliteJobStore, a hermetic site (site_fixture.h; staging is real, in a temp
// dir), a FakeClock for every decision. No simulator, no threads, no sleeps: a test sets
// Slurm's answers, calls tick(), and asserts on the store and on the calls made.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../pipeline/site_fixture.h"
#include "catalog/artifact_verifier.h"
#include "control/job_service.h"
#include "control/reconciler.h"
#include "fake_attempt_reader.h"
#include "fake_slurm_client.h"
#include "launch/attempt_identity.h"
#include "pipeline/attempt_launcher.h"
#include "recording_observer.h"
#include "staging/staging_fs.h"
#include "store/sqlite_job_store.h"

namespace tuneplane::control::testing {

using namespace tuneplane::pipeline::testing;  // SiteDir, the spec builders (site_fixture.h)

using namespace std::chrono_literals;
using Op = FakeSlurmClient::Op;

// A two-pool (het) GPU job.
inline std::string hetJobSpec() {
  return hetSpec("true");
}

class FakeReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::SqliteJobStore::open(store::SqliteJobStore::kInMemory);
    ASSERT_TRUE(opened) << opened.error().describe();
    store_ = std::move(*opened);
    site_ = std::make_unique<SiteDir>();
    context_ = site_->context();
    launcher_ = std::make_unique<pipeline::AttemptLauncher>(context_, verifier_, random_, fs_,
                                                            staging::JobAccess{}, files_);
    service_ = std::make_unique<JobService>(*store_, *launcher_, clock_);
    reconciler_ = std::make_unique<Reconciler>(*store_, slurm_, *launcher_, clock_, options());
  }

  virtual ReconcilerOptions options() {
    ReconcilerOptions o;
    o.poll_interval = 10s;
    o.observer = &observer_;
    return o;
  }

  std::string submit(const std::string& spec_text = cpuSpec()) {
    auto job = service_->submit(spec_text, "ann");
    EXPECT_TRUE(job) << (job ? "" : job.error().front().describe());
    return job ? job->id : "";
  }

  TickReport tick() { return reconciler_->tick(); }
  // Advances the clock by one poll interval, then ticks.
  TickReport next(std::chrono::milliseconds by = 10s) {
    clock_.advance(by);
    return tick();
  }

  store::JobView view(const std::string& id) {
    auto v = store_->getJob(id);
    EXPECT_TRUE(v && *v) << "no job " << id;
    return v && *v ? **v : store::JobView{};
  }
  const store::AttemptRecord& attempt(const store::JobView& v) { return v.attempts.back(); }
  phase::JobPhase phase(const std::string& id) { return view(id).job.phase; }
  std::string token(const std::string& id) { return view(id).attempts.back().submit_token; }
  std::string sluid(const std::string& id, int component = 0) {
    return view(id).attempts.back().components.at(static_cast<size_t>(component)).sluid;
  }

  // Writes logs/<name> of the job's current attempt, as the job would (its scheduler log,
  // a sentinel).
  void writeAttemptLog(const std::string& id, const std::string& name, const std::string& content) {
    const store::AttemptRecord a = view(id).attempts.back();
    const std::filesystem::path logs = std::filesystem::path(a.staging_dir) / "logs";
    std::filesystem::permissions(logs, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add);
    writeFile((logs / name).string(), content);
  }

  std::vector<store::EventRecord> events(const std::string& id) {
    auto all = store_->events(id);
    EXPECT_TRUE(all);
    return all ? *all : std::vector<store::EventRecord>{};
  }
  bool anyEventSays(const std::string& id, const std::string& text) {
    for (const auto& e : events(id)) {
      if (e.reason.find(text) != std::string::npos) return true;
    }
    return false;
  }

  // Submits a job and ticks once: it is sent, its receipt and SLUIDs stored (Queued).
  std::string queued(const std::string& spec_text = cpuSpec()) {
    const std::string id = submit(spec_text);
    tick();
    EXPECT_EQ(phase(id), phase::JobPhase::kQueued) << view(id).job.reason;
    return id;
  }
  // A queued job whose Slurm job is now RUNNING, observed.
  std::string running(const std::string& spec_text = cpuSpec()) {
    const std::string id = queued(spec_text);
    for (auto* r : slurm_.components(sluid(id))) r->job_state = {"RUNNING"};
    next();
    EXPECT_EQ(phase(id), phase::JobPhase::kRunning) << view(id).job.reason;
    return id;
  }

  std::unique_ptr<SiteDir> site_;
  pipeline::SiteContext context_;
  catalog::ArtifactVerifier verifier_;
  launch::OpenSslRandomSource random_;
  staging::PosixStagingFs fs_;
  FakeAttemptReader files_;  // the real files unless a test scripts them
  FakeClock clock_;
  FakeSlurmClient slurm_;
  RecordingObserver observer_;
  std::unique_ptr<store::SqliteJobStore> store_;
  std::unique_ptr<pipeline::AttemptLauncher> launcher_;
  std::unique_ptr<JobService> service_;
  std::unique_ptr<Reconciler> reconciler_;
};

}  // namespace tuneplane::control::testing
