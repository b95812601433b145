// `tuneplane doctor` through the built binary against the in-process slurmrestd simulator:
// a healthy site passes (exit 0); a wrong JWT key, an expired token file, a missing
// partition, a constraint no node has, a tampered artifact, a missing staging root, another
// job user and an absent slurmrestd are each reported with their reason (exit 1); a site
// that cannot be loaded exits 2. No token ever appears in the output. Each partition check says
// what a preempted job gets there (issue 47).
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "common/jwt.h"
#include "doctor_fixture.h"
#include "support/doctor_report.h"

namespace tuneplane::cli {
namespace {

using nlohmann::json;
using testing::currentUser;
using testing::kDoctorKey;
using testing::kOtherKey;
using testing::readFile;
using testing::RunResult;
using testing::sha256Of;
using testing::SiteParts;
using testing::writeFile;

using DoctorCommandTest = testing::DoctorFixture;

TEST_F(DoctorCommandTest, AHealthySitePassesAsJsonAndText) {
  const std::string site = writeSite(healthy());
  const json doc = doctorJson(site, kExitOk);
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["passed"], true);
  EXPECT_EQ(doc["site"], site);
  const std::vector<std::string> names = test::expectEveryCheckOk(doc);
  EXPECT_EQ(names,
            (std::vector<std::string>{"slurmrestd", "slurmctld", "api_version", "token",
                                      "credential/slurm.jwt_key_file", "slurm/identity",
                                      "partition/gpu", "partition/cpu", "gpu_series/h100",
                                      "gpu_series/any", "staging/root", "staging/user",
                                      "staging/filesystem", "registry", "artifact/custom-doctor"}));
  expectCheck(doc, "slurmrestd", "ok", "cluster lab, Slurm 26.05.3");
  expectCheck(doc, "api_version", "ok", "data_parser/v0.0.45");
  expectCheck(doc, "token", "ok", "each valid for 10m");
  expectCheck(doc, "gpu_series/h100", "ok", "selects gpu1 in partition gpu, with GRES gpu:h100");
  expectCheck(doc, "gpu_series/any", "ok", "selects gpu1, gpu2");
  expectCheck(doc, "staging/user", "ok", "TunePlane runs as " + currentUser());
  EXPECT_EQ(check(doc, "staging/filesystem")["details"]["method"], "statfs(2) f_type");
  // The probe file is gone again.
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/staging"));

