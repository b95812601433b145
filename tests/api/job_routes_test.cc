// The /v1/jobs routes against the real job service and SQLite in memory: submit (201 with
// Location, or 422 with every error and nothing stored or staged), owner scoping (another
// user's job is 404; an admin sees all), listing with filters and pages, events, cancel,
// abandon (admin only), and logs through an injected reader.
#include <pwd.h>

#include <filesystem>
#include <set>

#include "api_fixture.h"
#include "control/decisions.h"

namespace tuneplane::api::testing {
namespace {

class JobRoutesTest : public ApiFixture {};

bool isEmptyDir(const std::string& dir) {
  return std::filesystem::is_empty(dir);
}

TEST_F(JobRoutesTest, SubmitReturns201WithLocationAndTheJobAsStored) {
  auto res = post("/v1/jobs", cpuSpec("echo hi", "", "hello"));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const json job = body(res);
  EXPECT_EQ(res->get_header_value("Location"), "/v1/jobs/" + job["id"].get<std::string>());
  EXPECT_EQ(job["name"], "hello");
  EXPECT_EQ(job["owner"], "alice");
  EXPECT_EQ(job["phase"], "Pending");
  EXPECT_EQ(job["spec"], cpuSpec("echo hi", "", "hello"));
  EXPECT_EQ(job["attempts"], json::array());
  EXPECT_TRUE(job["created"].get<std::string>().ends_with("Z"));
  EXPECT_EQ(wakes_.load(), 1);  // the control loop is told at once
  auto stored = store_->getJob(job["id"]);
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->job.owner, "alice");
}

TEST_F(JobRoutesTest, AJsonSpecIsAcceptedToo) {
  const std::string spec = R"({"apiVersion":"tuneplane.io/v1","kind":"TrainingJob",
    "metadata":{"name":"jsonjob"},
    "spec":{"framework":{"name":"custom","task":"custom","runtime_id":"custom-demo",
      "command":["bash","-c","echo hi"]},
      "resources":{"time_limit":"10m","pools":[{"name":"main","nodes":1,"gpus_per_node":0,
      "cpus":1,"memory_gb":1}]}}})";
  auto res = post("/v1/jobs", spec, kAliceToken, "application/json; charset=utf-8");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
  EXPECT_EQ(body(res)["name"], "jsonjob");
}

TEST_F(JobRoutesTest, ABadSpecIs422WithEveryErrorAndNothingStoredOrStaged) {
  // Two problems at once: a data volume and a multi-node CPU job.
  std::string multi = cpuSpec("echo hi", "  data:\n    volumes:\n      - name: ds\n", "bad");
  multi.replace(multi.find("nodes: 1"), 8, "nodes: 2");
  auto res = post("/v1/jobs", multi);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 422) << res->body;
  const json errors = body(res)["errors"];
  ASSERT_GE(errors.size(), 1u);
  std::set<std::string> codes;
  for (const auto& e : errors) {
    codes.insert(e["code"].get<std::string>());
    EXPECT_TRUE(e.contains("field"));
    EXPECT_FALSE(e["message"].get<std::string>().empty());
  }
  EXPECT_TRUE(codes.count("launch.volumes_not_supported")) << errors.dump();
  EXPECT_TRUE(codes.count("launch.cpu_only_multi_node")) << errors.dump();
  auto page = store_->listJobs({});
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->jobs.empty());
  EXPECT_TRUE(isEmptyDir(site_.stagingRoot()));
  EXPECT_EQ(wakes_.load(), 0);
}

TEST_F(JobRoutesTest, RefusalsOnSlurmCarryTheirRuleCodes) {
  struct Case {
    std::string name;
    std::string spec;
    std::string code;
  };
  std::string volumes = cpuSpec("echo", "  data:\n    volumes:\n      - name: ds\n");
  std::string playground = cpuSpec();
  playground.replace(playground.find("TrainingJob"), 11, "Playground");
  std::string multi = cpuSpec();
  multi.replace(multi.find("nodes: 1"), 8, "nodes: 2");
  const std::vector<Case> cases = {
      {"volumes", volumes, "launch.volumes_not_supported"},
      {"playground kind", playground, "launch.kind_not_supported"},
      {"cpu multi-node", multi, "launch.cpu_only_multi_node"},
  };
  for (const auto& c : cases) {
    auto res = post("/v1/jobs", c.spec);
    ASSERT_TRUE(res) << c.name;
    EXPECT_EQ(res->status, 422) << c.name << ": " << res->body;
    bool found = false;
    const json answer = body(res);
    for (const auto& e : answer["errors"]) found = found || e["code"] == c.code;
    EXPECT_TRUE(found) << c.name << ": " << res->body;
  }
}

