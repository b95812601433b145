// The site `tuneplane doctor` is tested against: an in-process slurmrestd simulator with a
// small cluster file (gpu1 h100+ib, gpu2 a100, cpu1), a JWT key, a one-artifact registry, a
// staging root, and a site file built from parts each test may change (SiteParts holds the
// values of a healthy site). Runs the built binary and reads its `-o json` document.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "sim/simulator.h"

namespace tuneplane::cli::testing {

// A credential file of a test site: this user's alone (mode 0600), as serve and doctor's
// credential/<field> checks require.
inline void writeSecret(const std::string& path, const std::string& content) {
  writeFile(path, content);
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

inline constexpr const char* kDoctorKey = "0123456789abcdef0123456789abcdef-cli-doctor-key";
inline constexpr const char* kOtherKey = "fedcba9876543210fedcba9876543210-not-the-key";

// gpu1 has h100 and ib (for an `a&b` constraint); gpu2 a100; cpu1 none.
inline constexpr const char* kDoctorCluster =
    "name: lab\n"
    "nodes:\n"
    "  - {name: gpu1, cpus: 8, gpus: 2, gpu_type: h100, features: [h100, ib]}\n"
    "  - {name: gpu2, cpus: 8, gpus: 2, gpu_type: a100, features: [a100]}\n"
    "  - {name: cpu1, cpus: 8}\n"
    "partitions:\n"
    "  - {name: gpu, nodes: \"gpu[1-2]\"}\n"
    "  - {name: cpu, nodes: [cpu1], default: true}\n";

// Every part of a site file the tests change, with the values of a healthy site.
struct SiteParts {
  std::string url;
  std::string user = currentUser();
  std::string auth = "  jwt_key_file: jwt.key\n";
  std::string cpu_partition = "cpu";
  std::string series =
      "  - {name: h100, slurm_constraint: \"h100&ib\", gpus_per_node: 2, gres_type: h100}\n"
      "  - {name: any, slurm_constraint: \"a100|h100\", gpus_per_node: 2}\n";
  std::string staging = "staging";
};

class DoctorFixture : public CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_FALSE(currentUser().empty());
    writeSecret(dir_ + "/jwt.key", kDoctorKey);
    writeFile(dir_ + "/cluster.yaml", kDoctorCluster);
    std::filesystem::create_directories(dir_ + "/sim");
    sim::SimulatorOptions options;
    options.jwt_key_file = dir_ + "/jwt.key";
    options.cluster_file = dir_ + "/cluster.yaml";
    options.state_dir = dir_ + "/sim";
    auto started = sim::Simulator::start(options);
    ASSERT_TRUE(started.has_value()) << started.error().describe();
    sim_ = std::move(*started);

    sif_ = dir_ + "/artifacts/custom-doctor.sif";
    writeFile(sif_, "a stand-in SIF image for doctor\n");
    writeFile(dir_ + "/doctor-runtimes.yaml",
              "runtimes:\n"
              "  - id: custom-doctor\n"
              "    format: sif\n"
              "    path: " +
                  sif_ + "\n    sha256: " + sha256Of(readFile(sif_)) +
                  "\n    frameworks: [custom]\n");
  }

  void TearDown() override {
    sim_.reset();
    CliFixture::TearDown();
  }

  SiteParts healthy() const {
    SiteParts parts;
    parts.url = sim_->baseUrl();
    return parts;
  }

  std::string writeSite(const SiteParts& p, const std::string& name = "doctor-site.yaml") const {
    writeFile(dir_ + "/" + name,
              "slurm:\n"
              "  url: " +
                  p.url +
                  "\n"
                  "  user: " +
                  p.user + "\n" + p.auth +
                  "  token_lifespan: 10m\n"
                  "partitions:\n"
                  "  gpu: gpu\n"
                  "  cpu: " +
                  p.cpu_partition +
                  "\n"
                  "gpu_series:\n" +
                  p.series +
                  "container_runtime: apptainer\n"
                  "staging_root: " +
                  dir_ + "/" + p.staging +
                  "\n"
                  "runtime_registry_file: doctor-runtimes.yaml\n");
    return dir_ + "/" + name;
  }

  RunResult doctor(const std::string& site, std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"doctor", "--site", site};
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  }

  // `doctor -o json`, parsed; checks by name.
  nlohmann::json doctorJson(const std::string& site, int expected_exit,
                            std::vector<std::string> extra = {}) const {
    extra.insert(extra.end(), {"-o", "json"});
    const RunResult r = doctor(site, extra);
    EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
    EXPECT_EQ(r.out.find("eyJ"), std::string::npos) << "a token in the output:\n" << r.out;
    EXPECT_EQ(r.err.find("eyJ"), std::string::npos) << "a token on stderr:\n" << r.err;
    const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_TRUE(doc.is_object()) << r.out;
    return doc.is_object() ? doc : nlohmann::json::object();
  }

  static nlohmann::json check(const nlohmann::json& doc, const std::string& name) {
    for (const auto& c : doc.value("checks", nlohmann::json::array()))
      if (c.value("name", "") == name) return c;
    ADD_FAILURE() << "no check " << name << " in " << doc.dump(2);
    return nlohmann::json::object();
  }

  static void expectCheck(const nlohmann::json& doc, const std::string& name,
                          const std::string& status, const std::string& says) {
    const nlohmann::json c = check(doc, name);
    EXPECT_EQ(c.value("status", ""), status) << c.dump(2);
    EXPECT_NE(c.value("message", "").find(says), std::string::npos) << c.dump(2);
    if (status == "fail" || status == "warn") {
      EXPECT_FALSE(c.value("fix", "").empty()) << c.dump(2);
    }
  }

  std::unique_ptr<sim::Simulator> sim_;
  std::string sif_;
};

}  // namespace tuneplane::cli::testing
