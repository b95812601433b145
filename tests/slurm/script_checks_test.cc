// checkRenderable: each limit of the renderer, from a table of one-field changes to a
// request that passes.
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "slurm/script_checks.h"
#include "slurm/script_renderer.h"

namespace tuneplane::slurm {
namespace {

using launch::LaunchRequest;

LaunchRequest validRequest() {
  LaunchRequest r;
  r.job_name = "ok";
  r.identity = {"job-1", 1, "tok"};
  r.artifact = {"/img.sqsh", catalog::ArtifactFormat::kSqsh, std::string(64, 'f')};
  r.attempt_dir = "/a";
  r.logs_dir = "/a/logs";
  r.container_attempt_dir = "/in";
  r.mounts = {{"/a", "/in", true}};
  r.environment = {{"A_1", "any 'value' $(x)\n"}};
  r.command = {"run"};
  launch::Component c;
  c.pool_name = "cpu";
  c.partition = "cpu";
  r.components = {c};
  return r;
}

struct Case {
  std::string name;
  std::function<void(LaunchRequest&)> change;
  std::string code;
  std::string field;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class CheckTest : public ::testing::TestWithParam<Case> {};

TEST(CheckRenderable, ValidRequestPasses) {
  EXPECT_TRUE(checkRenderable(validRequest()));
}

TEST_P(CheckTest, ReportsTheProblemWithItsField) {
  LaunchRequest r = validRequest();
  GetParam().change(r);
  const auto checked = checkRenderable(r);
  ASSERT_FALSE(checked);
  bool found = false;
  for (const Error& e : checked.error())
    found = found || (e.code == GetParam().code && e.field == GetParam().field);
  EXPECT_TRUE(found) << "expected " << GetParam().code << " at " << GetParam().field;
  // And the renderer refuses to produce anything runnable for it.
  EXPECT_THAT(renderBatchScript(r), ::testing::HasSubstr("exit 64\n"));
}

INSTANTIATE_TEST_SUITE_P(
    Limits, CheckTest,
    ::testing::Values(
        Case{"no_components", [](auto& r) { r.components.clear(); }, "render.no_components",
             "components"},
        Case{"too_many", [](auto& r) { r.components.resize(129, r.components[0]); },
             "render.too_many_components", "components"},
        Case{"cpu_two_pools", [](auto& r) { r.components.push_back(r.components[0]); },
             "render.cpu_multi_component", "components"},
        Case{"cpu_two_nodes", [](auto& r) { r.components[0].nodes = 2; }, "render.cpu_topology",
             "components[0]"},
        Case{"gpu_pool_without_gpus", [](auto& r) { r.uses_gpus = true; },
             "render.gpu_component_without_gpus", "components[0].gpus_per_node"},
        Case{"env_name_injection",
             [](auto& r) {
               r.environment.push_back({"A=$(x)", "v"});
             },
             "render.bad_env_name", "environment[1]"},
        Case{"env_name_digit_first",
             [](auto& r) {
               r.environment.push_back({"1A", "v"});
             },
             "render.bad_env_name", "environment[1]"},
        Case{"env_name_reserved",
             [](auto& r) {
               r.environment.push_back({"tp_srun", "/x"});
             },
             "render.reserved_env_name", "environment[1]"},
        Case{"scheduler_env_name",
             [](auto& r) {
               r.scheduler_environment.push_back({"", "v"});
             },
             "render.bad_env_name", "scheduler_environment[0]"},
        Case{"nul_in_value", [](auto& r) { r.environment[0].second = std::string("a\0b", 3); },
             "render.nul_byte", "environment[0]"},
        Case{"not_utf8", [](auto& r) { r.command.push_back("\xff\xfe"); }, "render.not_utf8",
             "command[1]"},
        Case{"truncated_utf8", [](auto& r) { r.job_name = "caf\xc3"; }, "render.not_utf8",
             "job_name"},
        Case{"relative_artifact", [](auto& r) { r.artifact.path = "img.sqsh"; },
             "render.path_not_absolute", "artifact.path"},
        Case{"bad_sha", [](auto& r) { r.artifact.sha256 = std::string(64, 'F'); },
             "render.bad_sha256", "artifact.sha256"},
        Case{"comma_in_mount", [](auto& r) { r.mounts[0].source = "/a,b"; },
             "render.bind_separator", "mounts[0].source"},
        Case{"colon_in_mount", [](auto& r) { r.mounts[0].target = "/in:rw"; },
             "render.bind_separator", "mounts[0].target"},
        Case{"relative_mount", [](auto& r) { r.mounts[0].target = "in"; },
             "render.path_not_absolute", "mounts[0].target"},
        Case{"colon_in_workdir", [](auto& r) { r.container_output_dir = "/in:x"; },
             "render.bind_separator", "container_output_dir"},
        Case{"slash_in_pool", [](auto& r) { r.components[0].pool_name = "../x"; },
             "render.bad_pool_name", "components[0].pool_name"},
        Case{"dotdot_pool", [](auto& r) { r.components[0].pool_name = ".."; },
             "render.bad_pool_name", "components[0].pool_name"},
        Case{"backslash_in_logs", [](auto& r) { r.logs_dir = "/a\\b"; },
             "render.backslash_in_logs_dir", "logs_dir"},
        Case{"no_command", [](auto& r) { r.command.clear(); }, "render.no_command", "command"},
        Case{"ray_port_out_of_range", [](auto& r) { r.ray.port = 70000; }, "render.bad_ray_port",
             "ray.port"},
        Case{"ray_worker_range_half", [](auto& r) { r.ray.min_worker_port = 20000; },
             "render.bad_ray_port", "ray.max_worker_port"},
        Case{"ray_worker_range_reversed",
             [](auto& r) {
               r.ray.min_worker_port = 20000;
               r.ray.max_worker_port = 20000;
             },
             "render.bad_ray_port", "ray.max_worker_port"},
        Case{"ray_dashboard_port_without_dashboard", [](auto& r) { r.ray.dashboard_port = 8265; },
             "render.bad_ray_port", "ray.dashboard_port"},
        Case{"ray_join_timeout", [](auto& r) { r.ray.join_timeout_seconds = 0; },
             "render.bad_join_timeout", "ray.join_timeout_seconds"},
        Case{"ray_cpus_per_gpu_negative", [](auto& r) { r.ray_min_cpus_per_gpu = -1; },
             "render.bad_ray_cpus", "ray_min_cpus_per_gpu"},
        Case{"ray_cpus_per_gpu_huge", [](auto& r) { r.ray_min_cpus_per_gpu = 1025; },
             "render.bad_ray_cpus", "ray_min_cpus_per_gpu"},
        // The job's checkpoint directory.
        Case{"checkpoint_dir_with_separator",
             [](auto& r) {
               r.checkpoint_dir = "/jobs/j/check:points";
               r.container_checkpoint_dir = "/ckpt";
             },
             "render.bind_separator", "checkpoint_dir"},
        Case{"checkpoint_dir_relative",
             [](auto& r) {
               r.checkpoint_dir = "jobs/j/checkpoints";
               r.container_checkpoint_dir = "/ckpt";
             },
             "render.path_not_absolute", "checkpoint_dir"},
        Case{"container_checkpoint_dir_missing",
             [](auto& r) { r.checkpoint_dir = "/jobs/j/checkpoints"; },
             "render.path_not_absolute", "container_checkpoint_dir"},
        Case{"resume_record_without_checkpoints",
             [](auto& r) { r.resume_record = launch::ResumeRecord::kLastCheckpoint; },
             "render.resume_without_checkpoints", "resume_record"},
        // Staged inputs (a framework's config).
        Case{"input_name_with_slash", [](auto& r) { r.inputs = {{"../x.yaml", "a"}}; },
             "render.bad_input_name", "inputs[0].name"},
        Case{"input_name_hidden", [](auto& r) { r.inputs = {{".x.yaml", "a"}}; },
             "render.bad_input_name", "inputs[0].name"},
        Case{"input_content_nul", [](auto& r) { r.inputs = {{"x.yaml", std::string("a\0b", 3)}}; },
             "render.nul_byte", "inputs[0].content"}),
    [](const auto& info) { return info.param.name; });

TEST(CheckRenderable, ReportsEveryProblemNotJustTheFirst) {
  LaunchRequest r = validRequest();
  r.command.clear();
  r.artifact.sha256 = "x";
  r.mounts[0].source = "/a:b";
  const auto checked = checkRenderable(r);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().size(), 3u);
}

TEST(ShellQuote, QuotesEveryByteLiterally) {
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(shellQuote("plain"), "'plain'");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(shellQuote("$(x) `y` \\ \n"), "'$(x) `y` \\ \n'");
}

TEST(CommentSafe, ControlCharactersCannotStartANewLine) {
  EXPECT_EQ(commentSafe("a\nb\rc\td\x7f"
                        "e"),
            "a?b?c?d?e");
  EXPECT_EQ(commentSafe("ünï $(x)"), "ünï $(x)");
}

}  // namespace
}  // namespace tuneplane::slurm
