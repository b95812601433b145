// The server verbs (submit, get, describe, events, logs, cancel, attempt abandon, whoami)
// parsed from real command lines in-process and run against a fake /v1 server on loopback:
// what each sends (method, path, query, Authorization, body), what it prints for people and
// for scripts, and the exit code of every kind of failure. Time is a FakeClock moved by a
// fake sleeper, so --wait and -f never sleep; no test can hang (see fake_api_server.h).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "cli/commands.h"
#include "cli/run_app.h"
#include "client_cli/server_commands.h"
#include "support/fake_api_server.h"
#include "support/fake_sleeper.h"

namespace tuneplane::cli {
namespace {

using tuneplane::testing::CannedReply;
using tuneplane::testing::FakeApiServer;
using tuneplane::testing::FakeSleeper;
using Json = nlohmann::ordered_json;

constexpr const char* kToken = "tp-cli-sentinel-token-77f1";
constexpr int64_t kNow = 1'796'274'000'000;  // 2026-12-03T05:00:00Z

std::string jobJson(const std::string& phase, const std::string& reason = "") {
  Json job = {{"id", "hello-1a2b3c4d"},
              {"name", "hello"},
              {"owner", "alice"},
              {"labels", {{"team", "nlp"}}},
              {"phase", phase},
              {"reason", reason},
              {"created", "2026-12-03T04:55:00.000Z"},
              {"updated", "2026-12-03T04:59:00.000Z"},
              {"cancel_requested", false},
              {"cancel_requested_by", nullptr},
              {"next_attempt_at", nullptr},
              {"spec", "apiVersion: tuneplane.io/v1\nkind: TrainingJob\n"}};
  Json component = {{"index", 0},
                    {"pool", "cpu"},
                    {"job_id", 123},
                    {"sluid", "sCC1M8VPKSJX00"},
                    {"state", {"COMPLETED"}},
                    {"reason", "None"},
                    {"exit_code", 0},
                    {"signal", nullptr},
                    {"nodes", "cpu1"},
                    {"start_time", "2026-12-03T04:56:00.000Z"},
                    {"end_time", "2026-12-03T04:58:00.000Z"}};
  job["attempts"] = Json::array({{{"number", 1},
                                  {"phase", phase},
                                  {"reason", reason},
                                  {"cause", "none"},
                                  {"submit_token", "tp-abc"},
                                  {"staging_dir", "/shared/jobs/hello-1a2b3c4d/attempts/1"},
                                  {"job_id", 123},
                                  {"created", "2026-12-03T04:55:00.000Z"},
                                  {"submitted", "2026-12-03T04:55:01.000Z"},
                                  {"ended", nullptr},
                                  {"lookups", 0},
                                  {"abandoned_by", nullptr},
                                  {"abandon_reason", nullptr},
                                  {"components", {component}}}});
  return job.dump();
}

std::string errorsJson(const std::string& code, const std::string& field,
                       const std::string& message) {
  return Json{{"errors", {{{"code", code}, {"field", field}, {"message", message}}}}}.dump();
}

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

class ServerCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-cli-server-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    env_.home = dir_;  // no config file there unless a test writes one
    env_.server = server_.url();
    env_.token = kToken;
  }
  void TearDown() override {
    // Whatever happened, the token was never printed.
    EXPECT_EQ(everything_.find(kToken), std::string::npos) << everything_;
    std::filesystem::remove_all(dir_);
  }

  Outcome run(std::vector<std::string> args, const std::string& stdin_text = "",
              bool terminal = false) {
    std::ostringstream out, err;
    std::istringstream in(stdin_text);
    CommandIo io{
        out,
        err,
        in,
        terminal,
        clock_,
        sleeper_,
        env_,
        client::ClientTimeouts{std::chrono::milliseconds(2000), std::chrono::milliseconds(1500)}};
    CLI::App app{"tuneplane", "tuneplane"};
    app.require_subcommand(1);
    addServerCommands(app, [&io]() -> CommandIo& { return io; });
    Outcome result;
    result.code = runApp(app, std::move(args), out, err);
    result.out = out.str();
    result.err = err.str();
    everything_ += result.out + result.err;
    return result;
  }

  std::string writeSpec(const std::string& text) {
    const std::string path = dir_ + "/job.yaml";
    std::ofstream(path) << text;
    return path;
  }

  FakeApiServer server_;
  FakeClock clock_{kNow};
  FakeSleeper sleeper_{clock_};
  client::ClientEnvironment env_;
  std::string dir_;
  std::string everything_;
};

