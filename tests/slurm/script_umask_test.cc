// The batch script of a slurm.identity per_user job (LaunchRequest::job_umask): `umask 0022`
// right after the header, before the script writes anything (its claim, its sentinels), so
// TunePlane — outside the job user's group — reads what the job writes; a shared job's script
// has no umask line. Both pass bash -n and shellcheck; a umask that is not four octal digits
// is not rendered.
#include <gtest/gtest.h>

#include <string>

#include "slurm/script_checks.h"
#include "slurm/script_renderer.h"
#include "stubs/test_shell.h"

namespace tuneplane::slurm::script_umask_test {
namespace {

using launch::LaunchRequest;

LaunchRequest perUserRequest() {
  LaunchRequest r;
  r.job_name = "hello";
  r.identity = {"hello-0a1b2c3d", 1, "tp-00112233445566778899aabbccddeeff"};
  r.framework = "custom/custom";
  r.container_runtime = catalog::ContainerRuntime::kApptainer;
  r.artifact = {"/shared/runtimes/demo.sif", catalog::ArtifactFormat::kSif,
                shell_test::kImageSha256};
  r.attempt_dir = "/shared/tp/users/alice/jobs/hello-0a1b2c3d/attempts/1";
  r.logs_dir = r.attempt_dir + "/logs";
  r.output_dir = r.attempt_dir + "/output";
  r.fence_dir = "/shared/tp/users/alice/jobs/hello-0a1b2c3d/fence";
  r.container_attempt_dir = r.attempt_dir;
  r.container_output_dir = r.output_dir;
  r.mounts = {{r.attempt_dir, r.attempt_dir, true}, {r.output_dir, r.output_dir, false}};
  launch::Component c;
  c.pool_name = "main";
  c.partition = "cpu";
  c.cpus_per_node = 2;
  r.components = {c};
  r.command = {"python3", "-c", "print('hello')"};
  r.scheduler_environment = {{"PATH", "/usr/bin:/bin"}};
  r.job_umask = launch::kPerUserJobUmask;
  return r;
}

TEST(ScriptUmaskTest, APerUserScriptSetsItsUmaskBeforeItWritesAnything) {
  const std::string script = renderBatchScript(perUserRequest());
  const std::size_t umask = script.find("\numask 0022\n");
  ASSERT_NE(umask, std::string::npos) << script;
  // After the header and its #SBATCH mirror, before strict mode, the claim and the sentinels.
  EXPECT_LT(script.rfind("#SBATCH", umask), umask);
  EXPECT_EQ(script.find("#SBATCH", umask), std::string::npos);
  EXPECT_LT(umask, script.find("set -euo pipefail"));
  EXPECT_LT(umask, script.find("/claim"));
  EXPECT_LT(umask, script.find("tp_logs_dir="));
}

TEST(ScriptUmaskTest, ASharedScriptHasNoUmaskLine) {
  LaunchRequest shared = perUserRequest();
  shared.job_umask.clear();
  EXPECT_EQ(renderBatchScript(shared).find("umask"), std::string::npos);
}

TEST(ScriptUmaskTest, BothScriptsPassBashSyntaxCheckAndShellcheck) {
  LaunchRequest shared = perUserRequest();
  shared.job_umask.clear();
  for (const LaunchRequest& request : {perUserRequest(), shared}) {
    SCOPED_TRACE(request.job_umask.empty() ? "shared" : "per_user");
    shell_test::TempDir dir;
    const auto script = dir.path() / "job.sh";
    shell_test::writeFile(script, renderBatchScript(request));
    const auto syntax = shell_test::runShell("bash -n " + shellQuote(script.string()), dir.path());
    EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
    const auto which = shell_test::runShell("command -v shellcheck", dir.path());
    ASSERT_EQ(which.exit_code, 0) << "shellcheck is not installed (apt-get install shellcheck)";
    const auto lint =
        shell_test::runShell("shellcheck -s bash " + shellQuote(script.string()), dir.path());
    EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  }
}

TEST(ScriptUmaskTest, AUmaskThatIsNotFourOctalDigitsIsNotRendered) {
  for (const char* bad : {"022", "0088", "0022; rm -rf /", "1022", "00022"}) {
    LaunchRequest r = perUserRequest();
    r.job_umask = bad;
    auto checked = checkRenderable(r);
    ASSERT_FALSE(checked) << bad;
    EXPECT_EQ(checked.error().front().code, "render.bad_umask") << bad;
    EXPECT_EQ(renderBatchScript(r).find("umask " + std::string(bad)), std::string::npos);
  }
}

}  // namespace
}  // namespace tuneplane::slurm::script_umask_test
