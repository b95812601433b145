// `tuneplane site init` through the built binary against tuneplane-slurmsim with several node
// layouts: the draft names what the cluster has, featureless GPU nodes get a series without
// a constraint, the draft passes `tuneplane doctor`, an existing file is never overwritten,
// and a refused token is exit 4.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_fixture.h"
#include "common/jwt.h"
#include "support/os_user.h"
#include "support/serve_harness.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::cli {
namespace {

std::string readText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SiteInitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-site-init-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::create_directories(dir_ / "staging");
    std::ofstream(dir_ / "jwt.key") << "site-init-test-key-0123456789abcdef";
    writeToken("jwt.key", "slurm.jwt");
  }
  void TearDown() override {
    sim_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A token for `user` (this process's by default), signed with the key in `key_file`, that
  // user's alone (mode 0600), as serve and doctor require.
  void writeToken(const std::string& key_file, const std::string& token_file,
                  const std::string& user = test::currentUser()) {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    std::ofstream(dir_ / token_file)
        << "SLURM_JWT=" << jwt::mintHs256({user, now, now + 3600}, readText(dir_ / key_file))
        << "\n";
    std::filesystem::permissions(dir_ / token_file, std::filesystem::perms::owner_read |
                                                        std::filesystem::perms::owner_write);
  }

  // The simulator on `cluster` (its YAML cluster file; empty: the default test cluster).
  void startSim(const std::string& cluster) {
    std::vector<std::string> args;
    if (!cluster.empty()) {
      std::ofstream(dir_ / "cluster.yaml") << cluster;
      args = {"--cluster", (dir_ / "cluster.yaml").string()};
    }
    sim_ = test::SlurmSimProcess::start(dir_, (dir_ / "jwt.key").string(), args);
    ASSERT_NE(sim_, nullptr);
  }

  test::ProcessResult tuneplane(std::vector<std::string> args) {
    args.insert(args.begin(), (test::binaryDir() / "src/cli/tuneplane").string());
    return test::runProcess(args, {.scratch = dir_});
  }

  test::ProcessResult siteInit(const std::string& output) {
    return tuneplane({"site", "init", "--slurm", sim_->url(), "--token-file",
                      (dir_ / "slurm.jwt").string(), "--staging-root", (dir_ / "staging").string(),
                      "--runtime", "apptainer", "-o", (dir_ / output).string()});
  }

  // The operator's next step: the runtime registry beside the draft (site init drafts it
  // empty) lists an image.
  void expectDoctorPasses(const std::string& site) {
    const std::string image = "a stand-in for a SIF image\n";
    std::ofstream(dir_ / "demo.sif") << image;
    std::ofstream(dir_ / "runtimes.yaml")
        << "runtimes:\n  - id: custom-demo\n    format: sif\n    path: "
        << (dir_ / "demo.sif").string() << "\n    sha256: " << testing::sha256Of(image)
        << "\n    frameworks: [custom]\n";
    const auto doctor = tuneplane({"doctor", "--site", (dir_ / site).string()});
    EXPECT_EQ(doctor.exit_code, 0) << doctor.out << doctor.err << readText(dir_ / site);
  }

  std::filesystem::path dir_;
  std::unique_ptr<test::SlurmSimProcess> sim_;
};

TEST_F(SiteInitTest, TheTestClusterDraftPassesDoctor) {
  startSim("");
  const auto result = siteInit("site.yaml");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string draft = readText(dir_ / "site.yaml");
  EXPECT_NE(draft.find("slurm_constraint: \"h100\""), std::string::npos) << draft;
  EXPECT_NE(draft.find("gres_type: \"a100\""), std::string::npos) << draft;
  EXPECT_NE(draft.find("user: \"" + test::currentUser() + "\"  # the token's sun claim"),
            std::string::npos)
      << draft;
  EXPECT_EQ(draft.find("SLURM_JWT"), std::string::npos);  // the path, never the token
  expectDoctorPasses("site.yaml");
}

TEST_F(SiteInitTest, GpuNodesWithoutAFeatureGetNoConstraintAndDoctorWarnsOnly) {
  startSim(R"(name: tp
nodes:
  - {name: g1, cpus: 8, memory_mb: 65536, gpus: 4, gpu_type: l40s}
  - {name: g2, cpus: 8, memory_mb: 65536, gpus: 4, gpu_type: l40s}
  - {name: g3, cpus: 8, memory_mb: 65536, gpus: 2, gpu_type: a100, features: [a100, ib]}
  - {name: c1, cpus: 4, memory_mb: 8192}
partitions:
  - {name: accel, nodes: "g[1-3]"}
  - {name: batch, nodes: [c1], default: true}
)");
  const auto result = siteInit("site.yaml");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string draft = readText(dir_ / "site.yaml");
  EXPECT_NE(draft.find("gpu: \"accel\""), std::string::npos) << draft;
  EXPECT_NE(draft.find("cpu: \"batch\""), std::string::npos) << draft;
  EXPECT_NE(draft.find("slurm_constraint: \"a100&ib\""), std::string::npos) << draft;
  EXPECT_NE(draft.find("- name: \"l40s\"  # nodes g1, g2\n    # No slurm_constraint"),
            std::string::npos)
      << draft;
  expectDoctorPasses("site.yaml");
}

TEST_F(SiteInitTest, ACpuOnlyClusterDraftsNoSeries) {
  startSim(R"(name: tp
nodes:
  - {name: c1, cpus: 4, memory_mb: 8192}
  - {name: c2, cpus: 4, memory_mb: 8192}
partitions:
  - {name: batch, nodes: "c[1-2]", default: true}
)");
  const auto result = siteInit("site.yaml");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(readText(dir_ / "site.yaml").find("gpu_series: []"), std::string::npos);
  expectDoctorPasses("site.yaml");
}

TEST_F(SiteInitTest, TheDraftIsCompleteAndReadableByTheJobUserAlone) {
  startSim("");
  const auto result = siteInit("site.yaml");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string draft = readText(dir_ / "site.yaml");
  EXPECT_NE(draft.find("server:"), std::string::npos) << draft;
  EXPECT_NE(draft.find("  listen: \"127.0.0.1:8080\""), std::string::npos) << draft;
  EXPECT_NE(draft.find("  db: \"/var/lib/tuneplane/tuneplane.db\""), std::string::npos) << draft;
  EXPECT_NE(draft.find("tuneplane token add USER"), std::string::npos) << draft;
  EXPECT_NE(draft.find("    PATH: /usr/local/bin:/usr/bin:/bin"), std::string::npos) << draft;
  // The registry beside it: empty, with an example in comments.
  const std::string registry = readText(dir_ / "runtimes.yaml");
  EXPECT_NE(registry.find("\nruntimes: []\n"), std::string::npos) << registry;
  for (const char* file : {"site.yaml", "runtimes.yaml"}) {
    const auto mode = std::filesystem::status(dir_ / file).permissions();
    EXPECT_EQ(static_cast<int>(mode), 0640) << file;
  }
  EXPECT_NE(result.err.find("tuneplane token add USER --site"), std::string::npos) << result.err;
  // Doctor runs on the draft as it is: an empty registry is a warning, not a failure.
  const auto doctor = tuneplane({"doctor", "--site", (dir_ / "site.yaml").string()});
  EXPECT_EQ(doctor.exit_code, 0) << doctor.out << doctor.err;
  EXPECT_NE(doctor.out.find("lists no runtime"), std::string::npos) << doctor.out;

  // A second draft beside the first keeps the operator's registry.
  std::ofstream(dir_ / "runtimes.yaml") << "runtimes: []  # mine\n";
  const auto again = siteInit("site2.yaml");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("kept the existing"), std::string::npos) << again.err;
  EXPECT_EQ(readText(dir_ / "runtimes.yaml"), "runtimes: []  # mine\n");
}