const std::string kSpec =
    "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: hello\n";

TEST_F(ServerCommandsTest, SubmitPostsTheFileAsWrittenAndPrintsTheId) {
  server_.on("POST", "/v1/jobs", 201, jobJson("Pending"));
  const Outcome r = run({"submit", writeSpec(kSpec)});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "hello-1a2b3c4d submitted (Pending)\n");
  const auto sent = server_.requests("POST", "/v1/jobs");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].body, kSpec);
  EXPECT_EQ(sent[0].header("Authorization"), std::string("Bearer ") + kToken);
  EXPECT_EQ(sent[0].header("Content-Type"), "application/yaml");
}

TEST_F(ServerCommandsTest, SubmitTakesTheSpecFromDashFOrStdin) {
  server_.on("POST", "/v1/jobs", 201, jobJson("Pending"));
  EXPECT_EQ(run({"submit", "-f", writeSpec(kSpec)}).code, kExitOk);
  EXPECT_EQ(run({"submit", "-"}, "{\"kind\": \"TrainingJob\"}").code, kExitOk);
  const auto sent = server_.requests("POST", "/v1/jobs");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].body, kSpec);
  EXPECT_EQ(sent[1].body, "{\"kind\": \"TrainingJob\"}");
  EXPECT_EQ(sent[1].header("Content-Type"), "application/json");
}

TEST_F(ServerCommandsTest, SubmitWithoutASpecOrWithAMissingFileSendsNothing) {
  const Outcome none = run({"submit"});
  EXPECT_EQ(none.code, kExitInvalid);
  EXPECT_NE(none.err.find("a job spec is required"), std::string::npos) << none.err;
  const Outcome missing = run({"submit", dir_ + "/nope.yaml"});
  EXPECT_EQ(missing.code, kExitInvalid);
  EXPECT_NE(missing.err.find("nope.yaml"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("[cli.file_unreadable]"), std::string::npos) << missing.err;
  EXPECT_TRUE(server_.requests().empty());
}

TEST_F(ServerCommandsTest, ARefusedSpecPrintsEveryErrorWithItsField) {
  server_.on(
      "POST", "/v1/jobs", 422,
      R"({"errors":[{"code":"spec.required","field":"spec.pools[0].image","message":"image is required"},)"
      R"({"code":"launch.no_constraint","field":"spec.pools[0].gpu","message":"no GPU series h200"}]})");
  const Outcome text = run({"submit", writeSpec(kSpec)});
  EXPECT_EQ(text.code, kExitInvalid);
  EXPECT_EQ(text.out, "");
  EXPECT_NE(text.err.find("spec.pools[0].image: image is required [spec.required]"),
            std::string::npos)
      << text.err;
  EXPECT_NE(text.err.find("spec.pools[0].gpu: no GPU series h200 [launch.no_constraint]"),
            std::string::npos);

  const Outcome json = run({"submit", writeSpec(kSpec), "-o", "json"});
  EXPECT_EQ(json.code, kExitInvalid);
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["errors"].size(), 2u);
  EXPECT_EQ(doc["errors"][1]["field"], "spec.pools[0].gpu");
}

TEST_F(ServerCommandsTest, SubmitWaitExitsZeroWhenTheJobSucceeds) {
  server_.on("POST", "/v1/jobs", 201, jobJson("Pending"));
  for (const char* phase : {"Pending", "Running", "Succeeded"}) {
    server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson(phase));
  }
  const Outcome r = run({"submit", writeSpec(kSpec), "--wait"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "hello-1a2b3c4d: Succeeded\n");
  EXPECT_NE(r.err.find("hello-1a2b3c4d: Running"), std::string::npos) << r.err;
  EXPECT_EQ(server_.requests("GET", "/v1/jobs/hello-1a2b3c4d").size(), 3u);
}

