// A heterogeneous (two-pool GPU) job through the reconciler: one Slurm het job, one
// component per pool each with its own SLUID, rolled up to one attempt phase; a failure
// and a cancel reach every component. Ray is a stand-in here (a `ray` that just blocks and
// a python `ray` module whose nodes are all alive): the simulator runs no real Ray.
#include <filesystem>

#include "reconciler_fixture.h"

namespace tuneplane::control::testing {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using phase::JobPhase;
namespace fs = std::filesystem;

class ReconcilerHetTest : public ReconcilerFixture {
 protected:
  void SetUp() override {
    fake_ray_ = writeFakeRay(dir_.path());
    ReconcilerFixture::SetUp();
  }
  std::string extraJobEnv() override { return "    PYTHONPATH: " + fake_ray_ + "/py\n"; }
  std::string extraSiteYaml() override {
    return "ray:\n  executable: " + fake_ray_ + "/ray\n  join_timeout_seconds: 20\n";
  }
  std::string fake_ray_;
};

TEST_F(ReconcilerHetTest, OneHetJobTwoSluidsRolledUpToSuccess) {
  const std::string id = submit(hetSpec("echo driver ran; exit 0"));
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded, 40s));
  const store::JobView v = view(id);
  ASSERT_EQ(v.attempts.size(), 1u);
  const auto& comps = v.attempts[0].components;
  ASSERT_EQ(comps.size(), 2u);
  EXPECT_EQ(comps[0].pool, "learners");
  EXPECT_EQ(comps[1].pool, "actors");
  EXPECT_NE(comps[0].sluid, comps[1].sluid);
  EXPECT_EQ(v.attempts[0].slurm_job_id, comps[0].slurm_job_id);  // the leader's
  EXPECT_NE(comps[0].slurm_job_id, comps[1].slurm_job_id);
  EXPECT_EQ(slurmJobsWithToken(v.attempts[0].submit_token), 1);  // one het job
  for (const char* pool : {"learners", "actors"}) {
    EXPECT_TRUE(fs::exists(v.attempts[0].staging_dir + "/logs/exit-" + pool + ".json")) << pool;
  }
}

TEST_F(ReconcilerHetTest, ANodeFailureFailsTheWholeAttempt) {
  const std::string id = submit(hetSpec("sleep 60"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning, 40s));
  ASSERT_TRUE(sim_->endJob(view(id).attempts[0].components[1].sluid, "NODE_FAIL"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kFailed, 40s));
  const store::JobView v = view(id);
  EXPECT_EQ(v.attempts[0].cause, EndCause::kInfrastructure);
  for (const auto& c : v.attempts[0].components) EXPECT_EQ(c.state[0], "NODE_FAIL") << c.pool;
}

TEST_F(ReconcilerHetTest, CancelDeletesEveryComponentBySluid) {
  const std::string id = submit(hetSpec("sleep 60"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning, 40s));
  ASSERT_TRUE(service_->cancel(id, "dave"));
  EXPECT_EQ(reconciler_->tick().cancels, 2);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kCancelled, 40s));
  const store::JobView v = view(id);
  for (const auto& c : v.attempts[0].components) EXPECT_EQ(c.state[0], "CANCELLED") << c.pool;
}

}  // namespace
}  // namespace tuneplane::control::testing
