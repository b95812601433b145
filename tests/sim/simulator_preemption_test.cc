// The simulator's preemption (Simulator::preemptJob, issue 47) on a driven clock, held to what
// the real 26.05.3 did (tests/data/slurm/transcripts/23_preemption.json): the job stays RUNNING
// with preempt_time and end_time = it + GraceTime; its steps' processes get the warning signal
// (TERM without one) and the batch shell does not; a script that ends in the grace time ends the
// job PREEMPTED at once with exit_code SUCCESS/0 whatever its exit; one that runs on is killed
// when the clock passes the grace end; PREEMPTED,COMPLETING through the epilog; slurmdbd
// records PREEMPTED. The scripts run as real processes; only waiting on them is in real time.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/clock.h"
#include "sim_test_support.h"

namespace tuneplane::sim::testing {
namespace {

using namespace std::chrono_literals;

class SimPreemptionTest : public SimFixture {
 protected:
  const Clock* simulatorClock() override { return &clock_; }
  // waitState lets a tenth of a second pass between polls: the epilog ends on the clock.
  void letTimePass() override { clock_.advance(100ms); }
  void tune(SimulatorOptions& o) override {
    o.epilog = 2s;
    o.accounting = true;
  }

  // A batch script like the transcript's: one srun step whose task traps the warning and
  // then does `on_warning`; the batch shell notes any USR2 it gets (it must get none) and
  // ends with the step's code. Each line it writes goes to `marks`.
  json preemptible(const std::string& on_warning, bool with_warning = true) {
    const std::string step = "trap 'echo step-got-warning >>" + marks() + "; " + on_warning +
                             "' USR2; trap 'echo step-got-term >>" + marks() +
                             "; exit 143' TERM; echo step-started >>" + marks() +
                             "; while :; do sleep 0.05; done";
    const std::string script = "trap 'echo batch-got-usr2 >>" + marks() + "' USR2\n" +
                               "srun --ntasks=1 bash -c \"" + step + "\" &\n" +
                               "pid=$!\n"
                               "while :; do wait \"$pid\"; rc=$?; kill -0 \"$pid\" 2>/dev/null "
                               "|| break; done\n"
                               "echo \"batch-ended rc=$rc\" >>" +
                               marks() + "\nexit $rc";
    json extra = {{"time_limit", {{"set", true}, {"infinite", false}, {"number", 60}}}};
    if (with_warning) {
      extra["kill_warning_signal"] = "USR2";
      extra["kill_warning_delay"] = {{"set", true}, {"infinite", false}, {"number", 120}};
      extra["kill_warning_flags"] = json::array();
    }
    return jobBody(script, extra);
  }
  std::string marks() const { return jobs_dir_ + "/marks"; }
  std::string marksText() const {
    std::ifstream in(marks());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  bool marked(const std::string& what) const { return marksText().find(what) != std::string::npos; }
  // Submitted, RUNNING, and its step's task started (so it can get the signal).
  std::string running(const json& body) {
    const std::string id = std::to_string(submit(body));
    EXPECT_TRUE(tuneplane::test::waitUntil([&] { return marked("step-started"); })) << marksText();
    EXPECT_EQ(state(id), json::array({"RUNNING"}));
    return id;
  }
  int64_t number(const json& record, const char* key) {
    return record[key].value("number", int64_t{-1});
  }
  json slurmdbState(const std::string& id) {
    auto res =
        client_->Get(("/slurmdb/v0.0.45/job/" + id).c_str(),
                     {{"X-SLURM-USER-NAME", "slurm"}, {"X-SLURM-USER-TOKEN", token("slurm")}});
    if (!res || res->status != 200) return json();
    const json body = json::parse(res->body, nullptr, false);
    if (!body.is_object() || body["jobs"].empty()) return json();
    return body["jobs"][0]["state"]["current"];
  }

  FakeClock clock_;
};

TEST_F(SimPreemptionTest, ARunningJobInItsGraceTimeIsWarnedAndKilledWhenTheClockPassesIt) {
  const std::string id = running(preemptible("echo saving >>" + marks()));
  const int64_t before = clock_.nowMs() / 1000;
  ASSERT_TRUE(sim_->preemptJob(id, 30s));
  // Still RUNNING, with preempt_time = now and end_time = now + GraceTime.
  json record = job(id)[0];
  EXPECT_EQ(record["job_state"], json::array({"RUNNING"}));
  EXPECT_EQ(number(record, "preempt_time"), before);
  EXPECT_EQ(number(record, "end_time"), before + 30);
  // The step's task got the warning; the batch shell did not.
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return marked("saving"); })) << marksText();
  EXPECT_FALSE(marked("batch-got-usr2")) << marksText();
  // A second preemption of a job in its grace time is refused.
  EXPECT_FALSE(sim_->preemptJob(id, 30s));

