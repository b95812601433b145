// Why a job waits, and until when, end to end (e2e_fixture.h): four jobs fill the
// simulator's CPU node; two more wait. `tuneplane get` and `describe` and the API say the
// last one waits on Priority, second of two pending in partition cpu, with Slurm's estimate
// of its start — and asking again and again costs at most one listing of Slurm's jobs per
// refresh, whatever the number of calls.
#include "e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

class ServeE2eWaitingTest : public ServeE2eTest {};

// The value of `line` in serve's /metrics (0 when absent).
double metric(const std::string& url, const std::string& line) {
  return test::metricValue(url, line).value_or(0);
}

TEST_F(ServeE2eWaitingTest, AQueuedJobSaysItsReasonPlaceAndEstimateInGetDescribeAndTheApi) {
  // The simulator's cpu1 has 4 CPUs: four one-CPU jobs fill it until the test lets them end.
  std::vector<std::string> running;
  for (int i = 0; i < 4; ++i) running.push_back(submit(cpuSpec(gatedScript())));
  for (const std::string& id : running) waitAttemptRunning(id, 1);
  const std::string first = submit(cpuSpec("echo first"));
  const std::string second = submit(cpuSpec("echo second"));
  const auto queued = [&](const std::string& id) {
    return alice_->waitJob(
        id,
        [](const json& job) {
          return job.value("phase", "") == "Queued" && job["waiting"].is_object() &&
                 job["waiting"]["components"][0]["position"].is_number();
        },
        "waiting with a place", kJobLimit);
  };
  queued(first);
  const json job = queued(second);
  const json c = job["waiting"]["components"][0];
  EXPECT_EQ(c["pool"], "main");
  EXPECT_EQ(c["partition"], "cpu");
  EXPECT_EQ(c["reason"], "Priority");
  EXPECT_EQ(c["position"], 2);
  EXPECT_EQ(c["pending_in_partition"], 2);
  ASSERT_TRUE(c["estimated_start"].is_string()) << job["waiting"].dump(2);
  EXPECT_TRUE(job["waiting"]["as_of"].is_string());
  const json head = alice_->job(first)["waiting"]["components"][0];
  EXPECT_EQ(head["reason"], "Resources");
  EXPECT_EQ(head["position"], 1);

  const auto listed = alice_->run({"get"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(second + "\thello\talice\tQueued\t1\t"), std::string::npos)
      << listed.out;
  EXPECT_NE(listed.out.find("Priority: #2 of 2 in cpu, est. start "), std::string::npos)
      << listed.out;
  const auto described = alice_->run({"describe", second});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  for (const std::string part :
       {"Waiting:       attempt 1 in Slurm's queue (the queue as read ",
        "    Reason:        Priority (jobs of higher priority are ahead of it",
        "    Queue place:   #2 of 2 in cpu", ", Slurm's estimate\n"}) {
    EXPECT_NE(described.out.find(part), std::string::npos) << part << "\n" << described.out;
  }

  // Cost: twenty more reads of the waiting jobs within the refresh interval read Slurm's
  // queue at most once more.
  const std::string listings =
      "tuneplane_slurm_requests_total{operation=\"list_jobs\",outcome=\"ok\"}";
  const double before = metric(serve_->url(), listings);
  for (int i = 0; i < 10; ++i) {
    alice_->job(second);
    alice_->run({"get", "-o", "json"});
  }
  EXPECT_LE(metric(serve_->url(), listings) - before, 1.0);

  for (const std::string& id : running) openGate(alice_->job(id)["attempts"][0]);
  const json done = waitPhase(second, "Succeeded");
  EXPECT_EQ(done["waiting"], nullptr);
}

}  // namespace
}  // namespace tuneplane::cli::testing