TEST_F(SiteInitTest, AsRootTheFilesGoToTheJobUsersGroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: it gives the files to another group";
  startSim("");
  writeToken("jwt.key", "slurm.jwt", "nobody");
  const auto result = siteInit("site.yaml");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "site.yaml").c_str(), &st), 0);
  const passwd* nobody = ::getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, nobody->pw_gid);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  // The token file is root's, not nobody's: named with the command that fixes it.
  EXPECT_NE(result.err.find("chown nobody: " + (dir_ / "slurm.jwt").string()), std::string::npos)
      << result.err;
}

TEST_F(SiteInitTest, NeverOverwritesAnExistingFile) {
  startSim("");
  std::ofstream(dir_ / "site.yaml") << "# the operator's\n";
  const auto result = siteInit("site.yaml");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("exists; not overwritten"), std::string::npos) << result.err;
  EXPECT_EQ(readText(dir_ / "site.yaml"), "# the operator's\n");
}

TEST_F(SiteInitTest, ARefusedTokenIsExit4AndWritesNothing) {
  startSim("");
  std::ofstream(dir_ / "other.key") << "another-key-entirely-0123456789abcdef";
  writeToken("other.key", "slurm.jwt");
  const auto result = siteInit("site.yaml");
  EXPECT_EQ(result.exit_code, 4) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "site.yaml"));
}

}  // namespace
}  // namespace tuneplane::cli