TEST_F(JobRoutesTest, AnotherUsersJobIsNotFoundButAnAdminSeesIt) {
  const std::string id = submitJob(kAliceToken);
  EXPECT_EQ(get("/v1/jobs/" + id, kAliceToken)->status, 200);
  for (const std::string& path :
       {"/v1/jobs/" + id, "/v1/jobs/" + id + "/events", "/v1/jobs/" + id + "/logs"}) {
    auto res = get(path, kBobToken);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_EQ(code(res), "api.not_found");
  }
  auto cancel = post("/v1/jobs/" + id + "/cancel", "", kBobToken);
  EXPECT_EQ(cancel->status, 404);
  auto stored = store_->getJob(id);
  ASSERT_TRUE(stored && *stored);
  EXPECT_FALSE((*stored)->job.cancel_requested);
  auto admin = get("/v1/jobs/" + id, kRootToken);
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->status, 200);
  EXPECT_EQ(body(admin)["owner"], "alice");
}

TEST_F(JobRoutesTest, AMalformedOrUnknownIdIs404) {
  EXPECT_EQ(get("/v1/jobs/..%2F..%2Fetc")->status, 404);
  EXPECT_EQ(get("/v1/jobs/hello-00000000")->status, 404);
  EXPECT_EQ(code(get("/v1/jobs/hello-00000000")), "api.not_found");
}

TEST_F(JobRoutesTest, ListIsScopedToTheOwnerNewestFirstAndPaged) {
  const std::string a1 = submitJob(kAliceToken, "first");
  clock_.advance(std::chrono::seconds(1));
  const std::string a2 = submitJob(kAliceToken, "second");
  clock_.advance(std::chrono::seconds(1));
  const std::string b1 = submitJob(kBobToken, "bobs");
  auto res = get("/v1/jobs?limit=1", kAliceToken);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json page = body(res);
  ASSERT_EQ(page["items"].size(), 1u);
  EXPECT_EQ(page["items"][0]["id"], a2);
  EXPECT_EQ(page["items"][0]["attempt_count"], 0);
  EXPECT_TRUE(page["items"][0]["current_attempt"].is_null());
  EXPECT_FALSE(page["items"][0].contains("spec"));
  ASSERT_FALSE(page["continue"].get<std::string>().empty());
  auto next = get("/v1/jobs?limit=1&continue=" + page["continue"].get<std::string>(), kAliceToken);
  json page2 = body(next);
  ASSERT_EQ(page2["items"].size(), 1u);
  EXPECT_EQ(page2["items"][0]["id"], a1);
  // An admin sees everyone's, or one owner's.
  EXPECT_EQ(body(get("/v1/jobs", kRootToken))["items"].size(), 3u);
  auto bobs = body(get("/v1/jobs?owner=bob", kRootToken));
  ASSERT_EQ(bobs["items"].size(), 1u);
  EXPECT_EQ(bobs["items"][0]["id"], b1);
  // A user cannot ask for another's.
  EXPECT_EQ(get("/v1/jobs?owner=bob", kAliceToken)->status, 403);
}

TEST_F(JobRoutesTest, ListFiltersByNamePhaseAndLabel) {
  submitJob(kAliceToken, "one");
  submitJob(kAliceToken, "two");
  std::string labelled = cpuSpec("echo", "", "three");
  labelled.replace(labelled.find("  name: three\n"), 14,
                   "  name: three\n  labels:\n    team: nlp\n");
  ASSERT_EQ(post("/v1/jobs", labelled)->status, 201);
  EXPECT_EQ(body(get("/v1/jobs?name=two"))["items"].size(), 1u);
  EXPECT_EQ(body(get("/v1/jobs?phase=Pending"))["items"].size(), 3u);
  EXPECT_EQ(body(get("/v1/jobs?phase=Running"))["items"].size(), 0u);
  auto labelled_page = body(get("/v1/jobs?label=team%3Dnlp"));
  ASSERT_EQ(labelled_page["items"].size(), 1u);
  EXPECT_EQ(labelled_page["items"][0]["labels"]["team"], "nlp");
}

