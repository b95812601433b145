// Live, end to end as a user runs it: `tuneplane serve` (a process of its own) with a site
// whose slurmrestd is TUNEPLANE_LIVE_SLURMRESTD and whose staging root lies in
// TUNEPLANE_LIVE_SHARED_DIR, and the `tuneplane` CLI against it: `submit --wait` of a small
// CPU job, then get, describe and logs. Skipped unless TUNEPLANE_LIVE_* is set. Run as root,
// serve stages through `staging.group` (TUNEPLANE_LIVE_STAGING_GROUP, default the live
// user's primary group) for jobs that Slurm runs as the live user; run as the live user, it
// needs no group. Waits are bounded (support/serve_harness.h and --timeout).
#include "live_serve_fixture.h"

namespace tuneplane::live {
namespace {

TEST_F(LiveServe, SubmitWaitGetDescribeAndLogsOfACpuJob) {
  const std::string spec =
      cpuJobSpec("live-serve", "echo hello from $SLURMD_NODENAME as $(id -un)");
  writeFile(dir_ + "/job.yaml", spec,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto submitted = cli_->run(
      {"submit", "-f", dir_ + "/job.yaml", "--wait", "--timeout", "4m", "--poll-interval", "1s"});
  id_ = submitted.out.substr(0, submitted.out.find(':'));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err << serve_->process().err();
  EXPECT_EQ(submitted.out, id_ + ": Succeeded (attempt 1: the job completed)\n");

  const json job = cli_->job(id_);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  const json& attempt = job["attempts"][0];
  ASSERT_EQ(attempt["components"].size(), 1u);
  const json& component = attempt["components"][0];
  EXPECT_EQ(component["exit_code"], 0);
  EXPECT_TRUE(component["sluid"].is_string()) << component.dump();
  EXPECT_EQ(component["state"], json::array({"COMPLETED"}));
  EXPECT_TRUE(attempt.value("staging_dir", "").starts_with(dir_ + "/staging/"));
  RecordProperty("nodes", component.value("nodes", ""));

  const auto listed = cli_->run({"get"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(id_), std::string::npos) << listed.out;
  const auto described = cli_->run({"describe", id_});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  const std::string sluid = component.value("sluid", "");
  for (const std::string& part : {std::string("Attempt 1:"), std::string("COMPLETED"), sluid}) {
    EXPECT_NE(described.out.find(part), std::string::npos) << part << "\n" << described.out;
  }
  // The job ran on a node as the cluster's job user and wrote its log on the shared dir.
  const auto logs = cli_->run({"logs", id_});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "hello from " + component.value("nodes", "?") + " as " + live_.user + "\n");
}

}  // namespace
}  // namespace tuneplane::live
