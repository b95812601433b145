// Faults (in-process and through the admin route), restart and purge, the unix-socket
// listener, and the tuneplane-slurmsim binary itself.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>

#include "sim_test_support.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::sim::testing {
namespace {

class FaultTest : public SimFixture {};

TEST_F(FaultTest, DroppedSubmitResponseStillCreatesTheJob) {
  sim_->dropNextSubmitResponses(1);
  auto lost = post("/job/submit", jobBody("true", {{"name", "lost-receipt"}}));
  EXPECT_FALSE(lost);  // the connection closed without any HTTP response
  const json jobs = json::parse(get("/jobs/")->body)["jobs"];
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["name"], "lost-receipt");
  // Only the next one was dropped.
  EXPECT_GT(submit(jobBody("true")), 0);
}

TEST_F(FaultTest, FailNextRequestsAnswers5xxThenRecovers) {
  sim_->failNextRequests(2, 503);
  EXPECT_EQ(get("/ping")->status, 503);
  EXPECT_EQ(get("/jobs/")->status, 503);
  EXPECT_EQ(get("/ping")->status, 200);
}

TEST_F(FaultTest, LatencyDelaysAnswersPastAShortClientTimeout) {
  sim_->setLatency(std::chrono::milliseconds(3000));
  httplib::Client impatient(sim_->baseUrl());
  impatient.set_read_timeout(0, 200000);
  EXPECT_FALSE(impatient.Get((std::string(kApi) + "/ping").c_str(), auth()));
  sim_->setLatency(std::chrono::milliseconds(0));
  EXPECT_TRUE(tuneplane::test::waitUntil([&] {
    auto r = impatient.Get((std::string(kApi) + "/ping").c_str(), auth());
    return r && r->status == 200;
  }));
}

TEST_F(FaultTest, EndJobWithNodeFail) {
  const int id = submit(jobBody("sleep 300"));
  ASSERT_TRUE(waitState(std::to_string(id), {"RUNNING"}));
  ASSERT_TRUE(sim_->endJob(std::to_string(id), "NODE_FAIL"));
  ASSERT_TRUE(waitState(std::to_string(id), {"NODE_FAIL"}));
  EXPECT_FALSE(sim_->endJob(std::to_string(id), "NODE_FAIL"));  // no longer running
  EXPECT_FALSE(sim_->endJob("999", "PREEMPTED"));
}

TEST_F(FaultTest, AdminRouteSetsTheSameFaults) {
  auto res =
      client_->Post("/sim/admin/faults", json{{"fail_requests", 1}, {"fail_status", 500}}.dump(),
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(get("/ping")->status, 500);
  EXPECT_EQ(get("/ping")->status, 200);
  const int id = submit(jobBody("sleep 300"));
  ASSERT_TRUE(waitState(std::to_string(id), {"RUNNING"}));
  res = client_->Post(
      "/sim/admin/faults",
      json{{"end_job", {{"job", std::to_string(id)}, {"state", "OUT_OF_MEMORY"}}}}.dump(),
      "application/json");
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(waitState(std::to_string(id), {"OUT_OF_MEMORY"}));
  res = client_->Post("/sim/admin/faults", "not json", "application/json");
  EXPECT_EQ(res->status, 400);
}

class PurgeTest : public SimFixture {
  void tune(SimulatorOptions& options) override { options.min_job_age = std::chrono::seconds(0); }
};

TEST_F(PurgeTest, FinishedJobsArePurgedAndRestartReusesTheirIds) {
  const int first = submit(jobBody("true"));
  ASSERT_EQ(first, 1);
  const std::string sluid = job("1")[0]["step_id"]["sluid"];
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return get("/job/1")->status == 404; }));
  EXPECT_EQ(get("/job/" + sluid)->status, 404);
  EXPECT_EQ(submit(jobBody("sleep 300")), 2);  // no restart: the counter goes on
  sim_->restart();
  EXPECT_EQ(submit(jobBody("true", {{"hold", true}})), 1);  // purged id 1 is reused
  EXPECT_EQ(submit(jobBody("true", {{"hold", true}})), 3);  // 2 is still held
  EXPECT_NE(job("1")[0]["step_id"]["sluid"], sluid);        // SLUIDs never repeat
}