TEST_F(JobRoutesTest, BadListParametersAre400NamingEach) {
  auto res = get("/v1/jobs?phase=Sleeping&limit=0&label=novalue");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  std::set<std::string> fields;
  const json answer = body(res);
  for (const auto& e : answer["errors"]) fields.insert(e["field"].get<std::string>());
  EXPECT_EQ(fields, (std::set<std::string>{"phase", "limit", "label"}));
  EXPECT_EQ(get("/v1/jobs?continue=garbage")->status, 400);
}

TEST_F(JobRoutesTest, EventsListTheCreation) {
  const std::string id = submitJob();
  auto res = get("/v1/jobs/" + id + "/events");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const json items = body(res)["items"];
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["from"], "");
  EXPECT_EQ(items[0]["to"], "Pending");
  EXPECT_EQ(items[0]["actor"], "alice");
  EXPECT_EQ(items[0]["seq"], 1);
}

TEST_F(JobRoutesTest, CancelIs202AndRecordsWhoAsked) {
  const std::string id = submitJob();
  auto res = post("/v1/jobs/" + id + "/cancel", "");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 202) << res->body;
  EXPECT_EQ(body(res)["cancel_requested"], true);
  EXPECT_EQ(body(res)["cancel_requested_by"], "alice");
  // An admin may cancel anyone's job; the request is idempotent.
  EXPECT_EQ(post("/v1/jobs/" + id + "/cancel", "", kRootToken)->status, 202);
}

TEST_F(JobRoutesTest, AbandonIsForAdminsAndNeedsAReason) {
  const std::string id = submitJob();
  const std::string path = "/v1/jobs/" + id + "/attempts/1/abandon";
  auto user = post(path, R"({"reason":"gone"})", kAliceToken, "application/json");
  ASSERT_TRUE(user);
  EXPECT_EQ(user->status, 403);
  EXPECT_EQ(code(user), "auth.forbidden");
  auto no_reason = post(path, R"({"why":"x"})", kRootToken, "application/json");
  EXPECT_EQ(no_reason->status, 400);
  EXPECT_EQ(code(no_reason), "api.invalid_body");
  auto yaml = post(path, "reason: x", kRootToken, "application/yaml");
  EXPECT_EQ(yaml->status, 415);
  // The job has no SubmitUnknown attempt: there is nothing to abandon.
  auto nothing =
      post(path, R"({"reason":"the receipt is lost for good"})", kRootToken, "application/json");
  ASSERT_TRUE(nothing);
  EXPECT_EQ(nothing->status, 404) << nothing->body;
}

