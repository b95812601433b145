// Preemption is not failure (issue 47), end to end: the real `tuneplane serve` and
// `tuneplane-slurmsim`, a job with retry.max_attempts 1 preempted twice (the simulator's
// preemption with a grace time, as the real 26.05.3 does it: 23_preemption.json). Its program
// gets the warning signal, saves its step to the job's checkpoint directory and exits 0; Slurm's
// record says PREEMPTED all the same, so each attempt ends with cause preempted, is retried
// without using an attempt, and the third resumes from the saved step and Succeeds.
#include <filesystem>

#include "e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

// Saves `step` (one more than it resumed from) when warned, and exits 0; the third attempt
// only says where it resumed from. Python, as a program that installs its own handler: the
// step starts with the warning ignored (docs/users.md, "Saving before the end").
constexpr const char* kProgram = R"py(import os, pathlib, signal, sys, time
ckpt = pathlib.Path(os.environ["TUNEPLANE_CHECKPOINT_DIR"]) / "step"
attempt = os.environ["TUNEPLANE_ATTEMPT"]
resume = os.environ.get("TUNEPLANE_RESUME") == "1" and ckpt.exists()
step = int(ckpt.read_text()) if resume else 0
print(f"attempt {attempt} resumed from step {step}", flush=True)
if attempt == "3":
    sys.exit(0)
def save(signum, frame):
    tmp = ckpt.with_suffix(".tmp")
    tmp.write_text(str(step + 1))
    os.replace(tmp, ckpt)
    print(f"warned by {signal.Signals(signum).name}: saved step {step + 1}", flush=True)
    sys.exit(0)
signal.signal(getattr(signal, "SIG" + os.environ["TUNEPLANE_PREEMPT_SIGNAL"]), save)
(pathlib.Path(os.environ["TUNEPLANE_OUTPUT_DIR"]) / "ready").write_text("")
while True:
    time.sleep(0.05)
)py";

class ServeE2ePreemptionTest : public ServeE2eTest {
 protected:
  // Waits until attempt `n` runs and its program has installed its handler; then Slurm
  // preempts it with a grace time of 30 s (the program saves and exits long before).
  void preemptAttempt(const std::string& id, int n) {
    const json job = waitAttemptRunning(id, n);
    const json& attempt = job["attempts"][n - 1];
    const std::string ready = attempt.value("staging_dir", "") + "/output/ready";
    ASSERT_TRUE(test::waitUntil([&] { return std::filesystem::exists(ready); }, kJobLimit))
        << "attempt " << n << " never installed its handler";
    const std::string sluid = attempt["components"][0]["sluid"];
    ASSERT_EQ(sim_->setFaults({{"preempt", {{"job", sluid}, {"grace_s", 30}}}}), 200);
  }
};

TEST_F(ServeE2ePreemptionTest, TwoPreemptionsUseNoAttemptAndTheThirdResumesAndSucceeds) {
  const std::string program = scratch_ + "/train.py";
  pipeline::testing::writeFile(program, kProgram);
  // retry.max_attempts 1 (the default) and retry.on never: neither governs a preemption.
  const std::string id =
      submit(cpuSpec("exec python3 " + program, "  retry:\n    max_attempts: 1\n    on: never\n"));
  ASSERT_FALSE(id.empty());
  preemptAttempt(id, 1);
  preemptAttempt(id, 2);

  const json job = waitPhase(id, "Succeeded");
  ASSERT_EQ(job["attempts"].size(), 3u) << job.dump(2);
  EXPECT_EQ(job["preemptions"], 2);
  for (int n : {0, 1}) {
    const json& preempted = job["attempts"][n];
    EXPECT_EQ(preempted["phase"], "Failed") << preempted.dump(2);
    EXPECT_EQ(preempted["cause"], "preempted") << preempted.dump(2);
    // Slurm's record, not the program's exit 0 (its exit sentinel), decided.
    EXPECT_EQ(preempted["components"][0]["state"], json::array({"PREEMPTED"}));
    EXPECT_EQ(preempted["components"][0]["exit_code"], 0);
    EXPECT_TRUE(preempted["components"][0]["preempt_time"].is_string()) << preempted.dump(2);
  }
  EXPECT_EQ(job["attempts"][2]["phase"], "Succeeded");

  // Each attempt was warned and saved; the third resumed from the second's save.
  EXPECT_EQ(alice_->run({"logs", id, "--attempt", "1"}).out,
            "attempt 1 resumed from step 0\nwarned by SIGUSR2: saved step 1\n");
  EXPECT_EQ(alice_->run({"logs", id, "--attempt", "2"}).out,
            "attempt 2 resumed from step 1\nwarned by SIGUSR2: saved step 2\n");
  EXPECT_EQ(alice_->run({"logs", id}).out, "attempt 3 resumed from step 2\n");

  const auto described = alice_->run({"describe", id});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  for (const std::string part :
       {"Attempts:      3 (2 preempted: not counted against retry.max_attempts)",
        "Cause:         preempted", "retrying (preempted, preemption 2 of 10"}) {
    EXPECT_NE(described.out.find(part), std::string::npos) << part << "\n" << described.out;
  }
  const auto events = alice_->run({"events", id});
  EXPECT_NE(events.out.find("retrying (preempted, preemption 1 of 10; no attempt of "
                            "retry.max_attempts used)"),
            std::string::npos)
      << events.out;
}

}  // namespace
}  // namespace tuneplane::cli::testing
