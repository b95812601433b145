// Live: `tuneplane doctor` (the built binary) against the real slurmrestd named by
// TUNEPLANE_LIVE_*, with a site file for the test cluster (partitions gpu and cpu, GPU
// series h100 and a100 on gpu1 and gpu2, a staging root in the shared dir, one artifact made
// on the spot). Every check must pass: exit 0, no check failed or skipped, the token
// accepted by slurmrestd, and no token in the output. A staging root the nodes share may
// still be on a local disk of this one-host cluster: that warning is allowed. Skipped
// unless TUNEPLANE_LIVE_* is set, and unless this process is root or the live user (the job
// user must be able to write what TunePlane stages). With TUNEPLANE_LIVE_IDENTITY=per_user
// (live_identity.h) the site is per_user, as serve would run it: root with SlurmUser's token, a
// server: token mapped to the live user, whose one-time step is done; doctor then checks the
// user too (slurm/user/<user>, staging/user/<user>).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "live_config.h"
#include "live_identity.h"
#include "live_site.h"
#include "staging/stager.h"
#include "support/doctor_report.h"
#include "support/serve_harness.h"
#include "support/subprocess.h"
#include "support/test_files.h"
#include "support/test_paths.h"

namespace tuneplane::live {
namespace {

using nlohmann::json;

using test::writeFile;  // support/test_files.h

class DoctorLive : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = liveConfig();
    if (!config) GTEST_SKIP() << kSkipReason;
    live_ = *config;
    // As root, stages for the live user through its group (issue 11), or per_user in
    // users/<user>; as the live user, needs neither.
    configureIdentity(live_, Staging::kForTheLiveUser, identity_);
    if (IsSkipped() || HasFatalFailure()) return;
    dir_ = live_.shared_dir + "/tp-live-doctor-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_ + "/staging");
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
    ASSERT_EQ(::chmod((dir_ + "/staging").c_str(), 0755), 0);
    if (identity_.per_user) {
      const Status made = makeUserStagingDir(dir_ + "/staging", live_.user);
      ASSERT_TRUE(made) << made.error().describe();
    }
  }
  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  Live live_;
  LiveIdentity identity_;
  std::string dir_;
};

TEST_F(DoctorLive, TheTestClusterPassesEveryCheck) {
  const std::string image = "a stand-in SIF image for the live doctor run\n";
  writeFile(dir_ + "/live-doctor.sif", image);
  writeFile(dir_ + "/runtimes.yaml",
            "runtimes:\n"
            "  - id: live-doctor\n"
            "    format: sif\n"
            "    path: " +
                dir_ + "/live-doctor.sif\n    sha256: " + staging::sha256Hex(image) +
                "\n    frameworks: [custom]\n");
  const Live site = identity_.site(live_);
  const auto credential = privateCredential(site, dir_);
  ASSERT_TRUE(credential) << "cannot copy the credential into " << dir_;
  const std::string auth = credentialLine(site, *credential);
  // per_user: the API's one user, mapped to the live user (what doctor checks each user by).
  const std::string server = identity_.per_user
                                 ? "server:\n  tokens:\n    - {user: live, token_sha256: " +
                                       staging::sha256Hex("live-doctor-token") +
                                       ", unix_user: " + live_.user + "}\n"
                                 : "";
  writeFile(dir_ + "/site.yaml",
            "slurm:\n  url: " + site.url + "\n  api_version: " + site.api_version +
                "\n  user: " + site.user + "\n" + auth + identity_.slurmLines() +
                "partitions: {gpu: gpu, cpu: cpu}\n"
                "gpu_series:\n"
                "  - {name: h100, slurm_constraint: h100, gpus_per_node: 2, gres_type: h100}\n"
                "  - {name: a100, slurm_constraint: a100, gpus_per_node: 2, gres_type: a100}\n"
                "container_runtime: apptainer\n"
                "staging_root: " +
                dir_ + "/staging\n" + identity_.stagingSection() +
                "runtime_registry_file: runtimes.yaml\n" + server);

  const auto r = test::runProcess(
      {test::tuneplaneBinary(), "doctor", "--site", dir_ + "/site.yaml", "-o", "json"},
      {.scratch = dir_});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("eyJ"), std::string::npos) << "a token in the output";
  EXPECT_EQ(r.err.find("eyJ"), std::string::npos) << "a token on stderr";
  const json doc = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc["passed"], true) << doc.dump(2);
  nlohmann::json checks = nlohmann::json::array();
  for (auto c : doc["checks"]) {
    if (c["name"] == "token") {
      EXPECT_EQ(c["details"]["server"], "accepted") << c.dump(2);
    }
    if (c["name"] == "api_version") {
      // The version doctor finds is the one the cluster's release calls for; on one where
      // TunePlane degrades (v0.0.44) the check warns, saying what degrades: passed anyway.
      const nlohmann::json& api = c["details"]["api"];
      const std::string release = c["details"].value("release", "");
      EXPECT_EQ(api["version"], expectedApiVersion(live_, release)) << c.dump(2);
      if (!api["degradations"].empty()) {
        EXPECT_EQ(c["status"], "warn") << c.dump(2);
        c["status"] = "ok";
      }
    }
    checks.push_back(c);
  }
  nlohmann::json judged = doc;
  judged["checks"] = checks;
  const std::vector<std::string> names = test::expectEveryCheckOk(judged);
  // The credential checks (issue 39) judge the copy privateCredential made.
  const std::string credential_check =
      site.token_file ? "credential/slurm.token_file" : "credential/slurm.jwt_key_file";
  std::vector<std::string> expected = {"slurmrestd", "slurmctld",      "api_version",
                                       "token",      credential_check, "slurm/identity"};
  if (identity_.per_user) expected.push_back("slurm/user/" + live_.user);
  for (const char* name : {"partition/gpu", "partition/cpu", "gpu_series/h100", "gpu_series/a100",
                           "staging/root", "staging/user"}) {
    expected.push_back(name);
  }
  if (identity_.per_user) expected.push_back("staging/user/" + live_.user);
  for (const char* name : {"staging/filesystem", "registry", "artifact/live-doctor"}) {
    expected.push_back(name);
  }
  if (identity_.per_user) expected.push_back("database");  // the server: section's (not made yet)
  EXPECT_EQ(names, expected);
}

}  // namespace
}  // namespace tuneplane::live