TEST_F(JobRoutesTest, AbandonOfALostReceiptIsRecordedWithWhoAndWhy) {
  const std::string id = submitJob();
  ASSERT_NO_FATAL_FAILURE(
      commitAttempt(firstAttempt(id, phase::AttemptPhase::kSubmitUnknown,
                                 site_.stagingRoot() + "/jobs/" + id + "/attempts/1"),
                    phase::JobPhase::kSubmitUnknown));
  auto res = post("/v1/jobs/" + id + "/attempts/1/abandon",
                  R"({"reason":"the receipt is lost for good"})", kRootToken, "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 202) << res->body;
  const json a = body(res)["attempts"][0];
  EXPECT_EQ(a["abandoned_by"], "root");
  EXPECT_EQ(a["abandon_reason"], "the receipt is lost for good");
}

// resume_from_step: read from each submitted attempt's logs/resume.json (as its batch script
// wrote it), through the default reader.
TEST_F(JobRoutesTest, AnAttemptShowsTheStepItsScriptRecorded) {
  const std::string id = submitJob();
  const std::string dir = site_.stagingRoot() + "/jobs/" + id + "/attempts/1";
  store::AttemptRecord attempt = firstAttempt(id, phase::AttemptPhase::kRunning, dir);
  attempt.submitted_ms = 1'000;
  attempt.components.push_back({0, "main", 7, "sX", {"RUNNING"}, "None", {}, {}, "cpu1", 0, 0});
  commitAttempt(attempt, phase::JobPhase::kRunning);
  EXPECT_TRUE(body(get("/v1/jobs/" + id))["attempts"][0]["resume_from_step"].is_null());
  std::filesystem::create_directories(dir + "/logs");
  pipeline::testing::writeFile(dir + "/logs/resume.json", R"({"version":1,"step":1200})");
  EXPECT_EQ(body(get("/v1/jobs/" + id))["attempts"][0]["resume_from_step"], 1200);
  // Not in the list's summary, which reads no files.
  EXPECT_FALSE(body(get("/v1/jobs"))["items"][0]["current_attempt"].contains("resume_from_step"));
}

// Every user as themselves (issue 44): on a per_user site a job runs as its user's Unix user,
// checked when it is submitted — a user the host does not know is a 422 naming it, and
// nothing is stored — and shown as the job's run_as; a shared site shows none.
class PerUserRoutesTest : public ApiFixture {
 protected:
  PerUserRoutesTest() { context_.site.slurm.identity = catalog::IdentityMode::kPerUser; }
  void tune(ApiDependencies&, HttpServerOptions&) override {
    tokens_[0].unix_user = "tp-no-such-user";  // alice
    tokens_[1].unix_user = "nobody";           // bob: a user every Debian host has
  }
};

TEST_F(PerUserRoutesTest, AJobRunsAsItsUsersUnixUserOrIsRefusedNamingIt) {
  auto refused = post("/v1/jobs", cpuSpec("echo x"));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 422) << refused->body;
  EXPECT_EQ(code(refused), "api.unknown_unix_user");
  EXPECT_NE(refused->body.find("tp-no-such-user"), std::string::npos) << refused->body;
  auto none = store_->listJobs({});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->jobs.empty());

  if (::getpwnam("nobody") == nullptr) GTEST_SKIP() << "this host has no user 'nobody'";
  auto accepted = post("/v1/jobs", cpuSpec("echo x", "", "bobs"), kBobToken);
  ASSERT_TRUE(accepted);
  ASSERT_EQ(accepted->status, 201) << accepted->body;
  const json job = body(accepted);
  EXPECT_EQ(job["run_as"], "nobody");
  EXPECT_EQ(body(get("/v1/jobs/" + job["id"].get<std::string>(), kBobToken))["run_as"], "nobody");
  EXPECT_EQ(store_->getJob(job["id"].get<std::string>())->value().job.run_as, "nobody");
}

TEST_F(JobRoutesTest, ASharedSiteShowsNoRunAs) {
  const json job = body(post("/v1/jobs", cpuSpec("echo x")));
  EXPECT_TRUE(job["run_as"].is_null()) << job.dump();
}

class ResumeRoutesTest : public ApiFixture {
 protected:
  void tune(ApiDependencies& deps, HttpServerOptions&) override {
    deps.resume_step = [this](const std::string& dir) -> std::optional<int64_t> {
      std::lock_guard<std::mutex> lock(asked_mu_);
      asked_.push_back(dir);
      return 40;
    };
  }
  std::vector<std::string> asked() {
    std::lock_guard<std::mutex> lock(asked_mu_);
    return asked_;
  }
  std::mutex asked_mu_;
  std::vector<std::string> asked_;
};

TEST_F(ResumeRoutesTest, OnlyAttemptsThatReachedSlurmAreRead) {
  const std::string id = submitJob();
  addRunningAttempt(id, "/staging/jobs/" + id + "/attempts/1");  // not submitted yet
  EXPECT_TRUE(body(get("/v1/jobs/" + id))["attempts"][0]["resume_from_step"].is_null());
  EXPECT_TRUE(asked().empty());
  store::AttemptRecord attempt =
      firstAttempt(id, phase::AttemptPhase::kRunning, "/staging/jobs/" + id + "/attempts/1");
  attempt.submitted_ms = 1'000;
  attempt.components.push_back({0, "main", 7, "sX", {"RUNNING"}, "None", {}, {}, "cpu1", 0, 0});
  commitAttempt(attempt, phase::JobPhase::kRunning);
  EXPECT_EQ(body(get("/v1/jobs/" + id))["attempts"][0]["resume_from_step"], 40);
  EXPECT_EQ(asked(), std::vector<std::string>{"/staging/jobs/" + id + "/attempts/1"});
}

