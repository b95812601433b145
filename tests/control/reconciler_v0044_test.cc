// The reconciler on a site whose slurmrestd speaks REST API v0.0.44 only (the simulator acting
// as Slurm 25.11.7: no SLUID in paths): `auto` picks v0.0.44, jobs are followed by numeric id
// with every read and cancel confirmed by the SLUID Slurm reports (slurm/job_key.h), each job
// says so in an event, and a numeric id that a purge hands to another job, or a requeue that
// gives the job a new SLUID, is never taken for the job TunePlane followed.
#include <filesystem>

#include "reconciler_fixture.h"
#include "slurm/job_key.h"

namespace tuneplane::control::testing {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using phase::JobPhase;
namespace fs = std::filesystem;

class ReconcilerV0044Test : public ReconcilerFixture {
 protected:
  void tune(sim::SimulatorOptions& o) override {
    o.api_versions = {"v0.0.44"};
    o.min_job_age = std::chrono::seconds(0);
    o.requeue_delay = 60s;
    api_ = "/slurm/v0.0.44";
  }

  // The numeric id of the Slurm job carrying `token`, from the full listing.
  std::string slurmIdOf(const std::string& token) {
    for (const auto& j : allSlurmJobs()) {
      if (j.value("comment", "") == token) return std::to_string(j.value("job_id", 0));
    }
    return "";
  }

  // The simulator's record of every job it made (purged ones too), by numeric id.
  json historyOf(const std::string& slurm_id) {
    const json history = sim_->history();
    for (const auto& j : history["jobs"]) {
      if (std::to_string(j.value("job_id", 0)) == slurm_id) return j;
    }
    return json();
  }

  bool saysFollowedByNumericId(const std::string& id) {
    for (const auto& e : events(id)) {
      if (e.reason.find("by its numeric id") != std::string::npos) return true;
    }
    return false;
  }
};

TEST_F(ReconcilerV0044Test, AutoSpeaksV0044AndFollowsAJobToItsEndByNumericId) {
  const std::string id = submit(cpuSpec("echo hello"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  ASSERT_NE(client_->api(), nullptr);
  EXPECT_EQ(client_->api()->name, "v0.0.44");
  const store::AttemptRecord a = view(id).attempts[0];
  const auto key = slurm::parseJobKey(a.components[0].sluid);
  ASSERT_TRUE(key) << a.components[0].sluid;
  EXPECT_TRUE(key->numeric_form);
  EXPECT_EQ(key->job_id, a.components[0].slurm_job_id);
  EXPECT_TRUE(slurm::looksLikeSluid(key->sluid));
  EXPECT_TRUE(saysFollowedByNumericId(id));
  EXPECT_EQ(sim_->history()["jobs"].size(), 1u);  // one Slurm job, no resubmit
}

TEST_F(ReconcilerV0044Test, ACancelIsSentByNumericIdOnlyAfterTheJobIsConfirmed) {
  const std::string id = submit(cpuSpec("sleep 60"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning));
  const store::AttemptRecord a = view(id).attempts[0];
  ASSERT_TRUE(service_->cancel(id, "ann"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kCancelled, 30s));
  const json slurm_job = historyOf(std::to_string(a.components[0].slurm_job_id));
  EXPECT_EQ(slurm_job["state"].get<std::string>().rfind("CANCELLED", 0), 0u) << slurm_job;
  EXPECT_EQ(slurm_job["starts"], 1);
}

// The v0.0.45 case of the same name (reconciler_faults_test.cc), where the job is read by
// SLUID; here the read is by numeric id, and only the SLUID in Slurm's answer tells the two
// jobs apart.
TEST_F(ReconcilerV0044Test, AReusedNumericIdIsNeverTakenForOurs) {
  const std::string id = submit(cpuSpec("sleep 60"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning));
  const store::AttemptRecord ours = view(id).attempts[0];
  ASSERT_TRUE(waitFor([&] { return fs::exists(ours.staging_dir + "/logs/start-main.json"); }));
  // While TunePlane is not looking: our job dies and is purged, slurmctld restarts, and
  // someone else's job gets our numeric id — in the same RUNNING state we last saw.
  ASSERT_TRUE(sim_->endJob(std::to_string(ours.slurm_job_id), "NODE_FAIL"));
  ASSERT_TRUE(waitFor([&] { return sim_->jobCount() == 0; }));
  sim_->restart();
  const int other = SimFixture::submit(jobBody("sleep 60"));
  ASSERT_EQ(static_cast<uint64_t>(other), ours.slurm_job_id);
  ASSERT_TRUE(waitState(std::to_string(other), json::array({"RUNNING"})));

  for (int i = 0; i < 3; ++i) reconciler_->tick();
  store::JobView v = view(id);
  EXPECT_EQ(v.attempts[0].components[0].sluid, ours.components[0].sluid);
  // The slow refresh reads job <id>: Slurm's answer carries another SLUID, so ours is gone.
  clock_.advance(options().full_refresh_interval);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kFailed));
  v = view(id);
  EXPECT_EQ(v.attempts[0].cause, EndCause::kUnobserved);
  EXPECT_EQ(v.attempts[0].components[0].sluid, ours.components[0].sluid);
  EXPECT_EQ(state(std::to_string(other)), json::array({"RUNNING"}));  // left alone
  EXPECT_EQ(sim_->history()["jobs"][1]["state"], "RUNNING");
}

// A requeue gives the job a new SLUID on the same numeric id (v0.0.44 on 25.11.7:
// tests/data/slurm/v0.0.44/transcripts/17): the stored key names nothing any more, the job is
// found by its token under its new key, the attempt ends as requeued and the job is cancelled.
TEST_F(ReconcilerV0044Test, ARequeueUnderANewSluidEndsTheAttemptAndCancelsTheJob) {
  const std::string id = submit(cpuSpec("sleep 60", "", "rq"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning));
  const store::AttemptRecord first = view(id).attempts[0];
  const std::string slurm_id = slurmIdOf(first.submit_token);
  ASSERT_TRUE(sim_->requeueJob(slurm_id, false));
  ASSERT_TRUE(waitFor([&] {
    const json j = job(slurm_id);
    return j.is_array() && !j.empty() &&
           first.components[0].sluid.rfind(j[0]["step_id"]["sluid"].get<std::string>(), 0) != 0 &&
           j[0]["job_state"] == json::array({"PENDING"});
  }));
  ASSERT_TRUE(tickUntil(
      id, [](const store::JobView& v) { return phase::isTerminal(v.attempts[0].phase); }, 30s));
  const store::AttemptRecord ended = view(id).attempts[0];
  EXPECT_EQ(ended.phase, AttemptPhase::kFailed);
  EXPECT_EQ(ended.cause, EndCause::kInfrastructure);
  EXPECT_NE(ended.reason.find("requeued"), std::string::npos) << ended.reason;
  ASSERT_TRUE(waitFor(
      [&] { return historyOf(slurm_id)["state"].get<std::string>().rfind("CANCELLED", 0) == 0; },
      30s))
      << historyOf(slurm_id);
  EXPECT_EQ(historyOf(slurm_id)["starts"], 1);  // never started again
}

}  // namespace
}  // namespace tuneplane::control::testing
