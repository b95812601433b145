// Every user as themselves (issue 44): a job whose run_as names a Unix user has every
// request about its Slurm jobs sent as that user — the submit (so the job is the user's in
// Slurm), each read by SLUID, each cancel — while the bulk state poll and the listing stay
// the service's; the lost-receipt lookup by token adopts only a job of that user, never a
// decoy another user put the token on. Against FakeSlurmClient, which records who asked.
#include "reconciler_fake_fixture.h"

namespace tuneplane::control::testing {
namespace {

class ReconcilerIdentityTest : public FakeReconcilerTest {
 protected:
  // A job accepted for `run_as`, as JobService stores one on a per_user site (the store
  // and the reconciler know nothing of tokens: run_as is what they follow).
  std::string submitAs(const std::string& run_as, const std::string& spec_text = cpuSpec()) {
    const std::string id = submit(spec_text);
    store::JobView v = view(id);
    store::JobRecord job = v.job;
    job.run_as = run_as;
    EXPECT_TRUE(store_->commit(store::Change{job, {}, {}}));
    return id;
  }
};

TEST_F(ReconcilerIdentityTest, EveryRequestAboutTheJobGoesAsItsUser) {
  const std::string id = submitAs("alice");
  tick();
  ASSERT_EQ(phase(id), phase::JobPhase::kQueued) << view(id).job.reason;
  EXPECT_EQ(slurm_.users(Op::kSubmit), std::vector<std::string>({"alice"}));
  EXPECT_EQ(slurm_.record(sluid(id)).user_name, "alice");  // the job is alice's in Slurm

  for (auto* r : slurm_.components(sluid(id))) r->job_state = {"RUNNING"};
  slurm_.clearCalls();
  next();
  ASSERT_EQ(phase(id), phase::JobPhase::kRunning);
  // The state poll is the service's; the read of the changed job is alice's.
  for (const std::string& user : slurm_.users(Op::kListJobStates)) EXPECT_EQ(user, "");
  ASSERT_FALSE(slurm_.users(Op::kGetJob).empty());
  for (const std::string& user : slurm_.users(Op::kGetJob)) EXPECT_EQ(user, "alice");

  ASSERT_TRUE(service_->cancel(id, "ann"));
  slurm_.clearCalls();
  next();
  ASSERT_FALSE(slurm_.users(Op::kCancel).empty());
  for (const std::string& user : slurm_.users(Op::kCancel)) EXPECT_EQ(user, "alice");
}

TEST_F(ReconcilerIdentityTest, AJobOfTheSharedSiteGoesAsTheService) {
  const std::string id = queued();
  EXPECT_EQ(view(id).job.run_as, "");
  EXPECT_EQ(slurm_.users(Op::kSubmit), std::vector<std::string>({""}));
}

TEST_F(ReconcilerIdentityTest, TheLostReceiptLookupAdoptsOnlyAJobOfTheJobsOwnUser) {
  const std::string id = submitAs("alice");
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/false);
  tick();
  ASSERT_EQ(phase(id), phase::JobPhase::kSubmitUnknown);
  // bob sees the token (no PrivateData) and puts it on a job of his own.
  const std::string decoy = slurm_.addJob(token(id));
  slurm_.record(decoy).user_name = "bob";
  for (int i = 0; i < 3; ++i) next();
  EXPECT_EQ(phase(id), phase::JobPhase::kSubmitUnknown) << view(id).job.reason;
  EXPECT_EQ(slurm_.count(Op::kCancel), 0);  // bob's job is not TunePlane's to cancel
  // alice's own job with the token is found and adopted.
  const std::string real = slurm_.addJob(token(id));
  slurm_.record(real).user_name = "alice";
  for (int i = 0; i < 3 && phase(id) == phase::JobPhase::kSubmitUnknown; ++i) next(60s);
  EXPECT_EQ(phase(id), phase::JobPhase::kQueued) << view(id).job.reason;
  EXPECT_EQ(sluid(id), real);
  EXPECT_EQ(slurm_.record(decoy).job_state, std::vector<std::string>({"PENDING"}));
}

}  // namespace
}  // namespace tuneplane::control::testing
