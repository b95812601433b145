// The simulator through a plain HTTP client: auth, job lifecycle, cancel, timeout,
// scheduling, het jobs, listing, lookups, updates. Faults are in simulator_faults_test.cc.
#include <signal.h>

#include "sim/sluid.h"
#include "sim_test_support.h"

namespace tuneplane::sim::testing {
namespace {

class SimulatorTest : public SimFixture {};

TEST_F(SimulatorTest, PingAnswersWithAndWithoutTrailingSlash) {
  for (const char* path : {"/ping", "/ping/"}) {
    auto res = get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    const json body = json::parse(res->body);
    EXPECT_EQ(body["pings"][0]["responding"], true);
    EXPECT_TRUE(body.contains("meta") && body.contains("errors") && body.contains("warnings"));
  }
}

TEST_F(SimulatorTest, NoTokenIs401PlainText) {
  auto res = client_->Get((std::string(kApi) + "/jobs/").c_str());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->body, "Authentication failure");
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain");
}

TEST_F(SimulatorTest, BadTokensAre511With1007ButPingSaysNotResponding) {
  const std::string wrong_key = jwt::mintHs256({"tpuser", unixNow(), unixNow() + 60}, "other");
  const std::string expired = jwt::mintHs256({"tpuser", unixNow() - 120, unixNow() - 60}, kKey);
  for (const std::string& tok : {std::string("not-a-jwt"), wrong_key, expired}) {
    auto jobs = client_->Get((std::string(kApi) + "/jobs/").c_str(), auth(tok));
    ASSERT_TRUE(jobs);
    EXPECT_EQ(jobs->status, 511);
    EXPECT_EQ(json::parse(jobs->body)["errors"][0]["error_number"], 1007);
    auto ping = client_->Get((std::string(kApi) + "/ping").c_str(), auth(tok));
    ASSERT_TRUE(ping);
    EXPECT_EQ(ping->status, 200);
    EXPECT_EQ(json::parse(ping->body)["pings"][0]["responding"], false);
  }
}

TEST_F(SimulatorTest, BearerAndMissingUserNameWork) {
  auto res = client_->Get((std::string(kApi) + "/jobs/").c_str(),
                          httplib::Headers{{"Authorization", "Bearer " + token()}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(SimulatorTest, UserNameOtherThanTokensIsRefusedForNonRoot) {
  auto res = client_->Get(
      (std::string(kApi) + "/jobs/").c_str(),
      httplib::Headers{{"X-SLURM-USER-NAME", "root"}, {"X-SLURM-USER-TOKEN", token("tpuser")}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 511);
  auto as_root = client_->Get(
      (std::string(kApi) + "/jobs/").c_str(),
      httplib::Headers{{"X-SLURM-USER-NAME", "alice"}, {"X-SLURM-USER-TOKEN", token("root")}});
  ASSERT_TRUE(as_root);
  EXPECT_EQ(as_root->status, 200);
}

TEST_F(SimulatorTest, ExpireTokensRefusesTokensAlreadyUsed) {
  const std::string old = token();
  auto before = client_->Get((std::string(kApi) + "/jobs/").c_str(), auth(old));
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 200);
  sim_->expireTokens();
  auto after = client_->Get((std::string(kApi) + "/jobs/").c_str(), auth(old));
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 511);
  // A token minted later (iat not before the cut) works.
  ASSERT_TRUE(tuneplane::test::waitUntil([&] {
    auto fresh =
        client_->Get((std::string(kApi) + "/jobs/").c_str(),
                     auth(jwt::mintHs256({"tpuser", unixNow() + 1, unixNow() + 60}, kKey)));
    return fresh && fresh->status == 200;
  }));
}

TEST_F(SimulatorTest, JobRunsThroughCompletingToCompletedWithSlurmEnvironment) {
  const int id = submit(
      jobBody("echo \"id=$SLURM_JOB_ID sluid=$SLURM_JOB_SLUID nodes=$SLURM_JOB_NODELIST "
              "n=$SLURM_JOB_NUM_NODES/$SLURM_NNODES part=$SLURM_JOB_PARTITION "
              "node=$SLURMD_NODENAME cluster=$SLURM_CLUSTER_NAME user=$SLURM_JOB_USER "
              "name=$SLURM_JOB_NAME submit=$SLURM_SUBMIT_DIR cpt=${SLURM_CPUS_PER_TASK-unset} "
              "my=$MYVAR pwd=$(pwd)\"\necho err >&2",
              {{"environment", {"PATH=/usr/bin:/bin", "MYVAR=hello"}},
               {"standard_error", jobs_dir_ + "/%x-%j.err"}}));
  ASSERT_GT(id, 0);
  const std::string sid = std::to_string(id);
  ASSERT_TRUE(waitState(sid, {"COMPLETED", "COMPLETING"}));
  ASSERT_TRUE(waitState(sid, {"COMPLETED"}));
  const json rec = job(sid)[0];
  const std::string sluid = rec["step_id"]["sluid"];
  EXPECT_TRUE(parseSluid(sluid));
  EXPECT_EQ(rec["exit_code"]["status"][0], "SUCCESS");
  EXPECT_EQ(rec["stdout_expanded"], jobs_dir_ + "/t-" + sid + ".out");
  const std::string out = readFile(jobs_dir_ + "/t-" + sid + ".out");
  EXPECT_EQ(out, "id=" + sid + " sluid=" + sluid +
                     " nodes=cpu1 n=1/1 part=cpu node=cpu1 cluster=tp user=tpuser name=t submit=" +
                     jobs_dir_ + " cpt=unset my=hello pwd=" + jobs_dir_ + "\n");
  EXPECT_EQ(readFile(jobs_dir_ + "/t-" + sid + ".err"), "err\n");
  // Looked up by SLUID, in either case.
  EXPECT_EQ(job(sluid)[0]["job_id"], id);
  std::string lower = sluid;
  for (char& c : lower) c = static_cast<char>(std::tolower(c));
  EXPECT_EQ(job(lower)[0]["job_id"], id);
}

TEST_F(SimulatorTest, ReceiptHasJobIdAndBatchStepButNoSluid) {
  auto res = post("/job/submit", jobBody("true"));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const json r = json::parse(res->body);
  EXPECT_TRUE(r["job_id"].is_number_integer());
  EXPECT_EQ(r["step_id"], "batch");
  EXPECT_EQ(r["job_submit_user_msg"], "");
  EXPECT_FALSE(r.contains("sluid"));
}

TEST_F(SimulatorTest, OutputPatternsExpand) {
  const int id =
      submit(jobBody("echo x", {{"name", "pat"}, {"standard_output", "o-%x-%j-%S-%u-%N-%%.log"}}));
  const std::string sid = std::to_string(id);
  ASSERT_TRUE(waitState(sid, {"COMPLETED"}));
  const json rec = job(sid)[0];
  const std::string expected = jobs_dir_ + "/o-pat-" + sid + "-" +
                               rec["step_id"]["sluid"].get<std::string>() + "-tpuser-cpu1-%.log";
  EXPECT_EQ(readFile(expected), "x\n");
}

TEST_F(SimulatorTest, DefaultOutputIsSlurmJobIdInCwd) {
  json body = jobBody("echo default");
  body["job"].erase("standard_output");
  const int id = submit(body);
  ASSERT_TRUE(waitState(std::to_string(id), {"COMPLETED"}));
  EXPECT_EQ(readFile(jobs_dir_ + "/slurm-" + std::to_string(id) + ".out"), "default\n");
}

TEST_F(SimulatorTest, NonZeroExitIsFailedWithReturnCode) {
  const int id = submit(jobBody("exit 3"));
  const std::string sid = std::to_string(id);
  ASSERT_TRUE(waitState(sid, {"FAILED", "COMPLETING"}));
  ASSERT_TRUE(waitState(sid, {"FAILED"}));
  const json rec = job(sid)[0];
  EXPECT_EQ(rec["state_reason"], "NonZeroExitCode");
  EXPECT_EQ(rec["exit_code"]["status"][0], "ERROR");
  EXPECT_EQ(rec["exit_code"]["return_code"]["number"], 3);
}

TEST_F(SimulatorTest, ScriptWithoutShebangFailsWithEnoexec) {
  json body = jobBody("");
  body["job"]["script"] = "no shebang\n";
  const int id = submit(body);
  ASSERT_TRUE(waitState(std::to_string(id), {"FAILED"}));
  EXPECT_EQ(job(std::to_string(id))[0]["exit_code"]["return_code"]["number"], 8);
}

TEST_F(SimulatorTest, HeldJobCancelledGoesStraightToCancelled) {
  const int id = submit(jobBody("true", {{"hold", true}}));
  const std::string sid = std::to_string(id);
  json rec = job(sid)[0];
  EXPECT_EQ(rec["job_state"], json::array({"PENDING"}));
  EXPECT_EQ(rec["state_reason"], "JobHeldUser");
  const std::string sluid = rec["step_id"]["sluid"];
  auto res = del("/job/" + sluid);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(json::parse(res->body)["status"].empty());
  EXPECT_EQ(state(sid), json::array({"CANCELLED"}));
  auto again = del("/job/" + sluid);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(json::parse(again->body)["status"][0]["error"]["code"], 2021);
}

TEST_F(SimulatorTest, CancelRunningKillsTheProcessTreeViaCompleting) {
  const std::string pidfile = jobs_dir_ + "/child.pid";
  const int id = submit(jobBody("sleep 300 & echo $! > " + pidfile + "\nwait"));
  const std::string sid = std::to_string(id);
  ASSERT_TRUE(waitState(sid, {"RUNNING"}));
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return !readFile(pidfile).empty(); }));
  const pid_t child = std::stoi(readFile(pidfile));
  auto res = del("/job/" + sid);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(state(sid), json::array({"CANCELLED", "COMPLETING"}));
  ASSERT_TRUE(waitState(sid, {"CANCELLED"}));
  const json rec = job(sid)[0];
  EXPECT_EQ(rec["exit_code"]["status"][0], "SIGNALED");
  EXPECT_EQ(rec["exit_code"]["signal"]["id"]["number"], 15);
  EXPECT_EQ(rec["exit_code"]["signal"]["name"], "TERM");
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return kill(child, 0) != 0; }));
}

