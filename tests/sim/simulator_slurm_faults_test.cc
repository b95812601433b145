// The faults a real Slurm shows that issue 17 is about: one POST carried out twice (two jobs,
// one token), an administrator's requeue (a new SLUID, same numeric id), a DELETE that times
// out for one het component, a job that pends forever (BadConstraints). In process and
// through the admin route. Their JSON is checked against the real transcripts in
// conformance_test.cc (16_duplicate_submit, 17_requeue_running).
#include "sim_test_support.h"

namespace tuneplane::sim::testing {
namespace {

// The jobs of the full listing whose comment is `token`.
json jobsWithComment(const json& listing, const std::string& token) {
  json out = json::array();
  for (const auto& j : listing["jobs"])
    if (j["comment"] == token) out.push_back(j);
  return out;
}

class SlurmFaultTest : public SimFixture {
 protected:
  void tune(SimulatorOptions& options) override {
    options.requeue_delay = std::chrono::milliseconds(1000);
    // A requeued or cancelled step that ignores SIGTERM lives until SIGKILL: the job stays
    // COMPLETING at least this long, so a test can look at it there without racing.
    options.kill_wait = std::chrono::milliseconds(5000);
  }
  std::string sluidOf(const std::string& id) {
    const json jobs = job(id);
    return jobs.is_array() && !jobs.empty() ? jobs[0]["step_id"]["sluid"].get<std::string>() : "";
  }
  json listing() { return json::parse(get("/jobs/")->body); }