class LogRoutesTest : public ApiFixture {
 protected:
  void tune(ApiDependencies& deps, HttpServerOptions&) override {
    deps.logs = [this](const std::string& dir, std::string_view pool, LogStream stream,
                       attempt::JobState) -> Result<LogSnapshot> {
      asked_ = dir + "|" + std::string(pool) + "|" + (stream == LogStream::kStdout ? "out" : "err");
      LogSnapshot snapshot;
      snapshot.text = "line 1\nline 2\n";
      snapshot.lines = 2;
      snapshot.file_bytes = 14;
      return snapshot;
    };
  }
  // Gives the job an attempt with one component, as the reconciler would.
  std::string withAttempt() {
    const std::string id = submitJob();
    addRunningAttempt(id, "/staging/jobs/" + id + "/attempts/1");
    return id;
  }
  std::string asked_;
};

TEST_F(LogRoutesTest, LogsDefaultToTheLastAttemptsFirstComponentStdout) {
  const std::string id = withAttempt();
  auto res = get("/v1/jobs/" + id + "/logs");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json log = body(res);
  EXPECT_EQ(log["attempt"], 1);
  EXPECT_EQ(log["component"], "main");
  EXPECT_EQ(log["stream"], "stdout");
  EXPECT_EQ(log["content"], "line 1\nline 2\n");
  EXPECT_EQ(log["lines"], 2);
  EXPECT_EQ(log["truncated"], false);
  EXPECT_TRUE(log["missing_reason"].is_null());
  EXPECT_EQ(asked_, "/staging/jobs/" + id + "/attempts/1|main|out");
  ASSERT_EQ(get("/v1/jobs/" + id + "/logs?stream=stderr&attempt=1&component=main")->status, 200);
  EXPECT_EQ(asked_, "/staging/jobs/" + id + "/attempts/1|main|err");
}

TEST_F(LogRoutesTest, UnknownAttemptComponentOrStreamAreRefused) {
  const std::string id = withAttempt();
  EXPECT_EQ(get("/v1/jobs/" + id + "/logs?attempt=2")->status, 404);
  EXPECT_EQ(get("/v1/jobs/" + id + "/logs?component=other")->status, 404);
  EXPECT_EQ(get("/v1/jobs/" + id + "/logs?component=..%2F..%2Fetc")->status, 404);
  EXPECT_EQ(get("/v1/jobs/" + id + "/logs?stream=stdin")->status, 400);
  const std::string pending = submitJob();
  auto none = get("/v1/jobs/" + pending + "/logs");
  EXPECT_EQ(none->status, 404);
  EXPECT_EQ(body(none)["errors"][0]["field"], "attempt");
}

// An attempt the reconciler has only just begun (Staging: nothing sent to Slurm yet) already
// holds one component per pool of its spec, so its log is served by the first pool's name.
TEST_F(LogRoutesTest, AnAttemptJustBegunIsServedByItsFirstPool) {
  const std::string id = submitJob();
  auto view = store_->getJob(id);
  ASSERT_TRUE(view && *view);
  const std::string dir = "/staging/jobs/" + id + "/attempts/1";
  auto change =
      control::beginAttempt(**view, 1, "tp-00112233445566778899aabbccddeeff", dir, {"main"}, 1'000);
  ASSERT_TRUE(change) << change.error().describe();
  ASSERT_TRUE(store_->commit(*change));
  auto res = get("/v1/jobs/" + id + "/logs");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(body(res)["component"], "main");
  EXPECT_EQ(asked_, dir + "|main|out");
}

// An attempt stored without any component row was not written by this server (see the
// handler): a broken invariant is a 500 naming the attempt, never a log read.
TEST_F(LogRoutesTest, AnAttemptWithoutComponentsIsAnInternalError) {
  const std::string id = submitJob();
  ASSERT_NO_FATAL_FAILURE(commitAttempt(
      firstAttempt(id, phase::AttemptPhase::kStaging, "/staging/jobs/" + id + "/attempts/1"),
      phase::JobPhase::kStaging));
  auto res = get("/v1/jobs/" + id + "/logs");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500) << res->body;
  EXPECT_EQ(code(res), "api.internal");
  EXPECT_EQ(body(res)["errors"][0]["field"], "attempt");
  EXPECT_EQ(asked_, "") << "no log is read for it";
}

}  // namespace
}  // namespace tuneplane::api::testing