TEST_F(SimulatorTest, TimeLimitEndsInTimeout) {
  const int id = submit(jobBody("sleep 300", {{"time_limit", {{"set", true}, {"number", 1}}}}));
  const std::string sid = std::to_string(id);
  ASSERT_TRUE(waitState(sid, {"RUNNING"}));
  ASSERT_TRUE(waitState(sid, {"TIMEOUT", "COMPLETING"}));
  ASSERT_TRUE(waitState(sid, {"TIMEOUT"}));
  EXPECT_EQ(job(sid)[0]["state_reason"], "TimeLimit");
}

TEST_F(SimulatorTest, BusyGpusLeaveTheNextJobPendingOnResources) {
  const json gpu = {{"partition", "gpu"}, {"constraints", "h100"}, {"tres_per_node", "gres/gpu:2"}};
  const int a = submit(jobBody("sleep 300", gpu));
  const int b = submit(jobBody("true", gpu));
  const int d = submit(jobBody(
      "true", {{"partition", "gpu"}, {"constraints", "a100"}, {"tres_per_job", "gres/gpu:1"}}));
  ASSERT_TRUE(waitState(std::to_string(a), {"RUNNING"}));
  const json rec_a = job(std::to_string(a))[0];
  EXPECT_EQ(rec_a["nodes"], "gpu1");
  EXPECT_EQ(rec_a["gres_detail"][0], "gpu:h100:2(IDX:0-1)");
  const json rec_b = job(std::to_string(b))[0];
  EXPECT_EQ(rec_b["job_state"], json::array({"PENDING"}));
  EXPECT_EQ(rec_b["state_reason"], "Resources");
  ASSERT_TRUE(waitState(std::to_string(d), {"COMPLETED"}));
  EXPECT_EQ(job(std::to_string(d))[0]["nodes"], "gpu2");
  ASSERT_TRUE(del("/job/" + std::to_string(a)));
  EXPECT_TRUE(waitState(std::to_string(b), {"COMPLETED"}));
}