  clock_.advance(29s);
  EXPECT_TRUE(tuneplane::test::holdsThroughout(
      [&] { return state(id) == json::array({"RUNNING"}); }, 300ms))
      << state(id);
  clock_.advance(1s);
  ASSERT_TRUE(tuneplane::test::waitUntil([&] {
    return state(id) == json::array({"PREEMPTED", "COMPLETING"});
  })) << state(id);
  record = job(id)[0];
  EXPECT_EQ(record["state_reason"], "None");
  EXPECT_EQ(number(record, "preempt_time"), number(record, "end_time"));  // rewritten to the kill
  EXPECT_EQ(number(record, "end_time"), before + 30);
  ASSERT_TRUE(waitState(id, {"PREEMPTED"}));
  EXPECT_EQ(job(id)[0]["exit_code"]["status"], json::array({"SIGNALED"}));
  EXPECT_EQ(slurmdbState(id), json::array({"PREEMPTED"}));
}

TEST_F(SimPreemptionTest, AScriptThatSavesAndExitsInTheGraceTimeEndsPreemptedAtOnce) {
  for (const int code : {0, 3}) {
    SCOPED_TRACE("the step exits " + std::to_string(code));
    std::filesystem::remove(marks());
    const std::string id = running(preemptible("exit " + std::to_string(code)));
    const int64_t before = clock_.nowMs() / 1000;
    ASSERT_TRUE(sim_->preemptJob(id, 30s));
    // No clock moves: it ends as its script ends.
    ASSERT_TRUE(tuneplane::test::waitUntil([&] {
      return state(id) == json::array({"PREEMPTED", "COMPLETING"});
    })) << state(id)
        << marksText();
    EXPECT_TRUE(marked("batch-ended rc=" + std::to_string(code))) << marksText();
    const json record = job(id)[0];
    // Slurm's record of the end, not the script's exit code.
    EXPECT_EQ(record["exit_code"]["status"], json::array({"SUCCESS"}));
    EXPECT_EQ(number(record["exit_code"], "return_code"), 0);
    EXPECT_EQ(number(record, "preempt_time"), before);
    EXPECT_EQ(number(record, "end_time"), before);
    clock_.advance(2s);
    ASSERT_TRUE(waitState(id, {"PREEMPTED"}));
    EXPECT_EQ(slurmdbState(id), json::array({"PREEMPTED"}));
  }
}

TEST_F(SimPreemptionTest, AJobWithoutAWarningSignalGetsTermAtThePreemption) {
  const std::string id = running(preemptible("echo saving >>" + marks(), false));
  ASSERT_TRUE(sim_->preemptJob(id, 30s));
  ASSERT_TRUE(tuneplane::test::waitUntil([&] {
    return state(id) == json::array({"PREEMPTED", "COMPLETING"});
  })) << state(id)
      << marksText();
  EXPECT_TRUE(marked("step-got-term")) << marksText();
  EXPECT_FALSE(marked("saving")) << marksText();
  EXPECT_TRUE(marked("batch-ended rc=143")) << marksText();
  EXPECT_EQ(job(id)[0]["exit_code"]["status"], json::array({"SUCCESS"}));
}

TEST_F(SimPreemptionTest, OnlyARunningJobIsPreempted) {
  sim_->pauseScheduling(true);
  const std::string id = std::to_string(submit(jobBody("true")));
  EXPECT_FALSE(sim_->preemptJob(id, 30s));
  EXPECT_FALSE(sim_->preemptJob("999999", 30s));
  EXPECT_EQ(state(id), json::array({"PENDING"}));
}

}  // namespace
}  // namespace tuneplane::sim::testing