  // A running job whose step ignores SIGTERM (it has set its trap): its id.
  std::string startStubborn(json extra = json::object()) {
    const std::string marker = jobs_dir_ + "/trapped-" + std::to_string(++stubborn_);
    const int id =
        submit(jobBody("trap '' TERM; touch " + marker + "; while :; do sleep 0.2; done", extra));
    EXPECT_TRUE(tuneplane::test::waitUntil([&] { return std::filesystem::exists(marker); }))
        << "never started";
    return std::to_string(id);
  }
  int stubborn_ = 0;
};

TEST_F(SlurmFaultTest, DuplicatedSubmitMakesTwoJobsWithOneComment) {
  sim_->duplicateNextSubmits(1);
  const int first = submit(jobBody("sleep 300", {{"comment", "token-a"}}));
  ASSERT_GT(first, 0);
  const json twins = jobsWithComment(listing(), "token-a");
  ASSERT_EQ(twins.size(), 2u);
  EXPECT_EQ(twins[0]["job_id"], first);  // the answer names the first
  EXPECT_EQ(twins[1]["job_id"], first + 1);
  EXPECT_NE(twins[0]["step_id"]["sluid"], twins[1]["step_id"]["sluid"]);
  EXPECT_EQ(twins[0]["name"], twins[1]["name"]);
  // Both are real jobs: both run.
  EXPECT_TRUE(waitState(std::to_string(first), {"RUNNING"}));
  EXPECT_TRUE(waitState(std::to_string(first + 1), {"RUNNING"}));
  // Only the next submit was doubled.
  submit(jobBody("true", {{"comment", "token-b"}}));
  EXPECT_EQ(jobsWithComment(listing(), "token-b").size(), 1u);
}

TEST_F(SlurmFaultTest, DuplicatedSubmitWithItsAnswerLost) {
  sim_->duplicateNextSubmits(1);
  sim_->dropNextSubmitResponses(1);
  EXPECT_FALSE(post("/job/submit", jobBody("true", {{"comment", "token-lost"}})));
  EXPECT_EQ(jobsWithComment(listing(), "token-lost").size(), 2u);
}

TEST_F(SlurmFaultTest, RequeueGivesANewSluidAndTheJobWouldRunAgain) {
  const std::string num = startStubborn({{"comment", "token-r"}});
  const int id = std::stoi(num);
  const std::string before = sluidOf(num);
  ASSERT_TRUE(sim_->requeueJob(num, false));
  // At once: pending again, completing while the step is killed and the epilog runs; the
  // SLUID is still the old one.
  EXPECT_EQ(state(num), json::array({"PENDING", "COMPLETING"}));
  EXPECT_EQ(sluidOf(num), before);
  ASSERT_TRUE(waitState(num, {"PENDING"}));
  const json record = job(num)[0];
  EXPECT_EQ(record["job_id"], id);  // same numeric id
  EXPECT_EQ(record["comment"], "token-r");
  EXPECT_EQ(record["restart_cnt"], 1);
  const std::string after = record["step_id"]["sluid"];
  EXPECT_NE(after, before);                       // a NEW SLUID
  EXPECT_EQ(get("/job/" + before)->status, 404);  // the old one names nothing now
  EXPECT_EQ(job(after)[0]["job_id"], id);
  // Not held: after the requeue delay it runs a second time, under its new SLUID.
  EXPECT_TRUE(waitState(num, {"RUNNING"}));
  EXPECT_EQ(sluidOf(num), after);
  // Only a running job can be requeued.
  EXPECT_FALSE(sim_->requeueJob("999", false));
  EXPECT_FALSE(sim_->requeueJob(std::to_string(submit(jobBody("true", {{"hold", true}}))), false));
}

// What the restarted script sees and leaves: SLURM_RESTART_COUNT (env.c sets it only when
// not 0), and its output file opened again — truncated by default (JobFileAppend=0),
// appended to with open_mode APPEND. The history records each start and how it ended.
TEST_F(SlurmFaultTest, ARestartSeesItsRestartCountAndAppendsOnlyWhenAsked) {
  for (const bool append : {false, true}) {
    SCOPED_TRACE(append ? "APPEND" : "default");
    const std::string marker = jobs_dir_ + "/first-" + std::to_string(append);
    const std::string out = jobs_dir_ + "/restart-" + std::to_string(append) + ".out";
    json extra = {{"standard_output", out}};
    if (append) extra["open_mode"] = json::array({"APPEND"});
    const std::string num =
        std::to_string(submit(jobBody("echo \"start ${SLURM_RESTART_COUNT:-unset}\"\n"
                                      "if [[ -z ${SLURM_RESTART_COUNT:-} ]]; then touch " +
                                          marker + "; sleep 300; fi\nexit 70",
                                      extra)));
    ASSERT_TRUE(tuneplane::test::waitUntil([&] { return std::filesystem::exists(marker); }))
        << "never started";
    ASSERT_TRUE(sim_->requeueJob(num, false));
    ASSERT_TRUE(tuneplane::test::waitUntil([&] { return job(num)[0]["restart_cnt"] == 1; }));
    ASSERT_TRUE(waitState(num, {"FAILED"}));  // the restart ran and exited 70
    EXPECT_EQ(job(num)[0]["exit_code"]["return_code"]["number"], 70);
    EXPECT_EQ(readFile(out), append ? "start unset\nstart 1\n" : "start 1\n");
    json entry;
    const json history = sim_->history();
    for (const json& j : history["jobs"])
      if (std::to_string(j["job_id"].get<int>()) == num) entry = j;
    ASSERT_TRUE(entry.is_object());
    EXPECT_EQ(entry["starts"], 2);
    ASSERT_EQ(entry["runs"].size(), 2u) << entry.dump();
    EXPECT_EQ(entry["runs"][0]["restart_cnt"], 0);
    EXPECT_TRUE(entry["runs"][0].contains("signal")) << entry.dump();  // the requeue's SIGTERM
    EXPECT_EQ(entry["runs"][1]["restart_cnt"], 1) << entry.dump();
    EXPECT_EQ(entry["runs"][1]["exit_code"], 70) << entry.dump();
  }
}

TEST_F(SlurmFaultTest, RequeueHoldStaysHeldUntilReleased) {
  const int id = submit(jobBody("sleep 300"));
  const std::string num = std::to_string(id);
  ASSERT_TRUE(waitState(num, {"RUNNING"}));
  const std::string before = sluidOf(num);
  ASSERT_TRUE(sim_->requeueJob(num, true));
  // Held at once (no REQUEUE_HOLD flag shows: 17b_requeue_hold), then a new SLUID.
  json record = job(num)[0];
  EXPECT_EQ(record["job_state"], json::array({"PENDING", "COMPLETING"}));
  EXPECT_EQ(record["state_reason"], "JobHeldUser");
  EXPECT_EQ(record["state_description"], "job requeued in held state");
  EXPECT_EQ(record["hold"], true);
  EXPECT_EQ(record["restart_cnt"], 1);
  ASSERT_TRUE(waitState(num, {"PENDING"}));
  record = job(num)[0];
  EXPECT_EQ(record["state_reason"], "JobHeldUser");
  EXPECT_EQ(record["hold"], true);
  EXPECT_NE(record["step_id"]["sluid"], before);
  auto released = post("/job/" + num, {{"hold", false}});
  ASSERT_TRUE(released);
  EXPECT_EQ(released->status, 200);
  EXPECT_TRUE(waitState(num, {"RUNNING"}));
}

TEST_F(SlurmFaultTest, CancelDuringTheRequeueEndsItForGood) {
  const std::string num = startStubborn();
  const std::string sluid = sluidOf(num);
  ASSERT_TRUE(sim_->requeueJob(num, false));
  ASSERT_EQ(state(num), json::array({"PENDING", "COMPLETING"}));
  auto res = del("/job/" + sluid);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(json::parse(res->body)["status"].empty()) << res->body;
  EXPECT_EQ(state(num), json::array({"CANCELLED", "COMPLETING"}));
  ASSERT_TRUE(waitState(num, {"CANCELLED"}));
  EXPECT_EQ(sluidOf(num), sluid);            // never requeued: the SLUID did not change
  EXPECT_EQ(job(num)[0]["restart_cnt"], 1);  // counted when the requeue began
}

TEST_F(SlurmFaultTest, CancelAfterTheRequeueNeedsTheNewSluid) {
  const int id = submit(jobBody("sleep 300"));
  const std::string num = std::to_string(id);
  ASSERT_TRUE(waitState(num, {"RUNNING"}));
  const std::string before = sluidOf(num);
  ASSERT_TRUE(sim_->requeueJob(num, true));  // held, so it stays pending
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return sluidOf(num) != before; }));
  EXPECT_EQ(state(num), json::array({"PENDING"}));
  auto stale = del("/job/" + before);
  ASSERT_TRUE(stale);
  EXPECT_EQ(json::parse(stale->body)["status"][0]["error"]["code"], 2017);  // unknown job
  EXPECT_EQ(state(num), json::array({"PENDING"}));
  auto res = del("/job/" + sluidOf(num));
  ASSERT_TRUE(res);
  EXPECT_TRUE(json::parse(res->body)["status"].empty()) << res->body;
  EXPECT_EQ(state(num), json::array({"CANCELLED"}));
}