// What a pending job's place and estimate are read from (api/slurm_queue.h): the first job
// blocked in a partition waits on Resources, the next on Priority (one is ahead of it); each
// start_time is the backfill estimate — the running job's end, then that plus the first
// one's time limit — and a held job has none, as on a real slurmctld.
TEST_F(SimulatorTest, PendingJobsCarryResourcesOrPriorityAndAStartEstimate) {
  const json gpu = {{"partition", "gpu"},
                    {"constraints", "h100"},
                    {"tres_per_node", "gres/gpu:2"},
                    {"time_limit", {{"set", true}, {"number", 10}}}};
  const int a = submit(jobBody("sleep 300", gpu));
  ASSERT_TRUE(waitState(std::to_string(a), {"RUNNING"}));
  const int b = submit(jobBody("true", gpu));
  const int c = submit(jobBody("true", gpu));
  json held = gpu;
  held["hold"] = true;
  const int d = submit(jobBody("true", held));
  const json rec_a = job(std::to_string(a))[0];
  const json rec_b = job(std::to_string(b))[0];
  const json rec_c = job(std::to_string(c))[0];
  const json rec_d = job(std::to_string(d))[0];
  EXPECT_EQ(rec_b["state_reason"], "Resources");
  EXPECT_EQ(rec_c["state_reason"], "Priority");
  const int64_t a_end = rec_a["end_time"]["number"];
  EXPECT_EQ(rec_b["start_time"]["number"], a_end);
  EXPECT_EQ(rec_c["start_time"]["number"], a_end + 600);
  EXPECT_EQ(rec_b["priority"]["number"], 1);
  EXPECT_EQ(rec_d["state_reason"], "JobHeldUser");
  EXPECT_EQ(rec_d["start_time"]["number"], 0);
  EXPECT_EQ(rec_d["priority"]["number"], 0);
  for (const int id : {a, b, c, d}) ASSERT_TRUE(del("/job/" + std::to_string(id)));
}

