// The campaign's invariant checker (invariants.h) on made-up observations: a clean job
// passes; a lost job, a token run twice, an unknown Slurm job, a Slurm job still running
// after its job ended and a broken event chain are each reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

#include "campaign/invariants.h"
#include "slurm/script_renderer.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "staging/staging_paths.h"
#include "support/test_files.h"

namespace tuneplane::campaign {
namespace {

using nlohmann::json;

// An attempt directory as the stager leaves it: job.sh and manifest.json 0444, logs/ and
// output/, the directory 0555.
class StagedDir {
 public:
  StagedDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tp-inv-XXXXXX").string();
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/1";
    std::filesystem::create_directories(dir_ + "/logs");
    std::filesystem::create_directories(dir_ + "/output");
    const std::string script = "#!/bin/bash\necho hi\n";
    test::writeFile(dir_ + "/job.sh", script, std::filesystem::perms(0444));
    const json manifest = {
        {"version", 1},
        {"files",
         {{"job.sh", {{"sha256", staging::sha256Hex(script)}, {"bytes", script.size()}}}}}};
    test::writeFile(dir_ + "/manifest.json", manifest.dump(), std::filesystem::perms(0444));
    ::chmod(dir_.c_str(), 0555);
  }
  ~StagedDir() { staging::PosixStagingFs().removeTree(root_); }
  const std::string& dir() const { return dir_; }

