// Exactly once where faults meet (issue 37), through the real Reconciler against
// FakeSlurmClient and a FakeClock: lying reads while a retryable job waits, a decoy job of
// another user carrying a victim's token, the answer of Submitting's commit lost, slurmrestd's
// own word that slurmctld never took a submit, and a lost receipt Slurm's listing proves
// absent. Each asserts on the calls made to Slurm and the store, never on time.
#include "control/decisions.h"
#include "reconciler_fake_fixture.h"
#include "store/error_codes.h"

namespace tuneplane::control::testing {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using phase::JobPhase;

slurm::SlurmError bare404() {
  slurm::SlurmError e =
      FakeSlurmClient::error(slurm::kErrRejected, slurm::TransportClass::kRejected);
  e.http_status = 404;
  return e;
}
slurm::SlurmError badGateway() {
  slurm::SlurmError e =
      FakeSlurmClient::error(slurm::kErrOutcomeUnknown, slurm::TransportClass::kUnknown);
  e.http_status = 502;
  return e;
}

const std::string kRetryTwice = retryBlock(2, 0, "infrastructure");

// The case issue 37 opens with: while a retryable job waits PENDING, Slurm's reads go wrong —
// the state poll answers with no jobs, GET by SLUID a bare 404, the listing a 502 — for
// longer than kMissingPollsToJudge cycles. Nothing is concluded: no second attempt, no
// submit; when the reads heal, the one Slurm job is followed to its end.
TEST_F(FakeReconcilerTest, LyingReadsDuringAWaitStartNoSecondAttempt) {
  const std::string id = queued(cpuSpec("echo hi", kRetryTwice));
  const std::string s = sluid(id);
  next();
  for (int cycle = 0; cycle < 3 * kMissingPollsToJudge; ++cycle) {
    slurm_.hideFromStateList(true);  // the bulk poll answers with no jobs
    if (cycle % 2 == 0) {
      slurm_.failNext(Op::kGetJob, bare404());  // a misrouted proxy's 404
    } else {
      // A stale controller's "invalid job id", but the listing that must confirm it fails.
      slurm_.failNext(Op::kGetJob, FakeSlurmClient::error(slurm::kErrJobNotFound,
                                                          slurm::TransportClass::kRejected));
      slurm_.failNext(Op::kListJobs, badGateway());
    }
    next();
    ASSERT_EQ(view(id).attempts.size(), 1u) << "cycle " << cycle << ": " << view(id).job.reason;
    ASSERT_EQ(phase(id), JobPhase::kQueued) << view(id).job.reason;
  }
  slurm_.hideFromStateList(false);
  EXPECT_EQ(slurm_.count(Op::kSubmit), 1);
  EXPECT_EQ(view(id).attempts.back().missing_polls, 0);
  slurm_.setState(s, {"COMPLETED"}, "None", 0);
  next();
  EXPECT_EQ(phase(id), JobPhase::kSucceeded);
  EXPECT_EQ(slurm_.count(Op::kSubmit), 1);
}

// Slurm's word, not a lie: "invalid job id" for the SLUID and a listing without the token,
// three cycles running, and no sentinel: the attempt is lost and retried — after the DELETE of
// its SLUID is heard (Slurm: no such job).
TEST_F(FakeReconcilerTest, AJobSlurmSaysIsGoneIsRetriedOnlyAfterItsCancelIsHeard) {
  const std::string id = queued(cpuSpec("echo hi", kRetryTwice));
  const std::string s = sluid(id);
  slurm_.purge(s);
  for (int cycle = 0; cycle < kMissingPollsToJudge; ++cycle) next();
  ASSERT_EQ(phase(id), JobPhase::kRetrying) << view(id).job.reason;
  slurm_.clearCalls();
  slurm_.failNext(Op::kCancel, badGateway());  // the DELETE goes unheard once
  next();
  EXPECT_EQ(view(id).attempts.size(), 1u) << "a next attempt before the earlier one's end";
  EXPECT_EQ(slurm_.count(Op::kSubmit), 0);
  next();
  EXPECT_EQ(slurm_.args(Op::kCancel), (std::vector<std::string>{s, s}));
  ASSERT_EQ(view(id).attempts.size(), 2u);
  EXPECT_EQ(slurm_.count(Op::kSubmit), 1);
}

// Issue 37, defect 6: a job of another Slurm user whose comment is the victim's token is never
// adopted (nor is the real job cancelled as its duplicate).
TEST_F(FakeReconcilerTest, ADecoyOfAnotherUserWithTheTokenIsIgnored) {
  const std::string id = submit(cpuSpec("echo hi", kRetryTwice));
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/true);
  tick();
  ASSERT_EQ(phase(id), JobPhase::kSubmitUnknown);
  const std::string real = slurm_.jobsWithToken(token(id)).front()->sluid;
  slurm_.ownJobsAs("mallory");
  const std::string decoy = slurm_.addJob(token(id), 1, {"PENDING"}, "None", /*submit_time=*/1);
  next();
  EXPECT_EQ(phase(id), JobPhase::kQueued) << view(id).job.reason;
  EXPECT_EQ(sluid(id), real);
  EXPECT_EQ(slurm_.count(Op::kCancel), 0);
  EXPECT_EQ(slurm_.record(decoy).job_state, std::vector<std::string>{"PENDING"});
}