TEST_F(SimulatorTest, HetJobHasOneRecordPerComponent) {
  json c0 = jobBody("")["job"];
  c0.erase("script");
  c0["partition"] = "gpu";
  c0["constraints"] = "a100";
  c0["tres_per_node"] = "gres/gpu:1";
  json c1 = {{"partition", "cpu"},
             {"cpus_per_task", 2},
             {"current_working_directory", jobs_dir_},
             {"environment", {"PATH=/usr/bin:/bin"}}};
  const json body = {{"script",
                      "#!/bin/bash\necho size=$SLURM_HET_SIZE g0=$SLURM_JOB_NODELIST_HET_GROUP_0 "
                      "g1=$SLURM_JOB_NODELIST_HET_GROUP_1 n1=$SLURM_JOB_NUM_NODES_HET_GROUP_1 "
                      "id1=$SLURM_JOB_ID_HET_GROUP_1\nsrun --het-group=1 bash -c 'echo step on "
                      "$SLURMD_NODENAME'\n"},
                     {"jobs", {c0, c1}}};
  const int leader = submit(body);
  ASSERT_GT(leader, 0);
  ASSERT_TRUE(waitState(std::to_string(leader), {"COMPLETED"}));
  const json jobs = job(std::to_string(leader));
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]["job_id"], leader);
  EXPECT_EQ(jobs[1]["job_id"], leader + 1);
  EXPECT_EQ(jobs[1]["het_job_id"]["number"], leader);
  EXPECT_EQ(jobs[1]["het_job_offset"]["number"], 1);
  EXPECT_NE(jobs[0]["step_id"]["sluid"], jobs[1]["step_id"]["sluid"]);
  EXPECT_EQ(job(std::to_string(leader + 1)).size(), 1u);
  EXPECT_EQ(job(jobs[0]["step_id"]["sluid"]).size(), 2u);
  EXPECT_EQ(readFile(jobs_dir_ + "/t-" + std::to_string(leader) + ".out"),
            "size=2 g0=gpu2 g1=cpu1 n1=1 id1=" + std::to_string(leader + 1) + "\nstep on cpu1\n");
  auto st = get("/jobs/state/?job_id=" + std::to_string(leader));
  ASSERT_TRUE(st);
  const json states = json::parse(st->body)["jobs"];
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0]["job_id"], std::to_string(leader) + "+0");
  EXPECT_EQ(states[1]["job_id"], std::to_string(leader + 1) + "+1");
}