namespace tuneplane::api::testing {
namespace {

// Why a queued job waits: GET /v1/jobs/{id} and the list say Slurm's reason in words, its
// estimate and its place, from the queue the server shares — asked only for jobs that wait.
class WaitingRoutesTest : public ApiFixture {
 protected:
  void tune(ApiDependencies& deps, HttpServerOptions&) override {
    deps.pending_queue = [this](int64_t newer_than_ms) {
      ++asked_;
      newer_than_ms_ = newer_than_ms;
      slurm::JobRecord ahead, ours;
      ahead.job_id = 41;
      ahead.sluid = "sAHEAD";
      ahead.partition = ours.partition = "gpu";
      ahead.job_state = ours.job_state = {"PENDING"};
      ahead.priority = {true, false, 9};
      ours.priority = {true, false, 1};
      ours.job_id = 42;
      ours.sluid = "sOURS";
      ours.state_reason = "Priority";
      ours.start_time = {true, false, 1'796'105'000};
      return std::make_shared<const QueueSnapshot>(queueSnapshot({ahead, ours}, 1'796'101'000'000));
    };
  }
  std::string queuedJob() {
    const std::string id = submitJob();
    store::AttemptRecord attempt =
        firstAttempt(id, phase::AttemptPhase::kQueued, "/staging/jobs/" + id + "/attempts/1");
    attempt.slurm_job_id = 42;
    attempt.submitted_ms = 1'796'100'000'000;
    attempt.components.push_back(
        {0, "main", 42, "sOURS", {"PENDING"}, "Resources", {}, {}, "", 0, 0});
    commitAttempt(attempt, phase::JobPhase::kQueued);
    return id;
  }
  int asked_ = 0;
  int64_t newer_than_ms_ = 0;
};

TEST_F(WaitingRoutesTest, AQueuedJobSaysWhyItWaitsUntilWhenAndItsPlace) {
  const std::string id = queuedJob();
  auto res = get("/v1/jobs/" + id);
  ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "");
  const json waiting = body(res)["waiting"];
  EXPECT_EQ(waiting["attempt"], 1);
  EXPECT_EQ(waiting["as_of"], "2026-12-01T04:56:40.000Z");
  ASSERT_EQ(waiting["components"].size(), 1u);
  const json c = waiting["components"][0];
  EXPECT_EQ(c["pool"], "main");
  EXPECT_EQ(c["reason"], "Priority");  // the queue's word, fresher than the stored one
  EXPECT_EQ(c["reason_text"], "jobs of higher priority are ahead of it in the partition's queue");
  EXPECT_EQ(c["partition"], "gpu");
  EXPECT_EQ(c["position"], 2);
  EXPECT_EQ(c["pending_in_partition"], 2);
  EXPECT_EQ(c["estimated_start"], "2026-12-01T06:03:20.000Z");
  EXPECT_EQ(newer_than_ms_, 1'796'100'000'000);  // the snapshot must be newer than the submit

  auto list = get("/v1/jobs");
  ASSERT_TRUE(list && list->status == 200);
  const json item = body(list)["items"][0];
  EXPECT_EQ(item["waiting"]["components"][0]["position"], 2);
  EXPECT_EQ(item["waiting"]["components"][0]["pool"], nullptr);
  EXPECT_EQ(asked_, 2);
}

TEST_F(WaitingRoutesTest, AJobThatDoesNotWaitDoesNotAskTheQueue) {
  const std::string id = submitJob();
  addRunningAttempt(id, "/staging/jobs/" + id + "/attempts/1");
  auto res = get("/v1/jobs/" + id);
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_EQ(body(res)["waiting"], nullptr);
  auto list = get("/v1/jobs");
  ASSERT_TRUE(list && list->status == 200);
  EXPECT_EQ(body(list)["items"][0]["waiting"], nullptr);
  EXPECT_EQ(asked_, 0);
}

}  // namespace
}  // namespace tuneplane::api::testing