TEST_F(ServerCommandsTest, SubmitWaitShowsTheAcceptedPhaseFirstAndEachChangeOnce) {
  // The control loop may have moved the job on before the first poll: the phase it was
  // accepted in is still the first line, and no line is printed twice.
  server_.on("POST", "/v1/jobs", 201, jobJson("Pending"));
  for (const char* phase : {"Running", "Running", "Succeeded"}) {
    server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson(phase));
  }
  const Outcome r = run({"submit", writeSpec(kSpec), "--wait"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  const size_t pending = r.err.find("hello-1a2b3c4d: Pending");
  const size_t running = r.err.find("hello-1a2b3c4d: Running");
  ASSERT_NE(pending, std::string::npos) << r.err;
  ASSERT_NE(running, std::string::npos) << r.err;
  EXPECT_LT(pending, running) << r.err;
  EXPECT_EQ(r.err.find("hello-1a2b3c4d: Running", running + 1), std::string::npos) << r.err;
}

TEST_F(ServerCommandsTest, SubmitWaitExitsOneWhenTheJobFailsOrIsCancelled) {
  server_.on("POST", "/v1/jobs", 201, jobJson("Pending"));
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson("Failed", "exit code 3"));
  const Outcome failed = run({"submit", writeSpec(kSpec), "--wait"});
  EXPECT_EQ(failed.code, kExitJobFailed);
  EXPECT_EQ(failed.out, "hello-1a2b3c4d: Failed (exit code 3)\n");

  server_.clear("GET", "/v1/jobs/hello-1a2b3c4d");
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson("Cancelled"));
  const Outcome json = run({"submit", writeSpec(kSpec), "--wait", "-o", "json"});
  EXPECT_EQ(json.code, kExitJobFailed);
  EXPECT_EQ(nlohmann::json::parse(json.out)["phase"], "Cancelled");  // the final job
}

TEST_F(ServerCommandsTest, SubmitWaitTimeoutAndCtrlCStopWaitingButNeverCancel) {
  server_.on("POST", "/v1/jobs", 201, jobJson("Pending"));
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson("Running"));
  const Outcome timed_out = run({"submit", writeSpec(kSpec), "--wait", "--timeout", "10s"});
  EXPECT_EQ(timed_out.code, kExitTimeout);
  EXPECT_NE(timed_out.err.find("keeps running"), std::string::npos) << timed_out.err;

  sleeper_.interruptAt(static_cast<int>(sleeper_.sleeps().size()) + 2);
  const Outcome interrupted = run({"submit", writeSpec(kSpec), "--wait"});
  EXPECT_EQ(interrupted.code, kExitInterrupted);
  EXPECT_NE(interrupted.err.find("tuneplane cancel hello-1a2b3c4d"), std::string::npos)
      << interrupted.err;
  EXPECT_TRUE(server_.requests("POST", "/v1/jobs/hello-1a2b3c4d/cancel").empty());
}

TEST_F(ServerCommandsTest, WaitFlagsAreCheckedBeforeAnythingIsSent) {
  EXPECT_EQ(run({"submit", writeSpec(kSpec), "--timeout", "10s"}).code, kExitInvalid);
  EXPECT_EQ(run({"submit", writeSpec(kSpec), "--wait", "--timeout", "soon"}).code, kExitInvalid);
  EXPECT_TRUE(server_.requests().empty());
}