// As on Slurm 26.05.3 (tried with sbatch on the test cluster): a signal that ends the srun
// of a step in a het job's first component cancels the whole het job; ending a later
// component's srun, or passing SIGUSR1 through srun to the tasks, leaves the job to end with
// the script's own exit code.
json hetSteps(const json& first, const std::string& jobs_dir, const std::string& stop) {
  json c0 = first;
  c0.erase("script");
  c0["partition"] = "gpu";
  json c1 = {{"partition", "cpu"},
             {"current_working_directory", jobs_dir},
             {"environment", {"PATH=/usr/bin:/bin"}}};
  // Each task says it is ready once its trap is set; the script signals only then (at most
  // 10 s later), whatever the machine's load.
  const std::string step =
      "bash -c 'trap \"echo stopped $SLURM_STEP_ID; exit 0\" USR1; : "
      ">\"$TP_READY/$SLURM_STEP_ID\"; "
      "sleep 30 & wait'";
  return {{"script", "#!/bin/bash\nexport TP_READY=$(mktemp -d)\nsrun --het-group=0 " + step +
                         " &\na=$!\nsrun --het-group=1 " + step +
                         " &\nb=$!\nfor i in $(seq 100); do [ -e $TP_READY/0 ] && [ -e "
                         "$TP_READY/1 ] && break; sleep 0.1; done\n" +
                         stop + "\nwait\nexit 3\n"},
          {"jobs", {c0, c1}}};
}

TEST_F(SimulatorTest, HetStepsAskedThroughSrunLeaveTheJobToEndWithItsCode) {
  const int leader = submit(hetSteps(jobBody("")["job"], jobs_dir_, "kill -USR1 $a $b"));
  ASSERT_GT(leader, 0);
  ASSERT_TRUE(waitState(std::to_string(leader), {"FAILED"}));
  const json jobs = job(std::to_string(leader));
  EXPECT_EQ(jobs[0]["exit_code"]["return_code"]["number"], 3) << jobs[0].dump(2);
  const std::string out = readFile(jobs_dir_ + "/t-" + std::to_string(leader) + ".out");
  EXPECT_NE(out.find("stopped 0"), std::string::npos) << out;
  EXPECT_NE(out.find("stopped 1"), std::string::npos) << out;
}

TEST_F(SimulatorTest, EndingTheFirstComponentsSrunCancelsTheHetJob) {
  const int later = submit(hetSteps(jobBody("")["job"], jobs_dir_, "kill $b; kill -USR1 $a"));
  ASSERT_GT(later, 0);
  ASSERT_TRUE(waitState(std::to_string(later), {"FAILED"}));  // a later component's: no cancel
  const int first = submit(hetSteps(jobBody("")["job"], jobs_dir_, "kill $a"));
  ASSERT_GT(first, 0);
  ASSERT_TRUE(waitState(std::to_string(first), {"CANCELLED"}));
  EXPECT_EQ(state(std::to_string(first + 1)), json::array({"CANCELLED"}));
}

