// Live: `tuneplane site init` drafts the test cluster's site file from the real slurmrestd
// named by TUNEPLANE_LIVE_*; the draft, with only what an operator adds by hand (the job
// environment's PATH for the cluster's stand-in `apptainer`, a staging group when run as
// root, a server: section), passes `tuneplane doctor` and runs a CPU job through the real
// `tuneplane serve` to Succeeded. Skipped unless TUNEPLANE_LIVE_* (with a token file) is set,
// and unless this process is root or the live user. Waits are bounded
// (support/serve_harness.h and --timeout). With TUNEPLANE_LIVE_IDENTITY=per_user
// (live_identity.h) the draft is `site init --identity per_user` from SlurmUser's token, and the
// operator also names serve's user (root here) as slurm.user and does the one-time step for
// the live user.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "live_serve_fixture.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::live {
namespace {

class SiteInitLive : public LiveServeRun {
 protected:
  void SetUp() override {
    configure(/*token_file_needed=*/true);  // site init reads slurmrestd with a token
    if (IsSkipped() || HasFatalFailure()) return;
    // The stand-in apptainer, the artifact and the registry; the site file is site init's.
    auto dir = makeLiveSite(cluster(), "tp-live-site-init-", live_.url);
    ASSERT_TRUE(dir) << "cannot make a directory in " << live_.shared_dir;
    dir_ = *dir;
  }

  test::ProcessResult siteInit() {
    const std::string token =
        dir_ + "/secrets/" + std::filesystem::path(*cluster().token_file).filename().string();
    return test::runProcess(
        {test::tuneplaneBinary(), "site", "init", "--slurm", live_.url, "--token-file", token,
         "--staging-root", dir_ + "/staging", "--runtime", "apptainer", "--identity",
         per_user_ ? "per_user" : "shared", "-o", site()},
        {.scratch = dir_});
  }
  std::string site() const { return dir_ + "/site.yaml"; }
  // The cluster as the site sees it (per_user: SlurmUser's token; LiveServeRun::site()).
  Live cluster() const { return LiveServeRun::site(); }
};

TEST_F(SiteInitLive, TheDraftPassesDoctorAndRunsAJob) {
  // An existing file is never overwritten.
  const std::string handwritten = readFile(site());
  const auto refused = siteInit();
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_EQ(readFile(site()), handwritten);

  std::filesystem::remove(site());
  const auto drafted = siteInit();
  ASSERT_EQ(drafted.exit_code, 0) << drafted.out << drafted.err;
  std::string text = readFile(site());
  EXPECT_EQ(text.find("eyJ"), std::string::npos) << "a token in the draft";
  // The cluster's GPU nodes are gpu1 (h100) and gpu2 (a100), each with its own feature.
  for (const char* part : {"slurm_constraint: \"h100\"", "slurm_constraint: \"a100\"",
                           "gpu: \"gpu\"", "cpu: \"cpu\"", "container_runtime: \"apptainer\""}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }

  // The draft's own server: section, empty registry beside it kept (makeLiveSite wrote one).
  EXPECT_NE(text.find("\nserver:  # tuneplane serve"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  listen: "), std::string::npos) << text;
  EXPECT_NE(drafted.err.find("kept the existing"), std::string::npos) << drafted.err;
  // What the operator changes by hand: the stand-in apptainer on the jobs' PATH, the staging
  // group when serve runs as root, and serve's section with a user (the draft's has none).
  const std::string path_line = "    PATH: /usr/local/bin:/usr/bin:/bin\n";
  const size_t path_at = text.find(path_line);
  ASSERT_NE(path_at, std::string::npos) << text;
  text.replace(path_at, path_line.size(),
               "    PATH: " + dir_ + "/bin:" + live_.slurm_bin + ":/usr/local/bin:/usr/bin:/bin\n");
  if (per_user_) {
    // The draft names the token's user (SlurmUser); slurm.user is the user serve runs as.
    EXPECT_NE(text.find("\n  identity: per_user\n"), std::string::npos) << text;
    const size_t user_at = text.find("\n  user: ");
    ASSERT_NE(user_at, std::string::npos) << text;
    text.replace(user_at + 1, text.find('\n', user_at + 1) - user_at - 1, "  user: root");
  }
  const size_t server_at = text.find("\nserver:");
  ASSERT_NE(server_at, std::string::npos) << text;
  text.resize(server_at + 1);  // the draft's server: section is its last
  writeFile(site(), text + stagingAndServerSections());
  userStep();
  if (HasFatalFailure()) return;

  const auto doctor = test::runProcess(
      {test::tuneplaneBinary(), "doctor", "--site", site(), "-o", "json"}, {.scratch = dir_});
  EXPECT_EQ(doctor.exit_code, 0) << doctor.out << doctor.err;
  const json report = json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out;
  EXPECT_EQ(report["passed"], true) << report.dump(2);

  serve_ = test::ServeProcess::start(site(), dir_ + "/tuneplane.db", dir_);
  ASSERT_NE(serve_, nullptr);
  cli_ = std::make_unique<test::CliRunner>(serve_->url(), kToken, dir_);
  writeFile(dir_ + "/job.yaml",
            cpuJobSpec("live-site-init", "echo drafted site on $SLURMD_NODENAME"));
  const auto submitted = cli_->run(
      {"submit", "-f", dir_ + "/job.yaml", "--wait", "--timeout", "4m", "--poll-interval", "1s"});
  id_ = submitted.out.substr(0, submitted.out.find(':'));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err << serve_->process().err();
  EXPECT_EQ(submitted.out, id_ + ": Succeeded (attempt 1: the job completed)\n");
  const auto logs = cli_->run({"logs", id_});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_TRUE(logs.out.starts_with("drafted site on ")) << logs.out;
}

}  // namespace
}  // namespace tuneplane::live