  const RunResult text = doctor(site);
  EXPECT_EQ(text.exit_code, kExitOk) << text.out << text.err;
  EXPECT_NE(text.out.find("  ok    slurmrestd "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("15 checks: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("— passed"), std::string::npos) << text.out;
  EXPECT_EQ(text.err, "");  // no progress bar and no log lines when stderr is not a terminal
  EXPECT_EQ(sim_->jobCount(), 0u);  // nothing was submitted
}

TEST_F(DoctorCommandTest, AWarningPassesUnlessStrict) {
  SiteParts parts = healthy();
  parts.series += "  - {name: l40s, gpus_per_node: 4, gres_type: l40s}\n";
  const std::string site = writeSite(parts);
  const json doc = doctorJson(site, kExitOk);
  expectCheck(doc, "gpu_series/l40s", "warn", "has no slurm_constraint");
  const json strict = doctorJson(site, kExitFailure, {"--strict"});
  EXPECT_EQ(strict["passed"], false);
  EXPECT_EQ(strict["strict"], true);
}

TEST_F(DoctorCommandTest, AWrongJwtKeyFailsTheTokenCheck) {
  writeFile(dir_ + "/other.key", kOtherKey);
  SiteParts parts = healthy();
  parts.auth = "  jwt_key_file: other.key\n";
  const json doc = doctorJson(writeSite(parts), kExitFailure);
  expectCheck(doc, "token", "fail", "slurmrestd refused the token");
  expectCheck(doc, "slurmrestd", "ok", "refused the token");
  expectCheck(doc, "partition/gpu", "skip", "refused the token");
  EXPECT_NE(check(doc, "token")["fix"].get<std::string>().find("AuthAltParameters=jwt_key"),
            std::string::npos);
}

TEST_F(DoctorCommandTest, TokenFilesReportTheirExpiryAndAnExpiredOneFails) {
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  SiteParts parts = healthy();
  parts.auth = "  token_file: doctor.jwt\n";
  const std::string site = writeSite(parts);

  testing::writeSecret(
      dir_ + "/doctor.jwt",
      "SLURM_JWT=" + jwt::mintHs256({currentUser(), now, now + 3 * 86400 + 1800}, kDoctorKey) +
          "\n");
  const json valid = doctorJson(site, kExitOk);
  expectCheck(valid, "token", "ok", "valid for 3d (until");  // half an hour of slack
  expectCheck(valid, "token", "ok", "accepted by slurmrestd");

  testing::writeSecret(dir_ + "/doctor.jwt",
                       jwt::mintHs256({currentUser(), now - 7200, now - 3600}, kDoctorKey));
  const json expired = doctorJson(site, kExitFailure);
  expectCheck(expired, "token", "fail", "expired 1h");
  EXPECT_NE(check(expired, "token")["fix"].get<std::string>().find("scontrol token"),
            std::string::npos);

  // Not a JWT at all (the fixture's sentinel): reported, never printed.
  testing::writeSecret(dir_ + "/doctor.jwt", testing::kSentinelToken);
  const RunResult r = doctor(site);
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_NE(r.out.find("does not hold a JWT"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(testing::kSentinelToken), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find(testing::kSentinelToken), std::string::npos) << r.err;
}

TEST_F(DoctorCommandTest, AMissingPartitionIsNamedWithThoseThatExist) {
  SiteParts parts = healthy();
  parts.cpu_partition = "batch";
  const json doc = doctorJson(writeSite(parts), kExitFailure);
  expectCheck(
      doc, "partition/batch", "fail",
      "partition 'batch' (named by partitions.cpu) does not exist on lab; it has: gpu, cpu");
  expectCheck(doc, "partition/gpu", "ok", "exists");
}

TEST_F(DoctorCommandTest, AConstraintNoNodeHasFails) {
  SiteParts parts = healthy();
  parts.series = "  - {name: v100, slurm_constraint: \"v100&ib\", gpus_per_node: 2}\n";
  const json doc = doctorJson(writeSite(parts), kExitFailure);
  expectCheck(doc, "gpu_series/v100", "fail", "names a feature no node has (v100)");
  EXPECT_EQ(check(doc, "gpu_series/v100")["details"]["unknown_features"], json::array({"v100"}));
}

TEST_F(DoctorCommandTest, ATamperedArtifactFailsWithItsDigest) {
  const std::string site = writeSite(healthy());
  writeFile(sif_, "tampered after the registry pinned it\n");
  const json doc = doctorJson(site, kExitFailure);
  expectCheck(doc, "artifact/custom-doctor", "fail", "[artifact.sha256_mismatch]");
  const std::string actual = sha256Of(readFile(sif_));
  EXPECT_EQ(check(doc, "artifact/custom-doctor")["details"]["actual_sha256"], actual);
}

TEST_F(DoctorCommandTest, StagingProblemsAreReported) {
  SiteParts missing = healthy();
  missing.staging = "no-such-dir";
  const json doc = doctorJson(writeSite(missing), kExitFailure);
  expectCheck(doc, "staging/root", "fail", "does not exist");
  EXPECT_NE(check(doc, "staging/root")["fix"].get<std::string>().find("mkdir -p"),
            std::string::npos);
  expectCheck(doc, "staging/filesystem", "skip", "see staging/root");

  // Another job user than the one running TunePlane: the rule of issue 11.
  SiteParts other = healthy();
  other.user = currentUser() == "nobody" ? "root" : "nobody";
  const json mismatch = doctorJson(writeSite(other), kExitFailure);
  expectCheck(mismatch, "staging/user", "fail",
              "TunePlane runs as '" + currentUser() + "' (uid " + std::to_string(::geteuid()) +
                  ") but Slurm runs this site's jobs as slurm.user '" + other.user + "'");
  EXPECT_NE(check(mismatch, "staging/user")["fix"].get<std::string>().find("run TunePlane as '" +
                                                                           other.user + "'"),
            std::string::npos);

  SiteParts unknown = healthy();
  unknown.user = "tp-no-such-user";
  const json nobody = doctorJson(writeSite(unknown), kExitFailure);
  expectCheck(nobody, "staging/user", "fail", "'tp-no-such-user'");
}

TEST_F(DoctorCommandTest, AnAbsentSlurmrestdFailsAndSkipsWhatDependsOnIt) {
  SiteParts parts = healthy();
  parts.url = "http://127.0.0.1:1";
  const json doc = doctorJson(writeSite(parts), kExitFailure);
  expectCheck(doc, "slurmrestd", "fail", "cannot reach slurmrestd at http://127.0.0.1:1");
  for (const char* name : {"slurmctld", "api_version", "partition/gpu", "gpu_series/h100"}) {
    expectCheck(doc, name, "skip", "did not answer");
  }
  expectCheck(doc, "token", "ok", "not confirmed");
  expectCheck(doc, "staging/root", "ok", "probe file");
  expectCheck(doc, "artifact/custom-doctor", "ok", "matches");
}

TEST_F(DoctorCommandTest, ASiteThatCannotBeLoadedExitsTwo) {
  const RunResult missing = doctor(dir_ + "/nope.yaml");
  EXPECT_EQ(missing.exit_code, kExitInvalid) << missing.out << missing.err;
  EXPECT_NE(missing.err.find("[cli.file_unreadable]"), std::string::npos) << missing.err;

  const RunResult bad_output = doctor(writeSite(healthy()), {"-o", "yaml"});
  EXPECT_EQ(bad_output.exit_code, kExitInvalid);
  EXPECT_NE(bad_output.err.find("[cli.invalid_output]"), std::string::npos) << bad_output.err;

  const RunResult none = run({"doctor"});
  EXPECT_EQ(none.exit_code, kExitInvalid);
  EXPECT_NE(none.err.find("[cli.no_site]"), std::string::npos) << none.err;
}

TEST_F(DoctorCommandTest, HelpListsTheOptionsAndTheExitCodes) {
  const RunResult r = run({"doctor", "--help"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  for (const char* part : {"--site", "--output", "--strict", "Exit codes: 0", "submitting"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " in\n" << r.out;
  }
}

TEST_F(DoctorCommandTest, ABrokenRegistryIsReportedAndTheRestStillChecked) {
  writeFile(dir_ + "/doctor-runtimes.yaml", "runtimes: [{id: x}]\n");
  const json doc = doctorJson(writeSite(healthy()), kExitFailure);
  expectCheck(doc, "registry", "fail", "cannot use the runtime registry");
  expectCheck(doc, "slurmrestd", "ok", "answered");
}

// Issue 47: each partition check says what a preempted job gets there, from the cluster's
// settings (GET /conf) where the version has them — the simulator preempts nothing by itself,
// so preempt/none — and on v0.0.44, which has no /conf, from the partition alone.
class DoctorPreemptionTest : public testing::DoctorFixture {
 protected:
  // The simulator again, serving only `versions` (v0.0.44 alone: Slurm 25.11.7).
  void restartServing(std::vector<std::string> versions) {
    sim_.reset();
    sim::SimulatorOptions options;
    options.jwt_key_file = dir_ + "/jwt.key";
    options.cluster_file = dir_ + "/cluster.yaml";
    options.state_dir = dir_ + "/sim";
    options.api_versions = std::move(versions);
    auto started = sim::Simulator::start(options);
    ASSERT_TRUE(started.has_value()) << started.error().describe();
    sim_ = std::move(*started);
  }
};

TEST_F(DoctorPreemptionTest, OnV0045EachPartitionSaysJobsAreNotPreemptedUnderPreemptNone) {
  const std::string site = writeSite(healthy());
  const json doc = doctorJson(site, kExitOk);
  for (const char* name : {"partition/gpu", "partition/cpu"}) {
    expectCheck(doc, name, "ok", "; jobs here are not preempted (PreemptType preempt/none)");
    const json details = check(doc, name)["details"];
    EXPECT_EQ(details["cluster_preemption"]["preempt_type"], "preempt/none") << details.dump(2);
    EXPECT_EQ(details["cluster_preemption"]["preempt_mode"], json({"DISABLED"}));
    EXPECT_EQ(details["preempt_mode"], json({"CLUSTER_GLOBAL"}));
  }
  const auto text = doctor(site);
  EXPECT_NE(text.out.find("partition 'cpu' exists (UP, 1 node: cpu1); jobs here are not "
                          "preempted (PreemptType preempt/none)"),
            std::string::npos)
      << text.out;
}

TEST_F(DoctorPreemptionTest, OnV0044TheCheckNamesBothOutcomesAndWhy) {
  restartServing({"v0.0.44"});
  if (HasFatalFailure()) return;
  const std::string site = writeSite(healthy());
  // v0.0.44 is a warning of its own (api_version); the partitions stay ok.
  const json doc = doctorJson(site, kExitOk);
  expectCheck(doc, "api_version", "warn", "no GET /conf");
  for (const char* name : {"partition/gpu", "partition/cpu"}) {
    // The simulator's partitions have GraceTime 0: no warning whatever the cluster's settings.
    expectCheck(doc, name, "ok", "gets no warning: GraceTime 0 ends it at once");
    EXPECT_TRUE(check(doc, name)["details"]["cluster_preemption"].is_null());
  }
}

}  // namespace
}  // namespace tuneplane::cli