TEST_F(SimulatorTest, HetComponentWithoutCwdLeavesCancelledLeader) {
  json c0 = jobBody("true")["job"];
  const json body = {{"jobs", {c0, {{"partition", "gpu"}}}}};
  auto res = post("/job/submit", body);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 422);
  EXPECT_EQ(json::parse(res->body)["errors"][0]["error_number"], 2063);
  auto list = json::parse(get("/jobs/")->body)["jobs"];
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["job_state"], json::array({"CANCELLED"}));
}

TEST_F(SimulatorTest, JobsListUpdateTimeIsAllOrNothing) {
  submit(jobBody("true", {{"hold", true}}));
  submit(jobBody("true", {{"hold", true}}));
  auto all = json::parse(get("/jobs/")->body);
  ASSERT_EQ(all["jobs"].size(), 2u);
  const int64_t last = all["last_update"]["number"];
  auto none = json::parse(get("/jobs/?update_time=" + std::to_string(last))->body);
  EXPECT_TRUE(none["jobs"].empty());
  ASSERT_EQ(none["warnings"].size(), 1u);
  EXPECT_EQ(none["warnings"][0]["description"].get<std::string>().rfind("No job changes", 0), 0u);
  auto older = json::parse(get("/jobs/?update_time=" + std::to_string(last - 3600))->body);
  EXPECT_EQ(older["jobs"].size(), 2u);
}

TEST_F(SimulatorTest, JobsStateFiltersLikeTheRealServer) {
  const int a = submit(jobBody("true", {{"hold", true}}));
  const int b = submit(jobBody("true", {{"hold", true}}));
  submit(jobBody("true", {{"hold", true}}));
  auto one = json::parse(get("/jobs/state/?job_id=" + std::to_string(a))->body)["jobs"];
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]["job_id"], std::to_string(a));
  EXPECT_EQ(one[0]["state"], json::array({"PENDING"}));
  auto two =
      json::parse(get("/jobs/state/?job_id=" + std::to_string(a) + "&job_id=" + std::to_string(b))
                      ->body)["jobs"];
  EXPECT_EQ(two.size(), 2u);
  client_->set_url_encode(false);  // send the literal comma, as curl would
  auto comma = get("/jobs/state/?job_id=" + std::to_string(a) + "," + std::to_string(b));
  ASSERT_TRUE(comma);
  EXPECT_EQ(comma->status, 500);
  auto encoded = get("/jobs/state/?job_id=" + std::to_string(a) + "%2C" + std::to_string(b));
  EXPECT_EQ(encoded->status, 422);
  auto by_sluid = json::parse(get("/jobs/state/?job_id=sCC1M8VPKSJX00")->body)["jobs"];
  EXPECT_EQ(by_sluid.size(), 3u);
  auto unknown = json::parse(get("/jobs/state/?job_id=999999")->body)["jobs"];
  EXPECT_TRUE(unknown.empty());
}

TEST_F(SimulatorTest, SubmitRejections) {
  auto v100 = post("/job/submit", jobBody("true", {{"partition", "gpu"}, {"constraints", "v100"}}));
  EXPECT_EQ(v100->status, 422);
  EXPECT_EQ(json::parse(v100->body)["errors"][0]["error_number"], 2029);
  EXPECT_TRUE(json::parse(get("/jobs/")->body)["jobs"].empty());  // no record

  auto h100 = post("/job/submit", jobBody("true", {{"constraints", "h100"}}));
  EXPECT_EQ(h100->status, 422);
  const json err = json::parse(h100->body);
  EXPECT_EQ(err["errors"][0]["error_number"], 2014);
  EXPECT_FALSE(err.contains("job_id"));
  const json left = json::parse(get("/jobs/")->body)["jobs"];
  ASSERT_EQ(left.size(), 1u);  // a FAILED record is left behind
  EXPECT_EQ(left[0]["job_state"], json::array({"FAILED"}));
  EXPECT_EQ(left[0]["state_reason"], "BadConstraints");

  auto part = post("/job/submit", jobBody("true", {{"partition", "nosuch"}}));
  EXPECT_EQ(json::parse(part->body)["errors"][0]["error_number"], 2000);
  auto bad = client_->Post((std::string(kApi) + "/job/submit").c_str(), auth(), "{\"job\": {",
                           "application/json");
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(bad->body, "Failure during parsing");
}

