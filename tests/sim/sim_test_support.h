// Shared helpers of the simulator tests: a temp dir, a key file, a Simulator started on a
// loopback port 0 with a short epilog and time scale, fresh tokens, an HTTP client, and a
// bounded poll ("until the simulator reports X", never a fixed sleep as the assertion).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/jwt.h"
#include "sim/simulator.h"
#include "support/test_files.h"
#include "support/wait.h"

namespace tuneplane::sim::testing {

using nlohmann::json;
using test::readFile;  // support/test_files.h

inline constexpr const char* kApi = "/slurm/v0.0.45";

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tp-simtest-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline int64_t unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The JSON kind of a value, for shape comparisons.
inline std::string jsonKind(const json& j) {
  if (j.is_object()) return "object";
  if (j.is_array()) return "array";
  if (j.is_string()) return "string";
  if (j.is_boolean()) return "boolean";
  if (j.is_null()) return "null";
  if (j.is_number_float()) return "float";
  return "integer";
}

// Differences in shape between the real answer and the simulator's, as readable paths.
inline void shapeDiff(const json& real, const json& sim, const std::string& path,
                      std::vector<std::string>& out) {
  if (jsonKind(real) != jsonKind(sim)) {
    out.push_back(path + ": " + jsonKind(real) + " vs " + jsonKind(sim));
    return;
  }
  if (real.is_object()) {
    for (const auto& [k, v] : real.items()) {
      if (!sim.contains(k)) {
        out.push_back(path + "/" + k + ": missing");
      } else {
        shapeDiff(v, sim[k], path + "/" + k, out);
      }
    }
    for (const auto& [k, v] : sim.items())
      if (!real.contains(k)) out.push_back(path + "/" + k + ": extra");
  } else if (real.is_array() && !real.empty() && !sim.empty()) {
    for (size_t i = 0; i < sim.size(); ++i)
      shapeDiff(real.size() == sim.size() ? real[i] : real[0], sim[i],
                path + "[" + std::to_string(i) + "]", out);
  }
}

class SimFixture : public ::testing::Test {
 protected:
  static constexpr const char* kKey = "0123456789abcdef0123456789abcdef-test-key";

  void SetUp() override { startSim(); }

  virtual void tune(SimulatorOptions& options) { (void)options; }
  // The clock the simulator runs on (SimulatorOptions::clock): null is real time; a fixture
  // that drives a FakeClock returns it, and the simulator's epilogs, time limits and timed
  // faults then pass when the test advances it.
  virtual const Clock* simulatorClock() { return nullptr; }
  // What happens between two polls of waitFor: a fixture on a driven clock advances it (the
  // simulator's epilogs and purges then pass); on real time, nothing.
  virtual void letTimePass() {}
  // Waits until `probe` holds, letting the simulator's time pass between polls.
  bool waitFor(const std::function<bool()>& probe,
               std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    return tuneplane::test::waitUntil(
        probe, {limit, std::chrono::milliseconds(20), [this] { letTimePass(); }});
  }

  void startSim() {
    key_file_ = dir_.path() + "/jwt.key";
    std::ofstream(key_file_) << kKey;
    jobs_dir_ = dir_.path() + "/jobs";
    std::filesystem::create_directories(jobs_dir_);
    SimulatorOptions options;
    options.jwt_key_file = key_file_;
    options.state_dir = dir_.path() + "/state";
    options.epilog = std::chrono::milliseconds(300);
    options.minute = std::chrono::milliseconds(1000);
    options.kill_wait = std::chrono::milliseconds(500);
    options.clock = simulatorClock();
    // On real time a "minute" is shrunk so a time limit is reached soon; on a driven clock it
    // is a true minute: the test's ticks run its time faster than the scripts' real seconds,
    // and a shrunk minute would end a job whose real process was merely slow to start.
    if (options.clock) options.minute = std::chrono::minutes(1);
    tune(options);
    auto started = Simulator::start(options);
    ASSERT_TRUE(started.has_value()) << started.error().describe();
    sim_ = std::move(*started);
    client_ = std::make_unique<httplib::Client>(sim_->baseUrl());
    client_->set_connection_timeout(10, 0);  // bounds on a hung simulator, not timing checks
    client_->set_read_timeout(30, 0);
    client_->set_write_timeout(30, 0);
  }

  std::string token(const std::string& user = "tpuser", int64_t lifetime = 600) const {
    const int64_t now = unixNow();
    return jwt::mintHs256({user, now, now + lifetime}, kKey);
  }
  httplib::Headers auth(const std::string& tok = "") const {
    return {{"X-SLURM-USER-NAME", "tpuser"}, {"X-SLURM-USER-TOKEN", tok.empty() ? token() : tok}};
  }

  httplib::Result get(const std::string& path) {
    return client_->Get((api_ + path).c_str(), auth());
  }
  httplib::Result post(const std::string& path, const json& body) {
    return client_->Post((api_ + path).c_str(), auth(), body.dump(), "application/json");
  }
  httplib::Result del(const std::string& path) {
    return client_->Delete((api_ + path).c_str(), auth());
  }
  // A DELETE as SlurmUser (an administrator's scancel): any user's job, as on a real cluster
  // only an operator may cancel another user's (the simulator refuses others: 2002).
  httplib::Result delAsSlurmUser(const std::string& path) {
    return client_->Delete((api_ + path).c_str(), {{"X-SLURM-USER-NAME", "slurm"},
                                                   {"X-SLURM-USER-TOKEN", token("slurm")}});
  }

  // A minimal valid single-job submit body.
  json jobBody(const std::string& script, json extra = json::object()) const {
    json job = {{"name", "t"},
                {"current_working_directory", jobs_dir_},
                {"environment", json::array({"PATH=/usr/bin:/bin", "HOME=" + jobs_dir_})},
                {"standard_output", jobs_dir_ + "/%x-%j.out"},
                {"script", "#!/bin/bash\n" + script + "\n"}};
    for (auto& [k, v] : extra.items()) job[k] = v;
    return {{"job", job}};
  }

  // Submits and returns the job id (fails the test on a non-200).
  int submit(const json& body) {
    auto res = post("/job/submit", body);
    EXPECT_TRUE(res) << "no response";
    if (!res) return 0;
    EXPECT_EQ(res->status, 200) << res->body;
    const json j = json::parse(res->body, nullptr, false);
    return j.is_object() ? j.value("job_id", 0) : 0;
  }

  json job(const std::string& id) {
    auto res = get("/job/" + id);
    if (!res || res->status != 200) return json();
    return json::parse(res->body)["jobs"];
  }
  json state(const std::string& id) {
    const json jobs = job(id);
    return jobs.is_array() && !jobs.empty() ? jobs[0]["job_state"] : json();
  }
  bool waitState(const std::string& id, const json& wanted,
                 std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    return waitFor([&] { return state(id) == wanted; }, limit);
  }
  TempDir dir_;
  std::string api_ = kApi;  // the routes get/post/del use (tune() may serve another version)
  std::string key_file_;
  std::string jobs_dir_;
  std::unique_ptr<Simulator> sim_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace tuneplane::sim::testing
