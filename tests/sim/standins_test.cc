// The compute-node stand-ins (srun with Pyxis options, scontrol, apptainer), run directly
// from the simulator's bin dir with the variables a simulated batch step has.
#include "sim/standins.h"
#include "sim_test_support.h"
#include "support/subprocess.h"

namespace tuneplane::sim::testing {
namespace {

class StandinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = dir_.path() + "/bin";
    ASSERT_TRUE(writeStandins(bin_));
    std::ofstream(dir_.path() + "/image.sqsh") << "fake";
  }

  // Runs `command` under bash with a two-component allocation in the environment.
  std::pair<int, std::string> run(const std::string& command) {
    const std::string env = "env -i PATH=" + bin_ +
                            ":/usr/bin:/bin SLURM_JOB_ID=7 SLURM_JOB_NODELIST='gpu[1-2]' "
                            "SLURM_HET_SIZE=2 SLURM_JOB_NODELIST_HET_GROUP_0='gpu[1-2]' "
                            "SLURM_JOB_NODELIST_HET_GROUP_1=cpu1 TUNEPLANE_SLURMSIM_JOB_DIR=" +
                            dir_.path() + " ";
    const std::string script = dir_.path() + "/cmd.sh";
    std::ofstream(script) << command << "\n";
    const auto child = test::runShell(env + "bash " + script + " 2>&1", {.scratch = dir_.path()});
    return {child.exit_code, child.out};
  }

  TempDir dir_;
  std::string bin_;
};

TEST_F(StandinTest, EveryStandinSaysItIsASimulatorStandin) {
  for (const char* tool : {"srun", "scontrol", "apptainer"}) {
    const auto [rc, out] = run(std::string(tool) + " --help");
    EXPECT_EQ(rc, 0) << tool;
    EXPECT_NE(out.find("SIMULATOR STAND-IN"), std::string::npos) << tool << ": " << out;
  }
}

TEST_F(StandinTest, ScontrolExpandsHostlists) {
  EXPECT_EQ(run("scontrol show hostnames 'gpu[1-2],cpu1'").second, "gpu1\ngpu2\ncpu1\n");
  EXPECT_EQ(run("scontrol show hostnames").second, "gpu1\ngpu2\n");
  EXPECT_EQ(run("scontrol show hostnames 'n[08-10]'").second, "n08\nn09\nn10\n");
  EXPECT_NE(run("scontrol show jobs").first, 0);
}

TEST_F(StandinTest, SrunRunsOneTaskPerNodeByDefaultAndSetsTaskVariables) {
  const auto [rc, out] =
      run("srun bash -c 'echo $SLURM_PROCID/$SLURM_NODEID/$SLURMD_NODENAME/$SLURM_STEP_ID' | sort");
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out, "0/0/gpu1/0\n1/1/gpu2/0\n");
  // Step ids count up.
  EXPECT_EQ(run("srun -N1 bash -c 'echo $SLURM_STEP_ID'").second, "1\n");
}

TEST_F(StandinTest, SrunHonoursTopologyOptions) {
  EXPECT_EQ(run("srun -N1 -n3 bash -c 'echo $SLURMD_NODENAME' | sort").second,
            "gpu1\ngpu1\ngpu1\n");
  EXPECT_EQ(run("srun --nodes=2 --ntasks-per-node=2 bash -c 'echo $SLURM_NODEID' | sort").second,
            "0\n0\n1\n1\n");
  EXPECT_EQ(run("srun -w gpu2 bash -c 'echo $SLURMD_NODENAME'").second, "gpu2\n");
  EXPECT_EQ(run("srun --exclude=gpu1 bash -c 'echo $SLURMD_NODENAME'").second, "gpu2\n");
  EXPECT_EQ(run("srun --het-group=1 bash -c 'echo $SLURMD_NODENAME'").second, "cpu1\n");
  EXPECT_NE(run("srun --het-group=2 true").first, 0);
  EXPECT_NE(run("srun -N3 true").first, 0);
  EXPECT_NE(run("srun -w cpu1 true").first, 0);  // not in the allocation
  EXPECT_EQ(run("srun --overlap --cpus-per-task=2 --gres=gpu:1 --gpus-per-node=1 --mem=1G "
                "-N1 true")
                .first,
            0);
  EXPECT_EQ(run("srun -N1 --export=ALL,FOO=bar bash -c 'echo $FOO'").second, "bar\n");
}

TEST_F(StandinTest, SrunExitCodeIsTheWorstTask) {
  EXPECT_EQ(run("srun -n3 -N1 bash -c 'exit $SLURM_PROCID'").first, 2);
}

TEST_F(StandinTest, PyxisImageMustBeAnExistingPathLikeFile) {
  const std::string img = dir_.path() + "/image.sqsh";
  EXPECT_EQ(run("srun -N1 --container-image=" + img +
                " --container-mounts=/a:/b:ro "
                "--container-workdir=/tmp --no-container-mount-home --container-remap-root "
                "--container-name=c --container-env=X bash -c pwd")
                .second,
            "/tmp\n");
  EXPECT_NE(run("srun -N1 --container-image=nvcr.io/nvidia/pytorch:24.01 true").first, 0);
  EXPECT_NE(run("srun -N1 --container-image=" + dir_.path() + "/missing.sqsh true").first, 0);
}

TEST_F(StandinTest, ApptainerExecChecksImageAndMapsEnvironment) {
  const std::string img = dir_.path() + "/image.sqsh";
  EXPECT_EQ(run("APPTAINERENV_GREETING=hi apptainer exec --nv --bind /a:/b --pwd /tmp " + img +
                " bash -c 'echo $GREETING $(pwd)'")
                .second,
            "hi /tmp\n");
  EXPECT_EQ(
      run("FOO=1 apptainer exec --cleanenv --env BAR=2 " + img + " bash -c 'echo ${FOO-none} $BAR'")
          .second,
      "none 2\n");
  EXPECT_NE(run("apptainer exec " + dir_.path() + "/missing.sif true").first, 0);
}

}  // namespace
}  // namespace tuneplane::sim::testing