// A store that loses the answer of one commit (it is stored, the caller is told "store.io"),
// as a connection cut while COMMIT is on its way does.
class LostAnswerStore final : public store::JobStore {
 public:
  explicit LostAnswerStore(store::JobStore& real) : real_(real) {}
  // The next commit that moves an attempt to `phase` is stored and reported failed.
  void loseAnswerOf(AttemptPhase phase) { lose_ = phase; }

  Status createJob(const store::JobRecord& job, const store::EventRecord& created) override {
    return real_.createJob(job, created);
  }
  Result<std::optional<store::JobView>> getJob(const std::string& id) override {
    return real_.getJob(id);
  }
  Result<store::JobPage> listJobs(const store::JobQuery& query) override {
    return real_.listJobs(query);
  }
  Result<std::vector<store::JobView>> activeJobs() override { return real_.activeJobs(); }
  Result<std::vector<store::EventRecord>> events(const std::string& job_id) override {
    return real_.events(job_id);
  }
  Result<std::map<JobPhase, int64_t>> countJobsByPhase() override {
    return real_.countJobsByPhase();
  }
  Result<std::map<std::pair<AttemptPhase, EndCause>, int64_t>> countEndedAttempts() override {
    return real_.countEndedAttempts();
  }
  Status commit(const store::Change& change) override {
    auto done = real_.commit(change);
    for (const auto& a : change.attempts) {
      if (done && lose_ && a.phase == *lose_) {
        lose_.reset();
        return fail(store::codes::kIo, "", "the connection was lost while committing");
      }
    }
    return done;
  }
  Status requestCancel(const std::string& job_id, const std::string& actor,
                       int64_t now_ms) override {
    return real_.requestCancel(job_id, actor, now_ms);
  }
  Status requestAbandon(const std::string& job_id, int attempt, const std::string& actor,
                        const std::string& reason, int64_t now_ms) override {
    return real_.requestAbandon(job_id, attempt, actor, reason, now_ms);
  }

 private:
  store::JobStore& real_;
  std::optional<AttemptPhase> lose_;
};

// Issue 37, defect 4: Submitting is stored but its commit's answer is lost. The reconciler
// reads it back and submits, instead of leaving the attempt to be found by a token no job has.
TEST_F(FakeReconcilerTest, ASubmittingCommitWhoseAnswerIsLostStillSubmits) {
  LostAnswerStore losing(*store_);
  Reconciler reconciler(losing, slurm_, *launcher_, clock_, options());
  const std::string id = submit();
  losing.loseAnswerOf(AttemptPhase::kSubmitting);
  reconciler.tick();
  EXPECT_EQ(slurm_.count(Op::kSubmit), 1);
  EXPECT_EQ(phase(id), JobPhase::kQueued) << view(id).job.reason;
}

// Issue 37, defect 7: slurmrestd's 502 with Slurm's "Unable to contact slurm controller
// (connect failure)" proves nothing reached slurmctld: the same attempt is sent again, never
// left SubmitUnknown.
TEST_F(FakeReconcilerTest, AControllerThatCouldNotBeContactedMeansSendAgain) {
  slurm::SlurmError e = badGateway();
  e.slurm_error_number = slurm::kSlurmControllerConnectFailure;
  e.transport = slurm::TransportClass::kRejected;
  const std::string id = submit();
  slurm_.failNext(Op::kSubmit, e);
  tick();
  EXPECT_EQ(view(id).attempts.back().phase, AttemptPhase::kStaging) << view(id).job.reason;
  clock_.advance(resendDelay(1));
  tick();
  EXPECT_EQ(slurm_.count(Op::kSubmit), 2);
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  EXPECT_EQ(view(id).attempts.size(), 1u);
}

// A lost receipt whose token Slurm's listing answers without, often and long enough, with no
// trace on the node, is submitted again as the same attempt (same token, same directory); it
// runs once. Nothing is left for an operator.
TEST_F(FakeReconcilerTest, ALostReceiptProvenAbsentIsSentAgainAsItself) {
  const std::string id = submit();
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout());  // not acted: no job was made
  tick();
  ASSERT_EQ(phase(id), JobPhase::kSubmitUnknown);
  const std::string first_token = token(id);
  for (int i = 0; i < 10 && phase(id) == JobPhase::kSubmitUnknown; ++i) {
    clock_.advance(lookupDelay(i + 1) + std::chrono::milliseconds(kResendSettleMs / 4));
    tick();
  }
  ASSERT_EQ(view(id).attempts.back().phase, AttemptPhase::kStaging) << view(id).job.reason;
  tick();
  EXPECT_EQ(phase(id), JobPhase::kQueued) << view(id).job.reason;
  EXPECT_EQ(slurm_.count(Op::kSubmit), 2);
  EXPECT_EQ(view(id).attempts.size(), 1u);
  EXPECT_EQ(token(id), first_token);
  EXPECT_EQ(slurm_.jobsWithToken(first_token).size(), 1u);
  EXPECT_TRUE(anyEventSays(id, "the submit never made a job"));
}

}  // namespace
}  // namespace tuneplane::control::testing
