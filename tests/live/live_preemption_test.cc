// Live (issue 47): a CPU job that `tuneplane serve` runs on the real cluster's `cpu` partition is
// preempted by a job on `urgent` (the test cluster's --preemption: PreemptMode CANCEL,
// send_user_signal, GraceTime 30 s). Its program gets the warning signal (the site's default,
// USR2), saves its step to the job's checkpoint directory and exits; Slurm ends the job
// PREEMPTED; TunePlane records the attempt as preempted and retries it without using one of
// retry.max_attempts (1 here), and the next attempt resumes from the saved step and Succeeds.
// Proven from what the program wrote on the node (its log), not only from what serve says.
// Skipped unless TUNEPLANE_LIVE_* is set, and unless TUNEPLANE_LIVE_PREEMPTION says the
// cluster has the `urgent` partition. Waits are bounded.
#include <chrono>
#include <regex>

#include "live_serve_fixture.h"
#include "support/wait.h"

namespace tuneplane::live {
namespace {

using namespace std::chrono_literals;

// Counts to 30, a step a second, from the step the job's checkpoint directory holds. On the
// warning it saves the step it reached and exits 0 (Slurm still ends the job PREEMPTED).
constexpr const char* kSavingProgram = R"(import os, signal, sys, time
checkpoint = os.path.join(os.environ["TUNEPLANE_CHECKPOINT_DIR"], "step")
step = int(open(checkpoint).read()) if os.path.exists(checkpoint) else 0
print("attempt", os.environ["TUNEPLANE_ATTEMPT"], "starts at step", step, flush=True)
warned = []
signal.signal(getattr(signal, "SIG" + os.environ["TUNEPLANE_PREEMPT_SIGNAL"]),
              lambda number, frame: warned.append(number))
while step < 30:
    time.sleep(1)
    step += 1
    print("step", step, flush=True)
    if warned:
        with open(checkpoint + ".tmp", "w") as f:
            f.write(str(step))
        os.replace(checkpoint + ".tmp", checkpoint)
        print("warned by", signal.Signals(warned[0]).name, "- saved step", step, flush=True)
        sys.exit(0)
print("finished at step", step, flush=True)
)";

std::string indented(const std::string& text, const std::string& indent) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    out += indent + text.substr(start, end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

class LivePreemption : public LiveServe {
 protected:
  void SetUp() override {
    if (!env("TUNEPLANE_LIVE_PREEMPTION")) {
      GTEST_SKIP() << "the cluster has no preempting partition: start it with up.sh --preemption "
                      "(TUNEPLANE_LIVE_PREEMPTION)";
    }
    LiveServe::SetUp();
  }

  std::string spec() const {
    return "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: live-preempt\n"
           "spec:\n  framework:\n    name: custom\n    task: custom\n    runtime_id: custom-demo\n"
           "    command:\n      - python3\n      - -c\n      - |\n" +
           indented(kSavingProgram, "        ") +
           "  resources:\n    time_limit: 5m\n    pools:\n      - name: main\n        nodes: 1\n"
           "        gpus_per_node: 0\n        cpus: 1\n        memory_gb: 1\n"
           "  retry:\n    max_attempts: 1\n";
  }

  std::string log(int attempt) const {
    return cli_->run({"logs", id_, "--attempt", std::to_string(attempt)}).out;
  }
};

TEST_F(LivePreemption, APreemptedJobIsWarnedSavesAndResumesWithoutUsingAnAttempt) {
  writeFile(dir_ + "/job.yaml", spec(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto submitted = cli_->run({"submit", "-f", dir_ + "/job.yaml"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  id_ = submitted.out.substr(0, submitted.out.find_first_of(": \n"));

  // Attempt 1 runs and has counted two steps: then a job on `urgent` takes all of cpu1.
  ASSERT_TRUE(test::waitUntil(
      [&] {
        const std::string text = log(1);
        return text.find("attempt 1 starts at step 0\n") != std::string::npos &&
               text.find("step 2\n") != std::string::npos;
      },
      3min))
      << log(1) << serve_->process().err();
  const std::string conf = liveSlurmConf(live_);
  ASSERT_FALSE(conf.empty()) << "no slurm.conf for sbatch: set TUNEPLANE_LIVE_SLURM_CONF";
  const test::ProcessResult urgent =
      runSlurmCommand(live_, conf,
                      {"sbatch", "--partition=urgent", "--nodelist=cpu1", "--exclusive",
                       "--output=/dev/null", "--wrap=sleep 5"},
                      dir_);
  ASSERT_EQ(urgent.exit_code, 0) << urgent.out << urgent.err;

  // The job ends Succeeded in attempt 2 (bounded: the grace time, the retry, 30 steps).
  json job;
  ASSERT_TRUE(test::waitUntil(
      [&] {
        job = cli_->job(id_);
        const std::string phase = job.value("phase", "");
        return phase == "Succeeded" || phase == "Failed" || phase == "Cancelled";
      },
      5min))
      << job.dump(2) << serve_->process().err();
  EXPECT_EQ(job.value("phase", ""), "Succeeded") << job.dump(2);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  const json& first = job["attempts"][0];
  EXPECT_EQ(first.value("cause", ""), "preempted") << first.dump(2);
  EXPECT_EQ(first["components"][0]["state"], json::array({"PREEMPTED"})) << first.dump(2);
  EXPECT_EQ(job["attempts"][1].value("phase", ""), "Succeeded");
  EXPECT_EQ(job.value("preemptions", -1), 1) << job.dump(2);

  // What the program wrote on the node: warned by USR2, saved step N; attempt 2 resumed at N.
  const std::string first_log = log(1);
  std::smatch saved;
  ASSERT_TRUE(
      std::regex_search(first_log, saved, std::regex("warned by SIGUSR2 - saved step (\\d+)")))
      << first_log;
  const std::string step = saved[1];
  const std::string second_log = log(2);
  EXPECT_NE(second_log.find("attempt 2 starts at step " + step + "\n"), std::string::npos)
      << second_log;
  EXPECT_NE(second_log.find("finished at step 30\n"), std::string::npos) << second_log;

  const auto described = cli_->run({"describe", id_});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  EXPECT_NE(described.out.find("reempt"), std::string::npos) << described.out;
  RecordProperty("saved_step", step);
}

}  // namespace
}  // namespace tuneplane::live