TEST_F(SlurmFaultTest, StalledDeleteOfOneHetComponentGetsNoAnswerAndCancelsNothing) {
  json c0 = jobBody("sleep 300")["job"];
  json c1 = {{"current_working_directory", jobs_dir_},
             {"environment", json::array({"PATH=/usr/bin:/bin"})}};
  const int leader = submit({{"jobs", {c0, c1}}});
  ASSERT_GT(leader, 0);
  const std::string lead = std::to_string(leader), comp = std::to_string(leader + 1);
  ASSERT_TRUE(waitState(lead, {"RUNNING"}));
  const std::string comp_sluid = sluidOf(comp);
  ASSERT_TRUE(sim_->stallDeletes(comp_sluid, 1, std::chrono::milliseconds(3000)));
  httplib::Client impatient(sim_->baseUrl());
  impatient.set_read_timeout(0, 300000);  // gives up before the simulator answers
  EXPECT_FALSE(impatient.Delete((std::string(kApi) + "/job/" + comp_sluid).c_str(), auth()));
  EXPECT_EQ(state(comp), json::array({"RUNNING"}));  // nothing was cancelled
  EXPECT_EQ(state(lead), json::array({"RUNNING"}));
  // The other component's DELETEs are not stalled, nor is the next one of this component.
  auto res = del("/job/" + comp_sluid);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(waitState(comp, {"CANCELLED"}));
  EXPECT_FALSE(sim_->stallDeletes("999", 1, std::chrono::milliseconds(10)));
}

