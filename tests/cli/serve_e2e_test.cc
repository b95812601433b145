// End to end through the real processes (e2e_fixture.h): the `tuneplane` CLI against
// `tuneplane serve` against `tuneplane-slurmsim`. A job from `submit --wait` to its logs;
// cancel; a node failure retried in a new attempt; a submit answer lost on the wire; and
// serve killed with SIGKILL while its job runs, then restarted on the same database.
#include <signal.h>

#include <algorithm>
#include <filesystem>

#include "e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

// The id in `submit --wait`'s last line, "ID: PHASE[ (reason)]".
std::string idOfWaitLine(const std::string& out) {
  return out.substr(0, out.find(':'));
}

std::vector<std::string> transitionsTo(const json& events) {
  std::vector<std::string> to;
  for (const auto& e : events["items"]) {
    if (e.value("attempt", -1) == 0) to.push_back(e.value("to", ""));
  }
  return to;
}

TEST_F(ServeE2eTest, SubmitWaitRunsTheJobToSucceededAndLogsShowItsOutput) {
  const std::string spec =
      site_->specFile("hello.yaml", cpuSpec("echo hello from attempt $TUNEPLANE_ATTEMPT; "
                                            "echo a warning >&2"));
  const auto submitted =
      alice_->run({"submit", "-f", spec, "--wait", "--timeout", "2m", "--poll-interval", "200ms"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  const std::string id = idOfWaitLine(submitted.out);
  EXPECT_EQ(submitted.out, id + ": Succeeded (attempt 1: the job completed)\n");

  const auto logs = alice_->run({"logs", id});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "hello from attempt 1\n");
  const auto errors = alice_->run({"logs", id, "--stderr"});
  EXPECT_EQ(errors.exit_code, 0) << errors.err;
  EXPECT_EQ(errors.out, "a warning\n");

  const auto listed = alice_->run({"get"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(id + "\thello\talice\tSucceeded\t1\t"), std::string::npos)
      << listed.out;

  const json job = alice_->job(id);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  const json& attempt = job["attempts"][0];
  EXPECT_EQ(attempt["phase"], "Succeeded");
  ASSERT_EQ(attempt["components"].size(), 1u);
  EXPECT_EQ(attempt["components"][0]["exit_code"], 0);
  // Slurm holds exactly one job for the attempt, found by the token it carries.
  const auto slurm_jobs = slurmJobsOf(attempt);
  ASSERT_EQ(slurm_jobs.size(), 1u);
  EXPECT_EQ(slurm_jobs[0].sluid, attempt["components"][0]["sluid"]);
  EXPECT_EQ(slurm_jobs[0].baseState(), "COMPLETED");

  const auto described = alice_->run({"describe", id});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  for (const std::string part : {"Attempt 1:", "COMPLETED", "Succeeded", "Events:"}) {
    EXPECT_NE(described.out.find(part), std::string::npos) << part << "\n" << described.out;
  }
}

TEST_F(ServeE2eTest, LogsFollowPrintsTheOutputUntilTheAttemptEnds) {
  const std::string id = submit(cpuSpec(gatedScript("echo step 2")));
  const json running = waitAttemptRunning(id, 1);
  auto follow = alice_->start({"logs", id, "-f", "--poll-interval", "200ms", "--timeout", "2m"},
                              "logs-follow");
  ASSERT_NE(follow, nullptr);
  openGate(running["attempts"][0]);
  EXPECT_EQ(follow->waitExit(kJobLimit), 0) << follow->err();
  EXPECT_EQ(follow->out(), "step 2\n");
}

TEST_F(ServeE2eTest, CancelEndsTheRunningJobAndItsSlurmJob) {
  const std::string id = submit(cpuSpec("sleep 300"));
  ASSERT_FALSE(id.empty());
  const json running = waitAttemptRunning(id, 1);
  const auto cancelled = alice_->run({"cancel", id});
  EXPECT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_NE(cancelled.out.find(id + ": cancel requested"), std::string::npos) << cancelled.out;

  const json job = waitPhase(id, "Cancelled");
  EXPECT_EQ(job["cancel_requested_by"], "alice");
  ASSERT_EQ(job["attempts"].size(), 1u);
  EXPECT_EQ(job["attempts"][0]["phase"], "Cancelled");
  // Slurm's job ended too: cancelled, not left running.
  const auto slurm_jobs = slurmJobsOf(running["attempts"][0]);
  ASSERT_EQ(slurm_jobs.size(), 1u);
  EXPECT_EQ(slurm_jobs[0].baseState(), "CANCELLED");
  // Cancel is idempotent: asking again changes nothing and is not an error.
  const auto again = alice_->run({"cancel", id});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find(id + ": cancel requested (phase Cancelled)"), std::string::npos)
      << again.out;
}

TEST_F(ServeE2eTest, ANodeFailIsRetriedInANewAttemptThatSucceeds) {
  const std::string id = submit(cpuSpec(
      "if [ \"$TUNEPLANE_ATTEMPT\" = 1 ]; then sleep 300; fi; echo attempt $TUNEPLANE_ATTEMPT",
      retryBlock(2, 0, "infrastructure")));
  const json first = waitAttemptRunning(id, 1);
  const std::string sluid = first["attempts"][0]["components"][0]["sluid"];
  ASSERT_EQ(sim_->setFaults({{"end_job", {{"job", sluid}, {"state", "NODE_FAIL"}}}}), 200);

  const json job = waitPhase(id, "Succeeded");
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  const json& failed = job["attempts"][0];
  const json& retried = job["attempts"][1];
  EXPECT_EQ(failed["phase"], "Failed");
  EXPECT_EQ(failed["cause"], "infrastructure");
  EXPECT_EQ(failed["components"][0]["state"][0], "NODE_FAIL");
  EXPECT_EQ(retried["phase"], "Succeeded");
  // A new attempt is a new directory; the first one is kept as it was.
  const std::string first_dir = failed["staging_dir"], second_dir = retried["staging_dir"];
  EXPECT_TRUE(first_dir.ends_with("/attempts/1")) << first_dir;
  EXPECT_TRUE(second_dir.ends_with("/attempts/2")) << second_dir;
  EXPECT_TRUE(std::filesystem::exists(first_dir + "/job.sh"));
  EXPECT_TRUE(std::filesystem::exists(second_dir + "/job.sh"));
  EXPECT_NE(failed["submit_token"], retried["submit_token"]);
  EXPECT_EQ(slurmJobsOf(failed).size(), 1u);
  EXPECT_EQ(slurmJobsOf(retried).size(), 1u);

  EXPECT_EQ(alice_->run({"logs", id}).out, "attempt 2\n");  // the latest attempt by default
  const auto described = alice_->run({"describe", id});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  for (const std::string part : {"Attempt 1:", "Attempt 2:", "NODE_FAIL", "infrastructure"}) {
    EXPECT_NE(described.out.find(part), std::string::npos) << part << "\n" << described.out;
  }
}

TEST_F(ServeE2eTest, ADroppedSubmitAnswerIsRecoveredAndTheJobRunsExactlyOnce) {
  // The simulator makes the next job, then closes the connection without an answer.
  ASSERT_EQ(sim_->setFaults({{"drop_submit_responses", 1}}), 200);
  const std::string spec = site_->specFile("once.yaml", cpuSpec("echo ran once"));
  const auto submitted =
      alice_->run({"submit", spec, "--wait", "--timeout", "2m", "--poll-interval", "200ms"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  const std::string id = idOfWaitLine(submitted.out);

  const json job = alice_->job(id);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  EXPECT_EQ(slurmJobsOf(job["attempts"][0]).size(), 1u);  // found by its token, not resubmitted
  const auto events = alice_->run({"events", id, "-o", "json"});
  ASSERT_EQ(events.exit_code, 0) << events.err;
  const auto trail = transitionsTo(json::parse(events.out));
  EXPECT_NE(std::find(trail.begin(), trail.end(), "SubmitUnknown"), trail.end()) << events.out;
  EXPECT_EQ(alice_->run({"logs", id}).out, "ran once\n");
}

TEST_F(ServeE2eTest, ServeKilledMidJobAndRestartedFinishesTheJobOnce) {
  const std::string spec = site_->specFile("gated.yaml", cpuSpec(gatedScript()));
  // The user's `submit --wait` rides over the outage: it keeps polling the same address.
  auto waiter = alice_->start(
      {"submit", spec, "--wait", "--timeout", "4m", "--poll-interval", "200ms"}, "waiter");
  ASSERT_NE(waiter, nullptr);
  const std::string id = waitForJobs(1);
  ASSERT_FALSE(id.empty()) << waiter->err();
  const json running = waitAttemptRunning(id, 1);
  const json attempt = running["attempts"][0];

  const int port = serve_->port();
  serve_->crash();
  EXPECT_EQ(serve_->process().waitExit(), 128 + SIGKILL);
  // The job ends while nobody watches it.
  openGate(attempt);
  ASSERT_TRUE(test::waitUntil(
      [&] {
        const auto jobs = slurmJobsOf(attempt);
        return jobs.size() == 1 && jobs[0].job_state == std::vector<std::string>{"COMPLETED"};
      },
      kJobLimit));

  startServe(port);  // the same database, on the address the waiting CLI knows
  ASSERT_NE(serve_, nullptr);
  EXPECT_EQ(waiter->waitExit(kJobLimit), 0) << waiter->err();
  EXPECT_EQ(waiter->out(), id + ": Succeeded (attempt 1: the job completed)\n");

  const json job = alice_->job(id);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);  // picked up, not attempted again
  EXPECT_EQ(job["attempts"][0]["submit_token"], attempt["submit_token"]);
  EXPECT_EQ(slurmJobsOf(attempt).size(), 1u);
  EXPECT_EQ(alice_->run({"logs", id}).out, "finished\n");
}

TEST_F(ServeE2eTest, ServeKilledWhileItsSubmitIsInFlightFindsTheJobAfterRestart) {
  // Every slurmrestd answer now takes 2 s: serve's submit is on the wire when it dies.
  ASSERT_EQ(sim_->setFaults({{"latency_ms", 2000}}), 200);
  const std::string id = submit(cpuSpec("echo ran once"));
  ASSERT_FALSE(id.empty());
  const json submitting = alice_->waitJob(
      id, [](const json& job) { return hasPhase(job, "Submitting"); }, "reached Submitting",
      kJobLimit);
  serve_->crash();
  ASSERT_EQ(sim_->setFaults({{"latency_ms", 0}}), 200);
  // slurmrestd made the job all the same; nobody got its receipt.
  const json attempt = submitting["attempts"][0];
  ASSERT_TRUE(test::waitUntil([&] { return slurmJobsOf(attempt).size() == 1; }, kJobLimit));

  startServe();
  ASSERT_NE(serve_, nullptr);
  const json job = waitPhase(id, "Succeeded");
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["submit_token"], attempt["submit_token"]);
  EXPECT_EQ(slurmJobsOf(attempt).size(), 1u);  // found by its token, never submitted again
  EXPECT_EQ(alice_->run({"logs", id}).out, "ran once\n");
}

}  // namespace
}  // namespace tuneplane::cli::testing
