// launch.json: every LaunchRequest field survives the round trip, and bad input names its field.
#include "staging/launch_request_json.h"

#include <gtest/gtest.h>

#include "sample_request.h"

namespace tuneplane::staging {
namespace {

TEST(LaunchRequestJsonTest, EveryFieldRoundTrips) {
  const launch::LaunchRequest in = testing::sampleRequest("/s/jobs/hello-0a1b2c3d/attempts/2");
  auto out = launchRequestFromJson(nlohmann::json::parse(launchRequestToJson(in).dump()));
  ASSERT_TRUE(out) << out.error().describe();
  EXPECT_EQ(out->job_name, in.job_name);
  EXPECT_EQ(out->identity.job_id, in.identity.job_id);
  EXPECT_EQ(out->identity.attempt, in.identity.attempt);
  EXPECT_EQ(out->identity.submit_token, in.identity.submit_token);
  EXPECT_EQ(out->framework, in.framework);
  EXPECT_EQ(out->container_runtime, in.container_runtime);
  EXPECT_EQ(out->artifact.path, in.artifact.path);
  EXPECT_EQ(out->artifact.format, in.artifact.format);
  EXPECT_EQ(out->artifact.sha256, in.artifact.sha256);
  ASSERT_EQ(out->mounts.size(), in.mounts.size());
  for (std::size_t i = 0; i < in.mounts.size(); ++i) {
    EXPECT_EQ(out->mounts[i].source, in.mounts[i].source);
    EXPECT_EQ(out->mounts[i].target, in.mounts[i].target);
    EXPECT_EQ(out->mounts[i].read_only, in.mounts[i].read_only);
  }
  ASSERT_EQ(out->components.size(), in.components.size());
  for (std::size_t i = 0; i < in.components.size(); ++i) {
    const auto& a = out->components[i];
    const auto& b = in.components[i];
    EXPECT_EQ(a.pool_name, b.pool_name);
    EXPECT_EQ(a.partition, b.partition);
    EXPECT_EQ(a.constraint, b.constraint);
    EXPECT_EQ(a.nodes, b.nodes);
    EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
    EXPECT_EQ(a.gres_type, b.gres_type);
    EXPECT_EQ(a.cpus_per_node, b.cpus_per_node);
    EXPECT_EQ(a.memory_mb, b.memory_mb);
    EXPECT_EQ(a.scratch_mb, b.scratch_mb);
    EXPECT_EQ(a.time_limit, b.time_limit);
  }
  EXPECT_EQ(out->time_limit_source, in.time_limit_source);
  EXPECT_EQ(out->uses_gpus, in.uses_gpus);
  EXPECT_EQ(out->command, in.command);
  EXPECT_EQ(out->environment, in.environment);  // order kept, not sorted
  EXPECT_EQ(out->scheduler_environment, in.scheduler_environment);
  EXPECT_EQ(out->attempt_dir, in.attempt_dir);
  EXPECT_EQ(out->logs_dir, in.logs_dir);
  EXPECT_EQ(out->output_dir, in.output_dir);
  EXPECT_EQ(out->container_attempt_dir, in.container_attempt_dir);
  EXPECT_EQ(out->container_output_dir, in.container_output_dir);
  EXPECT_EQ(out->account, in.account);
  EXPECT_EQ(out->qos, in.qos);
  EXPECT_EQ(out->ray.port, in.ray.port);
  EXPECT_EQ(out->ray.dashboard_port, in.ray.dashboard_port);
  EXPECT_EQ(out->ray.node_manager_port, in.ray.node_manager_port);
  EXPECT_EQ(out->ray.object_manager_port, in.ray.object_manager_port);
  EXPECT_EQ(out->ray.min_worker_port, in.ray.min_worker_port);
  EXPECT_EQ(out->ray.max_worker_port, in.ray.max_worker_port);
  EXPECT_EQ(out->ray.ray_client_server_port, in.ray.ray_client_server_port);
  EXPECT_EQ(out->ray.dashboard_agent_listen_port, in.ray.dashboard_agent_listen_port);
  EXPECT_EQ(out->ray.dashboard, in.ray.dashboard);
  EXPECT_EQ(out->ray.join_timeout_seconds, in.ray.join_timeout_seconds);
  EXPECT_EQ(out->ray.executable, in.ray.executable);
  EXPECT_EQ(out->inputs, in.inputs);
  EXPECT_EQ(out->checkpoint_dir, in.checkpoint_dir);
  EXPECT_EQ(out->container_checkpoint_dir, in.container_checkpoint_dir);
  EXPECT_EQ(out->resume_record, in.resume_record);
  EXPECT_EQ(out->ray_min_cpus_per_gpu, in.ray_min_cpus_per_gpu);
  // Every field is compared above: a new one must be added there and to launch.json.
  EXPECT_EQ(launchRequestToJson(*out), launchRequestToJson(in));
}

TEST(LaunchRequestJsonTest, UnsetOptionalsAndPyxisRoundTrip) {
  launch::LaunchRequest in = testing::sampleRequest("/s/jobs/hello-0a1b2c3d/attempts/1");
  in.account.reset();
  in.qos.reset();
  in.container_runtime = catalog::ContainerRuntime::kPyxis;
  in.artifact.format = catalog::ArtifactFormat::kSqsh;
  const auto json = launchRequestToJson(in);
  EXPECT_TRUE(json["account"].is_null());
  EXPECT_EQ(json["container_runtime"], "pyxis");
  auto out = launchRequestFromJson(json);
  ASSERT_TRUE(out) << out.error().describe();
  EXPECT_FALSE(out->account.has_value());
  EXPECT_FALSE(out->qos.has_value());
  EXPECT_EQ(out->container_runtime, catalog::ContainerRuntime::kPyxis);
  EXPECT_EQ(out->artifact.format, catalog::ArtifactFormat::kSqsh);
}

TEST(LaunchRequestJsonTest, APerUserUmaskRoundTripsAndIsAbsentOtherwise) {
  launch::LaunchRequest in =
      testing::sampleRequest("/s/users/alice/jobs/hello-0a1b2c3d/attempts/1");
  EXPECT_FALSE(launchRequestToJson(in).contains("job_umask"));  // shared: as before
  in.job_umask = launch::kPerUserJobUmask;
  const auto json = launchRequestToJson(in);
  EXPECT_EQ(json["job_umask"], "0022");
  auto out = launchRequestFromJson(json);
  ASSERT_TRUE(out) << out.error().describe();
  EXPECT_EQ(out->job_umask, "0022");
}

TEST(LaunchRequestJsonTest, UnpinnedRayPortsRoundTripAsNull) {
  launch::LaunchRequest in = testing::sampleRequest("/s/jobs/hello-0a1b2c3d/attempts/1");
  in.ray = catalog::RayConfig{};
  const auto json = launchRequestToJson(in);
  EXPECT_TRUE(json["ray"]["port"].is_null());
  EXPECT_TRUE(json["ray"]["min_worker_port"].is_null());
  EXPECT_EQ(json["ray"]["dashboard"], false);
  auto out = launchRequestFromJson(json);
  ASSERT_TRUE(out) << out.error().describe();
  EXPECT_FALSE(out->ray.pinsPorts());
  EXPECT_FALSE(out->ray.dashboard);
}

TEST(LaunchRequestJsonTest, BadInputNamesTheField) {
  const auto good =
      launchRequestToJson(testing::sampleRequest("/s/jobs/hello-0a1b2c3d/attempts/1"));
  struct Case {
    nlohmann::json::json_pointer pointer;
    nlohmann::json value;
    const char* field;
  };
  const std::vector<Case> cases = {
      {nlohmann::json::json_pointer("/components/1/nodes"), "two", "launch.components[1].nodes"},
      {nlohmann::json::json_pointer("/artifact/format"), "oci", "launch.artifact.format"},
      {nlohmann::json::json_pointer("/environment/0/value"), 7, "launch.environment[0].value"},
      {nlohmann::json::json_pointer("/version"), 99, "launch.version"},
      {nlohmann::json::json_pointer("/ray"), nlohmann::json::array(), "launch.ray"},
      {nlohmann::json::json_pointer("/ray/port"), "6379", "launch.ray.port"},
      {nlohmann::json::json_pointer("/ray/dashboard"), nullptr, "launch.ray.dashboard"},
      {nlohmann::json::json_pointer("/time_limit_source"), "slurm", "launch.time_limit_source"},
      {nlohmann::json::json_pointer("/resume_record"), "sometimes", "launch.resume_record"},
      {nlohmann::json::json_pointer("/inputs/0/content"), 1, "launch.inputs[0].content"},
      {nlohmann::json::json_pointer("/ray_min_cpus_per_gpu"), 1.5, "launch.ray_min_cpus_per_gpu"},
  };
  for (const auto& c : cases) {
    auto bad = good;
    bad[c.pointer] = c.value;
    auto out = launchRequestFromJson(bad);
    ASSERT_FALSE(out) << c.field;
    EXPECT_EQ(out.error().code, "staging.bad_launch_json");
    EXPECT_EQ(out.error().field, c.field);
  }
  auto missing = good;
  missing.erase("attempt_dir");
  auto out = launchRequestFromJson(missing);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().field, "launch.attempt_dir");
}

}  // namespace
}  // namespace tuneplane::staging