TEST_F(ServerCommandsTest, GetJobsListsATableAndSendsTheFilters) {
  const std::string list = R"({"items":[)" + jobJson("Running") + R"(],"continue":""})";
  server_.on("GET", "/v1/jobs", 200, list);
  const Outcome r = run({"get", "jobs", "--phase", "Running", "-l", "team=nlp", "--limit", "10"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "ID\tNAME\tOWNER\tPHASE\tATTEMPTS\tCREATED\tREASON\n"
            "hello-1a2b3c4d\thello\talice\tRunning\t1\t2026-12-03T04:55:00.000Z\t-\n");
  const auto sent = server_.requests("GET", "/v1/jobs").at(0);
  EXPECT_EQ(sent.param("phase"), "Running");
  EXPECT_EQ(sent.param("label"), "team=nlp");
  EXPECT_EQ(sent.param("limit"), "10");

  // On a terminal: aligned, with relative times.
  const Outcome tty = run({"get"}, "", /*terminal=*/true);
  EXPECT_EQ(tty.code, kExitOk);
  EXPECT_NE(tty.out.find("hello-1a2b3c4d  hello  alice  Running  1         5m ago"),
            std::string::npos)
      << tty.out;
}

TEST_F(ServerCommandsTest, GetAllFollowsContinueTokens) {
  server_.on("GET", "/v1/jobs", 200,
             R"({"items":[)" + jobJson("Running") + R"(],"continue":"p2"})");
  server_.on("GET", "/v1/jobs", 200, R"({"items":[)" + jobJson("Failed") + R"(],"continue":""})");
  const Outcome r = run({"get", "jobs", "--all", "-o", "json"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["items"].size(), 2u);
  EXPECT_EQ(doc["items"][1]["phase"], "Failed");
  EXPECT_EQ(server_.requests("GET", "/v1/jobs").at(1).param("continue"), "p2");
}

TEST_F(ServerCommandsTest, GetJobPrintsTheServersObjectAsJsonOrYaml) {
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson("Running"));
  const Outcome json = run({"get", "job", "hello-1a2b3c4d", "-o", "json"});
  EXPECT_EQ(json.code, kExitOk) << json.err;
  EXPECT_EQ(Json::parse(json.out), Json::parse(jobJson("Running")));  // verbatim, key order too
  EXPECT_EQ(Json::parse(json.out).begin().key(), "id");

  const Outcome yaml = run({"get", "hello-1a2b3c4d", "-o", "yaml"});
  EXPECT_EQ(yaml.code, kExitOk) << yaml.err;
  const YAML::Node doc = YAML::Load(yaml.out);
  EXPECT_EQ(doc["phase"].as<std::string>(), "Running");
  EXPECT_EQ(doc["spec"].as<std::string>(), "apiVersion: tuneplane.io/v1\nkind: TrainingJob\n");
  EXPECT_EQ(doc["attempts"][0]["components"][0]["job_id"].as<int>(), 123);
  EXPECT_TRUE(doc["next_attempt_at"].IsNull());
}

TEST_F(ServerCommandsTest, DescribeShowsAttemptsComponentsAndEvents) {
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson("Succeeded"));
  server_.on(
      "GET", "/v1/jobs/hello-1a2b3c4d/events", 200,
      R"({"items":[{"seq":1,"time":"2026-12-03T04:55:00.000Z","attempt":0,"from":"","to":"Pending","reason":"submitted","actor":"alice"}]})");
  const Outcome r = run({"describe", "job", "hello-1a2b3c4d"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  for (const char* part :
       {"ID:            hello-1a2b3c4d", "Labels:        team=nlp", "Attempt 1:", "sCC1M8VPKSJX00",
        "COMPLETED", "cpu1", "/shared/jobs/hello-1a2b3c4d/attempts/1", "Events:", "submitted"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  const Outcome json = run({"describe", "hello-1a2b3c4d", "-o", "json"});
  const auto doc = Json::parse(json.out);
  EXPECT_EQ(doc["job"]["id"], "hello-1a2b3c4d");
  EXPECT_EQ(doc["events"][0]["to"], "Pending");
}

TEST_F(ServerCommandsTest, EventsListsEveryTransition) {
  server_.on(
      "GET", "/v1/jobs/j/events", 200,
      R"({"items":[{"seq":1,"time":"2026-12-03T04:55:00.000Z","attempt":0,"from":"","to":"Pending","reason":"submitted","actor":"alice"},)"
      R"({"seq":2,"time":"2026-12-03T04:56:00.000Z","attempt":1,"from":"Pending","to":"Running","reason":"","actor":"tuneplane"}]})");
  const Outcome r = run({"events", "j"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "SEQ\tTIME\tATTEMPT\tFROM\tTO\tACTOR\tREASON\n"
            "1\t2026-12-03T04:55:00.000Z\t-\t-\tPending\talice\tsubmitted\n"
            "2\t2026-12-03T04:56:00.000Z\t1\tPending\tRunning\ttuneplane\t-\n");
}

TEST_F(ServerCommandsTest, LogsSendsTheQueryAndPrintsOnlyTheLog) {
  server_.on(
      "GET", "/v1/jobs/j/logs", 200,
      R"({"attempt":2,"component":"gpu","stream":"stderr","content":"oops\n","truncated":false,"bytes":5,"lines":1,"missing_reason":null})");
  const Outcome r =
      run({"logs", "j", "--attempt", "2", "--component", "gpu", "--stream", "stderr"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "oops\n");
  const auto sent = server_.requests("GET", "/v1/jobs/j/logs").at(0);
  EXPECT_EQ(sent.param("attempt"), "2");
  EXPECT_EQ(sent.param("component"), "gpu");
  EXPECT_EQ(sent.param("stream"), "stderr");

  EXPECT_EQ(run({"logs", "j", "--stream", "both"}).code, kExitInvalid);
  EXPECT_EQ(server_.requests("GET", "/v1/jobs/j/logs").size(), 1u);
}

TEST_F(ServerCommandsTest, LogsFollowPrintsNewOutputUntilTheAttemptEnds) {
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson("Running"));
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson("Succeeded"));
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d/logs", 200,
             R"({"attempt":1,"component":"cpu","stream":"stdout","content":"step 1\n","bytes":7})");
  server_.on(
      "GET", "/v1/jobs/hello-1a2b3c4d/logs", 200,
      R"({"attempt":1,"component":"cpu","stream":"stdout","content":"step 1\nstep 2\n","bytes":14})");
  const Outcome r = run({"logs", "hello-1a2b3c4d", "-f"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "step 1\nstep 2\n");
  EXPECT_NE(r.err.find("attempt 1 ended: Succeeded"), std::string::npos) << r.err;
}

TEST_F(ServerCommandsTest, CancelAndAbandonPostAndPrintTheJob) {
  server_.on("POST", "/v1/jobs/hello-1a2b3c4d/cancel", 202, jobJson("Running"));
  const Outcome cancel = run({"cancel", "hello-1a2b3c4d"});
  EXPECT_EQ(cancel.code, kExitOk) << cancel.err;
  EXPECT_EQ(cancel.out, "hello-1a2b3c4d: cancel requested (phase Running)\n");

  server_.on("POST", "/v1/jobs/hello-1a2b3c4d/attempts/1/abandon", 202, jobJson("Pending"));
  const Outcome abandon =
      run({"attempt", "abandon", "hello-1a2b3c4d", "1", "--reason", "receipt lost"});
  EXPECT_EQ(abandon.code, kExitOk) << abandon.err;
  const auto sent = server_.requests("POST", "/v1/jobs/hello-1a2b3c4d/attempts/1/abandon");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(sent[0].body), nlohmann::json({{"reason", "receipt lost"}}));

  EXPECT_EQ(run({"attempt", "abandon", "hello-1a2b3c4d", "1"}).code, kExitInvalid);
  EXPECT_EQ(run({"attempt", "abandon", "hello-1a2b3c4d", "0", "--reason", "x"}).code, kExitInvalid);
  EXPECT_EQ(server_.requests("POST", "/v1/jobs/hello-1a2b3c4d/attempts/1/abandon").size(), 1u);
}

TEST_F(ServerCommandsTest, WhoamiNamesTheUserAndWhereTheTokenCameFrom) {
  server_.on("GET", "/v1/whoami", 200, R"({"user":"alice","admin":true})");
  const Outcome r = run({"whoami"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "alice (admin)\n");
  EXPECT_NE(r.err.find("token from TUNEPLANE_TOKEN"), std::string::npos) << r.err;
  EXPECT_EQ(Json::parse(run({"whoami", "-o", "json"}).out)["user"], "alice");
}

TEST_F(ServerCommandsTest, WhoamiListsTheSlurmAccountsAndQosTheDefaultFirst) {
  server_.on(
      "GET", "/v1/whoami", 200,
      R"({"user":"alice","admin":false,"slurm_accounts":["team-a","shared"],"qos":["normal"]})");
  const Outcome r = run({"whoami"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "alice\nSlurm accounts: team-a (default), shared\nQOS: normal (default)\n");
}

TEST_F(ServerCommandsTest, EachFailureHasItsExitCode) {
  server_.on("GET", "/v1/jobs/gone", 404, errorsJson("api.not_found", "id", "no job 'gone'"));
  server_.on("GET", "/v1/jobs/theirs", 403, errorsJson("auth.forbidden", "", "admins only"));
  server_.on("GET", "/v1/jobs/broken", 500, errorsJson("api.internal", "", "store failed"));
  server_.on("GET", "/v1/jobs/bad", 400, errorsJson("api.bad_request", "limit", "not a number"));
  server_.on("GET", "/v1/whoami", 401, errorsJson("auth.invalid_token", "", "unknown token"));
  server_.on("POST", "/v1/jobs/slow/cancel",
             CannedReply{202, jobJson("Running"), "application/json", true});
  server_.on("GET", "/v1/jobs/slow",
             CannedReply{200, jobJson("Running"), "application/json", true});

  const Outcome not_found = run({"get", "job", "gone"});
  EXPECT_EQ(not_found.code, kExitNotFound);
  EXPECT_NE(not_found.err.find("id: no job 'gone' [api.not_found]"), std::string::npos)
      << not_found.err;
  EXPECT_EQ(run({"describe", "theirs"}).code, kExitAuth);
  EXPECT_EQ(run({"get", "broken"}).code, kExitServer);
  EXPECT_EQ(run({"get", "bad"}).code, kExitInvalid);
  const Outcome unauthorized = run({"whoami"});
  EXPECT_EQ(unauthorized.code, kExitAuth);
  EXPECT_NE(unauthorized.err.find("refused the token from TUNEPLANE_TOKEN"), std::string::npos)
      << unauthorized.err;
  // No answer: a change may have happened (6); a read just failed (5).
  EXPECT_EQ(run({"cancel", "slow"}).code, kExitUnknownOutcome);
  EXPECT_EQ(run({"get", "slow"}).code, kExitServer);
  // Usage errors.
  EXPECT_EQ(run({"get", "-o", "xml"}).code, kExitInvalid);
  EXPECT_EQ(run({"get", "--no-such-flag"}).code, kExitInvalid);
  EXPECT_EQ(run({"cancel"}).code, kExitInvalid);
}

TEST_F(ServerCommandsTest, AnUnreachableServerExitsFive) {
  int port = 0;
  {
    FakeApiServer gone;
    port = gone.port();
  }
  const Outcome r = run({"get", "--server", "http://127.0.0.1:" + std::to_string(port)});
  EXPECT_EQ(r.code, kExitServer);
  EXPECT_NE(r.err.find("[client.unreachable]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(from --server)"), std::string::npos) << r.err;
}

TEST_F(ServerCommandsTest, TheConfigFileIsUsedOnlyWhenPrivate) {
  env_.server.reset();
  env_.token.reset();
  std::filesystem::create_directories(dir_ + "/.config/tuneplane");
  const std::string config = dir_ + "/.config/tuneplane/config.yaml";
  std::ofstream(config) << "server: " << server_.url() << "\ntoken: " << kToken << "\n";
  ASSERT_EQ(::chmod(config.c_str(), 0644), 0);
  server_.on("GET", "/v1/whoami", 200, R"({"user":"bob","admin":false})");
  const Outcome open = run({"whoami"});
  EXPECT_EQ(open.code, kExitInvalid);
  EXPECT_NE(open.err.find("[config.insecure_permissions]"), std::string::npos) << open.err;
  EXPECT_TRUE(server_.requests().empty());

  ASSERT_EQ(::chmod(config.c_str(), 0600), 0);
  const Outcome private_file = run({"whoami"});
  EXPECT_EQ(private_file.code, kExitOk) << private_file.err;
  EXPECT_EQ(private_file.out, "bob\n");
  EXPECT_EQ(server_.requests().at(0).header("Authorization"), std::string("Bearer ") + kToken);
}

TEST_F(ServerCommandsTest, KubectlsNounFormsReachTheSameRoutes) {
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d", 200, jobJson("Running"));
  server_.on("GET", "/v1/jobs/hello-1a2b3c4d/events", 200, R"({"items":[]})");
  EXPECT_EQ(run({"get", "jobs", "hello-1a2b3c4d"}).code, kExitOk);
  EXPECT_EQ(run({"get", "job", "hello-1a2b3c4d"}).code, kExitOk);
  EXPECT_EQ(run({"get", "hello-1a2b3c4d"}).code, kExitOk);
  EXPECT_EQ(run({"describe", "job", "hello-1a2b3c4d"}).code, kExitOk);
  EXPECT_EQ(server_.requests("GET", "/v1/jobs/hello-1a2b3c4d").size(), 4u);
  // A noun without its ID, or an ID with list filters, is a usage error: nothing is sent.
  EXPECT_EQ(run({"get", "job"}).code, kExitInvalid);
  EXPECT_EQ(run({"describe"}).code, kExitInvalid);
  EXPECT_EQ(run({"get", "jobs", "hello-1a2b3c4d", "--phase", "Running"}).code, kExitInvalid);
  EXPECT_EQ(server_.requests().size(), 5u);
}

class ServerVerbHelpTest : public ServerCommandsTest,
                           public ::testing::WithParamInterface<const char*> {};

TEST_P(ServerVerbHelpTest, HelpListsTheConnectionFlagsAndTheExitCodes) {
  std::vector<std::string> args;
  std::istringstream words(GetParam());
  for (std::string word; words >> word;) args.push_back(word);
  args.push_back("--help");
  const Outcome r = run(args);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  for (const char* part : {"--server", "--token", "--output", "Exit codes: 0", "3 no such job",
                           "4 authentication", "5 the server unreachable"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << GetParam() << ": " << part << "\n" << r.out;
  }
  EXPECT_TRUE(server_.requests().empty());
}

INSTANTIATE_TEST_SUITE_P(Verbs, ServerVerbHelpTest,
                         ::testing::Values("submit", "get", "describe", "events", "logs", "cancel",
                                           "attempt abandon", "whoami"));

}  // namespace
}  // namespace tuneplane::cli