TEST_F(SlurmFaultTest, NeverStartingJobPendsWithItsReasonWhileOthersRun) {
  sim_->neverStartNextSubmits(1, "BadConstraints");
  const int stuck = submit(jobBody("true"));
  const int other = submit(jobBody("true"));
  ASSERT_TRUE(waitState(std::to_string(other), {"COMPLETED"}));
  json record = job(std::to_string(stuck))[0];
  EXPECT_EQ(record["job_state"], json::array({"PENDING"}));
  EXPECT_EQ(record["state_reason"], "BadConstraints");
  // The site fixed it: it may start.
  ASSERT_TRUE(sim_->neverStart(std::to_string(stuck), ""));
  EXPECT_TRUE(waitState(std::to_string(stuck), {"COMPLETED"}));
  EXPECT_FALSE(sim_->neverStart(std::to_string(stuck), "BadConstraints"));  // not pending
}

TEST_F(SlurmFaultTest, NeverStartingJobIsCancelledAtOnce) {
  sim_->pauseScheduling(true);
  const int id = submit(jobBody("true"));
  ASSERT_TRUE(sim_->neverStart(std::to_string(id), "PartitionTimeLimit"));
  sim_->pauseScheduling(false);
  EXPECT_EQ(job(std::to_string(id))[0]["state_reason"], "PartitionTimeLimit");
  auto res = del("/job/" + std::to_string(id));
  ASSERT_TRUE(res);
  EXPECT_EQ(state(std::to_string(id)), json::array({"CANCELLED"}));
}

TEST_F(SlurmFaultTest, AdminRouteSetsTheSlurmFaults) {
  auto admin = [&](const json& body) {
    auto res = client_->Post("/sim/admin/faults", body.dump(), "application/json");
    return res ? res->status : 0;
  };
  EXPECT_EQ(admin({{"duplicate_submits", 1}, {"never_start", {{"reason", "BadConstraints"}}}}),
            200);
  const int first = submit(jobBody("true", {{"comment", "token-admin"}}));
  const json twins = jobsWithComment(listing(), "token-admin");
  ASSERT_EQ(twins.size(), 2u);
  EXPECT_EQ(twins[0]["state_reason"], "BadConstraints");
  EXPECT_EQ(twins[1]["state_reason"], "BadConstraints");
  EXPECT_EQ(admin({{"never_start", {{"job", std::to_string(first)}, {"reason", ""}}}}), 200);
  EXPECT_TRUE(waitState(std::to_string(first), {"COMPLETED"}));

  const int id = submit(jobBody("sleep 300"));
  ASSERT_TRUE(waitState(std::to_string(id), {"RUNNING"}));
  EXPECT_EQ(admin({{"stall_deletes", {{"job", std::to_string(id)}, {"hold_ms", 10}}}}), 200);
  EXPECT_FALSE(del("/job/" + std::to_string(id)));  // closed with no answer
  EXPECT_EQ(state(std::to_string(id)), json::array({"RUNNING"}));
  EXPECT_EQ(admin({{"requeue", {{"job", std::to_string(id)}, {"hold", true}}}}), 200);
  EXPECT_TRUE(waitState(std::to_string(id), {"PENDING"}));
  EXPECT_EQ(job(std::to_string(id))[0]["state_reason"], "JobHeldUser");
  EXPECT_EQ(admin({{"requeue", {{"job", std::to_string(id)}}}}), 409);  // not running now
}

// --duplicate-submits N (SimulatorOptions::duplicate_submits): the first N submits.
class DuplicateOptionTest : public SimFixture {
  void tune(SimulatorOptions& options) override { options.duplicate_submits = 1; }
};

TEST_F(DuplicateOptionTest, TheFirstSubmitIsCarriedOutTwice) {
  submit(jobBody("true", {{"comment", "token-first"}, {"hold", true}}));
  submit(jobBody("true", {{"comment", "token-next"}, {"hold", true}}));
  const json listing = json::parse(get("/jobs/")->body);
  EXPECT_EQ(jobsWithComment(listing, "token-first").size(), 2u);
  EXPECT_EQ(jobsWithComment(listing, "token-next").size(), 1u);
}

}  // namespace
}  // namespace tuneplane::sim::testing
