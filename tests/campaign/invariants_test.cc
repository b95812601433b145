// The campaign's invariant checker (invariants.h) on made-up observations: a clean job
// passes; a lost job, a token run twice, an unknown Slurm job, a Slurm job still running
// after its job ended and a broken event chain are each reported; and from the job's own
// ledger (ledger.h, crafted here), two runs at once, an attempt run after a later one, a run in
// a Slurm job that does not carry its token, and a Succeeded job whose command never ran.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

#include "campaign/invariants.h"
#include "campaign/ledger.h"
#include "slurm/script_renderer.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "staging/staging_paths.h"
#include "support/test_files.h"

namespace tuneplane::campaign {
namespace {

using nlohmann::json;

// A job's directory as the stager leaves it (staging_paths.h): its checkpoint directory
// (where the ledger goes) and attempt `attempt`: job.sh and manifest.json 0444, logs/ and
// output/, the directory 0555.
class StagedDir {
 public:
  explicit StagedDir(int attempt = 1) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tp-inv-XXXXXX").string();
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/jobs/a/attempts/" + std::to_string(attempt);
    std::filesystem::create_directories(root_ + "/jobs/a/checkpoints");
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
  // The job's ledger (ledger.h), replaced.
  void writeLedger(const std::string& text) const {
    test::writeFile(root_ + "/jobs/a/checkpoints/" + std::string(kLedgerFile), text);
  }

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

// A ledger record (ledger.h): KIND at 1000 + AT seconds, in Slurm job JOB, of attempt ATTEMPT.
std::string rec(const char* kind, int at, int job, int attempt, int pid = 77) {
  return std::string(kind) + " " + std::to_string(1000 + at) + ".000000 " + std::to_string(job) +
         " " + std::to_string(attempt) + " " + std::to_string(pid) + "\n";
}
int64_t us(int at) {
  return (1000 + int64_t{at}) * 1'000'000;
}

class CampaignInvariants : public ::testing::Test {
 protected:
  void SetUp() override { staged_.writeLedger(rec("start", 0, 1, 1) + rec("end", 5, 1, 1)); }
  Observed clean() const {
    Observed o;
    o.ids = {"a"};
    o.jobs["a"] = job("a", "Succeeded", true, "tok-a", staged_.dir());
    o.events["a"] = events("Succeeded");
    o.slurm = json::array({slurm(1, "tok-a", 1, "COMPLETED")});
    return o;
  }
  // Job a in two attempts (tokens tok-1, tok-2), the first Failed, the second Succeeded, each
  // run by one Slurm job (1 and 2), its events chained; its ledger is the test's to write.
  Observed twoAttempts() const {
    Observed o = clean();
    json& j = o.jobs["a"];
    j["attempts"] = json::array({{{"number", 1},
                                  {"phase", "Failed"},
                                  {"submit_token", "tok-1"},
                                  {"staging_dir", staged_.dir()}},
                                 {{"number", 2},
                                  {"phase", "Succeeded"},
                                  {"submit_token", "tok-2"},
                                  {"staging_dir", second_.dir()}}});
    o.events["a"] =
        json::array({{{"seq", 1}, {"attempt", 0}, {"from", ""}, {"to", "Pending"}},
                     {{"seq", 2}, {"attempt", 1}, {"from", ""}, {"to", "Failed"}},
                     {{"seq", 3}, {"attempt", 2}, {"from", ""}, {"to", "Succeeded"}},
                     {{"seq", 4}, {"attempt", 0}, {"from", "Pending"}, {"to", "Succeeded"}}});
    json failed = slurm(1, "tok-1", 1, "FAILED");
    failed["runs"][0]["exit_code"] = 3;
    o.slurm = json::array({failed, slurm(2, "tok-2", 1, "COMPLETED")});
    return o;
  }
  StagedDir staged_;
  StagedDir second_{2};  // another root: only its attempt directory is used
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

namespace tuneplane::campaign {
namespace {

TEST_F(CampaignInvariants, AttemptsRunOneAfterTheOtherInTheLedgerPass) {
  staged_.writeLedger(rec("start", 0, 1, 1) + rec("end", 5, 1, 1) + rec("start", 9, 2, 2, 80) +
                      rec("end", 12, 2, 2, 80));
  const Verdict v = checkInvariants(twoAttempts());
  EXPECT_TRUE(v.violations.empty()) << ::testing::PrintToString(v.violations);
  EXPECT_EQ(v.commands_run, 2);
  EXPECT_EQ(v.overlapping, 0);
  EXPECT_EQ(v.out_of_order, 0);
}

TEST_F(CampaignInvariants, TwoAttemptsRunningAtOnceAreOverlapping) {
  staged_.writeLedger(rec("start", 0, 1, 1) + rec("start", 3, 2, 2, 80) + rec("end", 5, 1, 1) +
                      rec("end", 12, 2, 2, 80));
  const Verdict v = checkInvariants(twoAttempts());
  EXPECT_EQ(v.overlapping, 1);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_THAT(v.violations[0], ::testing::HasSubstr("RAN AT ONCE"));
}

TEST_F(CampaignInvariants, AnAttemptRunAfterALaterOneIsOutOfOrder) {
  staged_.writeLedger(rec("start", 0, 2, 2, 80) + rec("end", 5, 2, 2, 80) + rec("start", 9, 1, 1) +
                      rec("end", 12, 1, 1));
  const Verdict v = checkInvariants(twoAttempts());
  EXPECT_EQ(v.out_of_order, 1);
  EXPECT_EQ(v.overlapping, 0);
  EXPECT_EQ(v.violations.size(), 1u);
}

TEST_F(CampaignInvariants, AKilledRunIsBoundedByWhenTheSimulatorSawItsScriptGone) {
  staged_.writeLedger(rec("start", 0, 1, 1) + rec("start", 30, 2, 2, 80) +
                      rec("end", 40, 2, 2, 80));
  Observed o = twoAttempts();
  o.slurm[0]["runs"][0] = {
      {"restart_cnt", 0}, {"signal", 9}, {"start_us", us(-1)}, {"end_us", us(25)}};
  Verdict v = checkInvariants(o);
  EXPECT_TRUE(v.violations.empty()) << ::testing::PrintToString(v.violations);
  o.slurm[0]["runs"][0]["end_us"] = us(35);  // gone only after attempt 2 had started
  v = checkInvariants(o);
  EXPECT_EQ(v.overlapping, 1);
  o.slurm[0]["runs"][0].erase("end_us");  // never seen gone: it runs for ever
  v = checkInvariants(o);
  EXPECT_EQ(v.overlapping, 1);
}

TEST_F(CampaignInvariants, ARunInASlurmJobWithoutItsAttemptsTokenIsReported) {
  staged_.writeLedger(rec("start", 0, 9, 1) + rec("end", 5, 9, 1));
  const Verdict v = checkInvariants(clean());
  ASSERT_FALSE(v.violations.empty());
  EXPECT_THAT(v.violations[0], ::testing::HasSubstr("does not carry that attempt's token"));
}

TEST_F(CampaignInvariants, ASucceededJobWhoseLedgerRecordsNoRunOrTwoIsReported) {
  staged_.writeLedger("");
  EXPECT_EQ(checkInvariants(clean()).violations.size(), 1u);
  staged_.writeLedger(rec("start", 0, 1, 1) + rec("end", 5, 1, 1) + rec("start", 7, 1, 1, 78) +
                      rec("end", 8, 1, 1, 78));
  const Verdict v = checkInvariants(clean());
  EXPECT_EQ(v.run_twice, 1);
}

TEST_F(CampaignInvariants, AStartThatFoundItsClaimUncreatableOrItsAttemptSupersededRanNothing) {
  Observed o = clean();
  for (const int code : {slurm::kExitCannotClaim, slurm::kExitSuperseded}) {
    json refused = slurm(2, "tok-a", 1, "FAILED");
    refused["runs"][0]["exit_code"] = code;
    o.slurm = json::array({refused, slurm(1, "tok-a", 1, "COMPLETED")});
    const Verdict v = checkInvariants(o);
    EXPECT_EQ(v.run_twice, 0) << code;
    EXPECT_EQ(v.refused_starts, 1) << code;
    EXPECT_TRUE(v.violations.empty()) << ::testing::PrintToString(v.violations);
  }
}

}  // namespace
}  // namespace tuneplane::campaign