TEST_F(SimulatorTest, LookupErrors) {
  auto unknown = get("/job/999999");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(json::parse(unknown->body)["errors"][0]["error_number"], 2017);
  for (const char* bad : {"s0000000000000", "sNOTASLUID", "sUUUUUUUUUUUUU", "abc", "0"}) {
    auto res = get(std::string("/job/") + bad);
    EXPECT_EQ(res->status, 422) << bad;
    EXPECT_EQ(json::parse(res->body)["errors"][0]["error_number"], 9000) << bad;
  }
  EXPECT_EQ(get("/job/10+1")->status, 404);
  auto del_unknown = del("/job/sCC1M8VPG9ZZZZ");
  EXPECT_EQ(del_unknown->status, 200);
  EXPECT_EQ(json::parse(del_unknown->body)["status"][0]["error"]["code"], 2017);
}

TEST_F(SimulatorTest, UpdateByIdReleasesHoldButNotBySluid) {
  const int id = submit(jobBody("true", {{"hold", true}}));
  const std::string sid = std::to_string(id);
  const std::string sluid = job(sid)[0]["step_id"]["sluid"];
  auto by_sluid = post("/job/" + sluid, {{"comment", "x"}});
  EXPECT_EQ(by_sluid->status, 404);
  EXPECT_EQ(json::parse(by_sluid->body)["errors"][0]["error_number"], 2017);
  auto comment = post("/job/" + sid, {{"comment", "updated by id"}});
  EXPECT_EQ(comment->status, 200);
  EXPECT_EQ(job(sid)[0]["comment"], "updated by id");
  EXPECT_EQ(state(sid), json::array({"PENDING"}));
  EXPECT_EQ(post("/job/" + sid, {{"hold", false}})->status, 200);
  EXPECT_TRUE(waitState(sid, {"COMPLETED"}));
}

TEST_F(SimulatorTest, PartitionsAndNodesDescribeTheCluster) {
  const json parts = json::parse(get("/partitions/")->body)["partitions"];
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]["name"], "gpu");
  EXPECT_EQ(parts[0]["nodes"]["configured"], "gpu[1-2]");
  const json nodes = json::parse(get("/nodes/")->body)["nodes"];
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0]["features"], json::array({"h100"}));
  EXPECT_EQ(nodes[0]["gres"], "gpu:h100:2");
}

TEST_F(SimulatorTest, DeleteJobsCancelsByNameAndUser) {
  submit(jobBody("true", {{"hold", true}, {"name", "bulk"}}));
  submit(jobBody("true", {{"hold", true}, {"name", "bulk"}}));
  const int keep = submit(jobBody("true", {{"hold", true}, {"name", "keep"}}));
  auto res = client_->Delete((std::string(kApi) + "/jobs/").c_str(), auth(),
                             json{{"job_name", "bulk"}, {"user_name", "tpuser"}}.dump(),
                             "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const json states = json::parse(get("/jobs/state/")->body);  // outlives the loop
  for (const auto& s : states["jobs"]) {
    const bool kept = s["job_id"] == std::to_string(keep);
    EXPECT_EQ(s["state"][0], kept ? "PENDING" : "CANCELLED");
  }
}

}  // namespace
}  // namespace tuneplane::sim::testing
