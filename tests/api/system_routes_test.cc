// Validation, the refused kinds, capabilities, health, readiness and metrics.
#include "api_fixture.h"
#include "support/wait.h"

namespace tuneplane::api::testing {
namespace {

class SystemRoutesTest : public ApiFixture {
 protected:
  void tune(ApiDependencies& deps, HttpServerOptions& options) override {
    options.workdir.max_files = 77;  // capabilities shows the server's own bounds
    deps.slurm_ready = [this]() -> Status {
      if (slurm_up_) return ok();
      return fail("api.slurm_unavailable", "slurm", "connection refused");
    };
  }
  std::atomic<bool> slurm_up_{true};
};

TEST_F(SystemRoutesTest, ValidateAcceptsAGoodSpecAndStoresNothing) {
  auto res = post("/v1/validate", cpuSpec());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json v = body(res);
  EXPECT_EQ(v["valid"], true);
  EXPECT_EQ(v["time_limit"]["minutes"], 10);
  EXPECT_EQ(v["components"][0]["pool"], "main");
  EXPECT_EQ(v["warnings"], json::array());
  EXPECT_TRUE(store_->listJobs({})->jobs.empty());
}

TEST_F(SystemRoutesTest, ValidateRefusesABadSpecWith422) {
  std::string multi = cpuSpec();
  multi.replace(multi.find("nodes: 1"), 8, "nodes: 2");
  auto res = post("/v1/validate", multi);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 422);
  EXPECT_EQ(code(res), "launch.cpu_only_multi_node");
}

// One intake (spec_intake.h): validate judges a body as POST /v1/jobs does — here, a workdir
// the caller never uploaded, refused by both with the same error, and nothing stored.
TEST_F(SystemRoutesTest, ValidateAndSubmitRefuseAWorkdirTheCallerNeverUploadedAlike) {
  std::string spec = cpuSpec();
  spec += "  workdir: sha256:" + std::string(64, 'a') + "\n";
  for (const std::string path : {"/v1/validate", "/v1/jobs"}) {
    SCOPED_TRACE(path);
    auto res = post(path, spec);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 422) << res->body;
    EXPECT_EQ(code(res), "workdir.unknown");
    EXPECT_EQ(body(res)["errors"][0]["field"], "spec.workdir");
  }
  auto wrong_type = post("/v1/validate", cpuSpec(), kAliceToken, "image/png");
  ASSERT_TRUE(wrong_type);
  EXPECT_EQ(wrong_type->status, 415);
  EXPECT_TRUE(store_->listJobs({})->jobs.empty());
}

TEST_F(SystemRoutesTest, PlaygroundsAndDeploymentsAre422WithTheReason) {
  for (const std::string path : {"/v1/playgrounds", "/v1/deployments"}) {
    auto res = post(path, "{}", kAliceToken, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 422) << path;
    EXPECT_EQ(code(res), "launch.kind_not_supported");
    EXPECT_NE(body(res)["errors"][0]["message"].get<std::string>().find("inbound path"),
              std::string::npos);
    EXPECT_EQ(post(path, "{}", "", "application/json")->status, 401);
  }
}

TEST_F(SystemRoutesTest, CapabilitiesNameWhatCannotRunAndTheSitesSeries) {
  auto res = get("/v1/capabilities");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const json c = body(res);
  EXPECT_EQ(c["kinds"]["TrainingJob"]["supported"], true);
  EXPECT_EQ(c["kinds"]["Playground"]["supported"], false);
  EXPECT_EQ(c["kinds"]["ModelDeployment"]["supported"], false);
  EXPECT_EQ(c["features"]["data_volumes"]["supported"], false);
  EXPECT_EQ(c["container_runtime"], "apptainer");
  ASSERT_EQ(c["gpu_series"].size(), 2u);
  EXPECT_EQ(c["gpu_series"][0]["name"], "h100");
  EXPECT_EQ(c["gpu_series"][0]["usable"], true);
  EXPECT_EQ(c["runtimes"][0]["id"], "custom-demo");
  EXPECT_EQ(c["limits"]["workdir_max_files"], 77);
  EXPECT_EQ(c["limits"]["workdir_max_bytes"], workdir::kDefaultMaxBytes);
  EXPECT_EQ(get("/v1/capabilities", "")->status, 401);
}

TEST_F(SystemRoutesTest, HealthAndReadinessNeedNoToken) {
  auto health = get("/healthz", "");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto ready = get("/readyz", "");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200) << ready->body;
  EXPECT_EQ(body(ready)["checks"]["store"], "ok");
  EXPECT_EQ(body(ready)["checks"]["slurm"], "ok");
}

TEST_F(SystemRoutesTest, ReadinessIs503WhenSlurmDoesNotAnswer) {
  slurm_up_ = false;
  auto ready = get("/readyz", "");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_EQ(code(ready), "api.slurm_unavailable");
}

TEST_F(SystemRoutesTest, MetricsCountJobsByPhaseAndRequestsByRoute) {
  submitJob();
  ASSERT_EQ(get("/v1/whoami")->status, 200);
  metrics_.observeSlurm("submit", true, 0.002);
  // The access logger (which counts) runs after the answer: poll, bounded.
  std::string text;
  tuneplane::test::waitUntil(
      [&] {
        text = get("/metrics", "")->body;
        // Each request is its own connection (httplib's client): the two log calls may finish
        // in either order.
        return text.find("route=\"/v1/whoami\",status=\"200\"") != std::string::npos &&
               text.find("route=\"/v1/jobs\",status=\"201\"") != std::string::npos;
      },
      std::chrono::seconds(2), std::chrono::milliseconds(2));
  EXPECT_NE(text.find("tuneplane_jobs{phase=\"Pending\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tuneplane_http_requests_total{method=\"POST\",route=\"/v1/jobs\","
                      "status=\"201\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("route=\"/v1/whoami\",status=\"200\""), std::string::npos);
  EXPECT_NE(text.find("tuneplane_slurm_requests_total{operation=\"submit\",outcome=\"ok\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("tuneplane_slurm_request_duration_seconds_bucket{operation=\"submit\","
                      "le=\"0.0025\"} 1\n"),
            std::string::npos)
      << text;
  // Route templates, never ids: no series per job.
  EXPECT_EQ(text.find("hello-"), std::string::npos);
}

}  // namespace
}  // namespace tuneplane::api::testing