 private:
  std::string root_, dir_;
};

json job(const std::string& id, const std::string& phase, bool terminal, const std::string& token,
         const std::string& staging_dir) {
  return {{"id", id},
          {"phase", phase},
          {"terminal", terminal},
          {"attempts", json::array({{{"number", 1},
                                     {"phase", phase},
                                     {"submit_token", token},
                                     {"staging_dir", staging_dir}}})}};
}
json events(const std::string& phase) {
  return json::array({{{"seq", 1}, {"attempt", 0}, {"from", ""}, {"to", "Pending"}},
                      {{"seq", 2}, {"attempt", 1}, {"from", ""}, {"to", "Staging"}},
                      {{"seq", 3}, {"attempt", 0}, {"from", "Pending"}, {"to", phase}},
                      {{"seq", 4}, {"attempt", 1}, {"from", "Staging"}, {"to", phase}}});
}
// `starts` starts that each ended with exit code 0, the first one a first start (restart_cnt
// 0), each later one a restart after a requeue.
json slurm(int id, const std::string& token, int starts, const std::string& state) {
  json runs = json::array();
  for (int i = 0; i < starts; ++i) runs.push_back({{"restart_cnt", i}, {"exit_code", 0}});
  return {{"job_id", id},    {"comment", token}, {"starts", starts},
          {"runs", runs},    {"state", state},   {"sluids", json::array({"s1"})},
          {"components", 1}, {"purged", false}};
}

class CampaignInvariants : public ::testing::Test {
 protected:
  Observed clean() const {
    Observed o;
    o.ids = {"a"};
    o.jobs["a"] = job("a", "Succeeded", true, "tok-a", staged_.dir());
    o.events["a"] = events("Succeeded");
    o.slurm = json::array({slurm(1, "tok-a", 1, "COMPLETED")});
    return o;
  }
  StagedDir staged_;
};

TEST_F(CampaignInvariants, ACleanRunHasNoViolation) {
  const Verdict v = checkInvariants(clean());
  EXPECT_TRUE(v.violations.empty()) << v.violations.front();
  EXPECT_EQ(v.jobs, 1);
  EXPECT_EQ(v.lost, 0);
  EXPECT_EQ(v.run_twice, 0);
}

TEST_F(CampaignInvariants, ALostJobIsReported) {
  Observed o = clean();
  o.ids.push_back("b");  // the API never found it
  o.jobs["a"] = job("a", "Running", false, "tok-a", staged_.dir());
  o.events["a"] = events("Running");
  o.slurm = json::array({slurm(1, "tok-a", 1, "RUNNING")});
  const Verdict v = checkInvariants(o);
  EXPECT_EQ(v.lost, 2);
}

TEST_F(CampaignInvariants, TwoStartedSlurmJobsOfOneTokenAreRunTwice) {
  Observed o = clean();
  o.slurm.push_back(slurm(2, "tok-a", 1, "COMPLETED"));
  EXPECT_EQ(checkInvariants(o).run_twice, 1);
  o.slurm = json::array({slurm(1, "tok-a", 2, "COMPLETED")});  // one job started twice
  EXPECT_EQ(checkInvariants(o).run_twice, 1);
  o.slurm = json::array({slurm(1, "tok-a", 1, "COMPLETED"), slurm(2, "tok-a", 0, "CANCELLED")});
  EXPECT_EQ(checkInvariants(o).run_twice, 0);  // a duplicate cancelled before it ran
}

TEST_F(CampaignInvariants, ARequeuedJobsRestartRunsTwiceUnlessItsScriptRefusedIt) {
  Observed o = clean();
  json requeued = slurm(1, "tok-a", 2, "COMPLETED");
  requeued["runs"][1] = {{"restart_cnt", 1}, {"exit_code", slurm::kExitRestartRefused}};
  o.slurm = json::array({requeued});
  Verdict v = checkInvariants(o);
  EXPECT_EQ(v.run_twice, 0) << v.violations.front();
  EXPECT_EQ(v.refused_starts, 1);
  requeued["runs"][1] = {{"restart_cnt", 1}, {"exit_code", 0}};  // it ran again
  o.slurm = json::array({requeued});
  EXPECT_EQ(checkInvariants(o).run_twice, 1);
  requeued["runs"][1] = {{"restart_cnt", 1}, {"signal", 15}};  // killed: nothing says refused
  o.slurm = json::array({requeued});
  EXPECT_EQ(checkInvariants(o).run_twice, 1);
  requeued["runs"][1] = {{"restart_cnt", 1}};  // still running
  o.slurm = json::array({requeued});
  EXPECT_EQ(checkInvariants(o).run_twice, 1);
  // The code means "refused" only on a restart: a first start exiting 70 is the command's.
  json first = slurm(1, "tok-a", 1, "FAILED");
  first["runs"][0]["exit_code"] = slurm::kExitRestartRefused;
  o.slurm = json::array({first, slurm(2, "tok-a", 1, "COMPLETED")});
  EXPECT_EQ(checkInvariants(o).run_twice, 1);
  // A copy of a doubled submit that found the attempt claimed ran nothing.
  json copy = slurm(2, "tok-a", 1, "FAILED");
  copy["runs"][0]["exit_code"] = slurm::kExitAlreadyClaimed;
  o.slurm = json::array({slurm(1, "tok-a", 1, "COMPLETED"), copy});
  v = checkInvariants(o);
  EXPECT_EQ(v.run_twice, 0) << v.violations.front();
  EXPECT_EQ(v.refused_starts, 1);
}

TEST_F(CampaignInvariants, AnUnknownOrStillRunningSlurmJobAndABrokenChainAreReported) {
  Observed o = clean();
  o.slurm.push_back(slurm(3, "tok-nobody", 0, "PENDING"));
  EXPECT_EQ(checkInvariants(o).violations.size(), 1u);
  o = clean();
  o.slurm = json::array({slurm(1, "tok-a", 1, "RUNNING")});
  EXPECT_EQ(checkInvariants(o).violations.size(), 1u);
  o = clean();
  o.events["a"][2]["from"] = "Queued";  // does not follow Pending
  EXPECT_EQ(checkInvariants(o).violations.size(), 1u);
  o = clean();
  o.events["a"][3]["to"] = "Failed";  // the attempt's events end elsewhere than the API says
  EXPECT_EQ(checkInvariants(o).violations.size(), 1u);
}

TEST_F(CampaignInvariants, AWritableOrChangedStagedFileIsReported) {
  const StagedDir& dir = staged_;
  Observed o = clean();
  EXPECT_TRUE(checkInvariants(o).violations.empty());
  ::chmod((dir.dir() + "/job.sh").c_str(), 0644);
  EXPECT_EQ(checkInvariants(o).violations.size(), 1u);
  test::writeFile(dir.dir() + "/job.sh", "#!/bin/bash\necho changed\n",
                  std::filesystem::perms(0444));
  EXPECT_EQ(checkInvariants(o).violations.size(), 1u);
  ::chmod(dir.dir().c_str(), 0755);
  EXPECT_EQ(checkInvariants(o).violations.size(), 1u);
}

TEST_F(CampaignInvariants, AHalfWrittenStageLeftBesideAStagedAttemptIsReported) {
  Observed o = clean();
  const std::string leftover = staging::stagingTempPrefix(staged_.dir()) + "Ab12Cd";
  std::filesystem::create_directory(leftover);
  const Verdict v = checkInvariants(o);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_THAT(v.violations[0], ::testing::HasSubstr("half-written stage"));
  std::filesystem::remove(leftover);
  EXPECT_TRUE(checkInvariants(o).violations.empty());
}

}  // namespace
}  // namespace tuneplane::campaign