// A raw HTTP/1.1 exchange over a unix socket (httplib 0.11's client cannot).
std::string unixRequest(const std::string& path, const std::string& request) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "connect failed";
  }
  const timeval limit{30, 0};  // a bound on a server that never closes, not a timing check
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  (void)!write(fd, request.data(), request.size());
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

class UnixSocketTest : public SimFixture {
  void tune(SimulatorOptions& options) override {
    options.listen = "unix:" + dir_.path() + "/slurmrestd.sock";
  }
};

TEST_F(UnixSocketTest, ServesOverUnixSocketAndDropsLikeTcp) {
  const std::string sock = dir_.path() + "/slurmrestd.sock";
  EXPECT_EQ(sim_->baseUrl(), "unix://" + sock);
  const std::string ping =
      unixRequest(sock,
                  "GET /slurm/v0.0.45/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                  "X-SLURM-USER-TOKEN: " +
                      token() + "\r\n\r\n");
  EXPECT_EQ(ping.rfind("HTTP/1.1 200", 0), 0u) << ping;
  EXPECT_NE(ping.find("\"responding\": true"), std::string::npos);

  sim_->dropNextSubmitResponses(1);
  const std::string body = jobBody("true").dump();
  const std::string dropped = unixRequest(
      sock,
      "POST /slurm/v0.0.45/job/submit HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\nX-SLURM-USER-TOKEN: " + token() + "\r\n\r\n" + body);
  EXPECT_EQ(dropped, "");  // empty reply
  const std::string list =
      unixRequest(sock,
                  "GET /slurm/v0.0.45/jobs/state/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                  "X-SLURM-USER-TOKEN: " +
                      token() + "\r\n\r\n");
  EXPECT_NE(list.find("\"job_id\": \"1\""), std::string::npos) << list;
}

// A simulator destroyed right after it started (a test that fails at once, e.g. on a
// missing transcript) stops: httplib 0.11 ignores a stop() that comes before its listen
// loop runs, so the simulator must not return from start() before that. Were it to hang,
// this test would end by its ctest timeout.
TEST(SimulatorLifetime, StoppedRightAfterStartDoesNotHang) {
  TempDir dir;
  const std::string key = dir.path() + "/key";
  std::ofstream(key) << "lifetime-test-key";
  for (int i = 0; i < 100; ++i) {
    SimulatorOptions options;
    options.jwt_key_file = key;
    options.state_dir = dir.path() + "/state" + std::to_string(i);
    auto sim = Simulator::start(options);
    ASSERT_TRUE(sim.has_value()) << sim.error().describe();
  }
}

std::string binary() {
  return (test::binaryDir() / "src/sim/tuneplane-slurmsim").string();
}

TEST(SimulatorBinary, HelpSaysItIsASimulator) {
  TempDir dir;
  const auto help = test::runProcess({binary(), "--help"}, {.scratch = dir.path()});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  const std::string out = help.out + help.err;
  EXPECT_NE(out.find("SIMULATOR"), std::string::npos) << out;
  EXPECT_NE(out.find("NOT Slurm"), std::string::npos);
  EXPECT_NE(out.find("--listen"), std::string::npos);
}

TEST(SimulatorBinary, PrintsItsUrlServesAndStopsOnSigterm) {
  TempDir dir;
  const std::string key = dir.path() + "/key";
  std::ofstream(key) << "binary-test-key";
  // Killed with its group when the test ends, however it ends.
  auto sim = test::ChildProcess::start(
      {binary(), "--listen", "127.0.0.1:0", "--jwt-key", key, "--state", dir.path() + "/state"},
      {.scratch = dir.path()}, "slurmsim");
  ASSERT_NE(sim, nullptr);
  const std::string url = sim->firstLine(std::chrono::seconds(30));
  ASSERT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << url;
  httplib::Client client(url);
  const std::string tok = jwt::mintHs256({"tpuser", unixNow(), unixNow() + 60}, "binary-test-key");
  auto ping = client.Get("/slurm/v0.0.45/ping", httplib::Headers{{"X-SLURM-USER-TOKEN", tok}});
  ASSERT_TRUE(ping);
  EXPECT_EQ(json::parse(ping->body)["pings"][0]["responding"], true);
  sim->signal(SIGTERM);
  const auto status = sim->waitExit(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0);  // exited (not killed by a signal), with status 0
}

}  // namespace
}  // namespace tuneplane::sim::testing
