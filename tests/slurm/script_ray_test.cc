// Two GPU jobs whose scripts run at the same time on the same "nodes" (this host): heads,
// workers, waits and drivers all run for real as local processes, through the stub srun and
// apptainer in their executing mode (TP_STUB_EXEC) and a stand-in `ray` that binds on
// loopback every port it is given and joins only the head whose address and token it holds
// (tests/slurm/stubs/python/ray/_standin.py). Rendered as TunePlane renders them, both jobs
// reach their drivers, each driver sees only its own job's nodes, and no step meets a port
// in use. Rendered with pinned ports, the same run collides — which proves the test can see
// the bug it guards against.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slurm/script_checks.h"
#include "slurm/script_renderer.h"
#include "stubs/runtimes.h"
#include "stubs/test_shell.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "support/wait.h"

namespace tuneplane::slurm {
namespace {

using launch::Component;
using launch::LaunchRequest;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;
namespace sh = shell_test;

// Bounds a whole run of two jobs; they take a few seconds. Only a hang reaches it.
constexpr std::chrono::seconds kRunLimit{120};
const fs::path kStubs = test::sourceDir() / "tests/slurm/stubs";

// Waits until both jobs are up (or the other one has ended), so that the two clusters
// certainly live at the same time; then writes what it sees of its own cluster.
constexpr const char* kDriver = R"(import json, os, sys, time
import ray
out, barrier, me, other = sys.argv[1:5]
ray.init()
open(os.path.join(barrier, me + ".ready"), "w").close()
deadline = time.monotonic() + 60
while not any(os.path.exists(os.path.join(barrier, other + end)) for end in (".ready", ".exited")):
    if time.monotonic() > deadline:
        sys.exit("test driver: the other job neither came up nor ended")
    time.sleep(0.05)
with open(out, "w") as written:
    json.dump({"address": os.environ["RAY_ADDRESS"], "nodes": ray.nodes()}, written)
)";

// The three "nodes" both jobs share: n0 (both heads), n1 (component 0's workers), n2
// (component 1). Each `net` gives them other loopback addresses (10.N.0.x is bound as
// 127.N.0.x), so tests that run in parallel never share a node.
std::string hostIps(int net) {
  const std::string prefix = "10." + std::to_string(net) + ".0.";
  return "n0=" + prefix + "1,n1=" + prefix + "2,n2=" + prefix + "3";
}

class Job {
 public:
  Job(const fs::path& root, std::string name, std::string other, int slurm_job_id,
      catalog::ContainerRuntime runtime)
      : name_(std::move(name)),
        other_(std::move(other)),
        dir_(root / name_),
        slurm_job_id_(slurm_job_id) {
    for (const fs::path& d : {bin(), dir_ / "records", dir_ / "tmp", dir_ / "logs"}) {
      fs::create_directories(d);
    }
    for (const char* stub : {"srun", "apptainer", "scontrol", "getent", "ray"}) {
      fs::copy_file(kStubs / stub, bin() / stub);
      fs::permissions(bin() / stub, fs::perms::owner_all);
    }
    sh::writeFile(dir_ / "image", sh::kImageContent);
    sh::writeFile(root / "driver.py", kDriver);
    request_.job_name = "share-" + name_;
    request_.identity = {"job-" + name_, 1, "tp-" + name_};
    request_.framework = "llm/finetune";
    request_.container_runtime = runtime;
    request_.artifact = {(dir_ / "image").string(),
                         runtime == catalog::ContainerRuntime::kPyxis
                             ? catalog::ArtifactFormat::kSqsh
                             : catalog::ArtifactFormat::kSif,
                         sh::kImageSha256};
    request_.attempt_dir = dir_.string();
    request_.logs_dir = (dir_ / "logs").string();
    request_.output_dir = (dir_ / "out").string();
    request_.container_attempt_dir = "/attempt";
    request_.container_output_dir = "/output";
    request_.mounts = {{request_.attempt_dir, "/attempt", true}};
    request_.environment = {{"TUNEPLANE_JOB_ID", "job-" + name_}};
    request_.command = {"python3",
                        (root / "driver.py").string(),
                        driverOut().string(),
                        (root / "barrier").string(),
                        name_,
                        other_};
    Component trainers;
    trainers.pool_name = name_ + "-trainers";
    trainers.partition = "gpu";
    trainers.nodes = 2;
    trainers.gpus_per_node = 2;
    trainers.cpus_per_node = 4;
    Component evals = trainers;
    evals.pool_name = name_ + "-evals";
    evals.nodes = 1;
    request_.components = {trainers, evals};
    request_.uses_gpus = true;
    request_.ray.join_timeout_seconds = 60;
  }

  LaunchRequest& request() { return request_; }
  const std::string& name() const { return name_; }
  fs::path driverOut() const { return dir_ / "driver.json"; }
  std::string err() const { return sh::readFile(dir_ / "job.err"); }
  std::string out() const { return sh::readFile(dir_ / "job.out"); }

  bool start(int net) {
    if (!checkRenderable(request_)) return false;
    sh::writeFile(dir_ / "job.sh", renderBatchScript(request_));
    const std::vector<std::string> env = {"PATH=" + bin().string() + ":/usr/bin:/bin",
                                          "HOME=" + dir_.string(),
                                          "TMPDIR=" + (dir_ / "tmp").string(),
                                          "PYTHONPATH=" + (kStubs / "python").string(),
                                          "TP_STUB_DIR=" + (dir_ / "records").string(),
                                          "TP_STUB_EXEC=1",
                                          "TP_STUB_HOST_IPS=" + hostIps(net),
                                          "SLURM_JOB_ID=" + std::to_string(slurm_job_id_),
                                          "SLURM_JOB_NODELIST=n0,n1,n2",
                                          "SLURM_JOB_NODELIST_HET_GROUP_0=n0,n1",
                                          "SLURM_JOB_NODELIST_HET_GROUP_1=n2"};
    process_ = test::ChildProcess::start({"bash", "job.sh"},
                                         {.scratch = dir_, .env = env, .cwd = dir_}, "job");
    return process_ != nullptr;
  }

  test::ChildProcess& process() { return *process_; }

  // The token each recorded Ray step carried (they must all agree).
  std::set<std::string> tokens() const {
    std::set<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir_ / "records")) {
      if (entry.path().extension() != ".env") continue;
      for (const auto& var : sh::splitNul(sh::readFile(entry.path()))) {
        if (var.rfind("RAY_AUTH_TOKEN=", 0) == 0) out.insert(var.substr(15));
      }
    }
    return out;
  }

 private:
  fs::path bin() const { return dir_ / "bin"; }

  std::string name_;
  std::string other_;
  fs::path dir_;
  int slurm_job_id_;
  LaunchRequest request_;
  std::unique_ptr<test::ChildProcess> process_;
};

struct Outcome {
  std::map<std::string, std::optional<int>> exit_codes;
};

// Starts both jobs at once and waits for both (bounded); when one ends, the other's driver
// is told through the barrier directory, so neither waits for a job that has failed.
Outcome runSideBySide(const fs::path& root, Job& a, Job& b, int net) {
  fs::create_directories(root / "barrier");
  Outcome outcome;
  if (!a.start(net) || !b.start(net)) {
    ADD_FAILURE() << "a request cannot be rendered, or its script not started";
    return outcome;
  }
  std::vector<Job*> running = {&a, &b};
  test::waitUntil(
      [&] {
        for (auto it = running.begin(); it != running.end();) {
          if (auto code = (*it)->process().exitWithin(std::chrono::milliseconds(0))) {
            outcome.exit_codes[(*it)->name()] = code;
            sh::writeFile(root / "barrier" / ((*it)->name() + ".exited"), "");
            it = running.erase(it);
          } else {
            ++it;
          }
        }
        return running.empty();
      },
      kRunLimit);
  for (Job* job : running) {
    ADD_FAILURE() << "job " << job->name() << " still ran after " << kRunLimit.count() << " s";
    job->process().end();
    outcome.exit_codes[job->name()] = std::nullopt;
  }
  return outcome;
}

// What a driver wrote: its address and, per node, name → the custom resources it offers.
struct DriverView {
  std::string address;
  std::map<std::string, std::set<std::string>> nodes;
  int alive = 0;
};

DriverView readDriver(const Job& job) {
  DriverView view;
  const auto text = sh::readFile(job.driverOut());
  if (text.empty()) {
    ADD_FAILURE() << job.name() << "'s driver wrote nothing\n" << job.err();
    return view;
  }
  const auto j = nlohmann::json::parse(text);
  view.address = j["address"];
  for (const auto& node : j["nodes"]) {
    auto& resources = view.nodes[node["NodeName"].get<std::string>()];
    for (const auto& [key, _] : node["Resources"].items()) {
      if (key != "CPU" && key != "GPU") resources.insert(key);
    }
    view.alive += node["Alive"].get<bool>() ? 1 : 0;
  }
  return view;
}

void expectOwnNodesOnly(const Job& job) {
  const DriverView view = readDriver(job);
  const std::string trainers = job.name() + "-trainers";
  const std::string evals = job.name() + "-evals";
  EXPECT_EQ(view.alive, 3) << job.name();
  EXPECT_EQ(view.nodes, (std::map<std::string, std::set<std::string>>{
                            {"n0", {trainers}}, {"n1", {trainers}}, {"n2", {evals}}}))
      << job.name() << " sees a node that is not its own";
}

class SharedNodesTest : public ::testing::TestWithParam<catalog::ContainerRuntime> {};

TEST_P(SharedNodesTest, TwoJobsOnTheSameNodesEachReachTheirDriverWithOnlyTheirOwnNodes) {
  sh::TempDir root;
  Job a(root.path(), "a", "b", 1001, GetParam());
  Job b(root.path(), "b", "a", 1002, GetParam());
  const int net = GetParam() == catalog::ContainerRuntime::kPyxis ? 71 : 72;
  const Outcome outcome = runSideBySide(root.path(), a, b, net);
  for (Job* job : {&a, &b}) {
    SCOPED_TRACE(job->name());
    EXPECT_EQ(outcome.exit_codes.at(job->name()), 0) << job->out() << job->err();
    // A port found free can be taken before Ray binds it (the other job's Ray binds port 0
    // on the same node): then the head is started again with other ports, never failed.
    if (job->err().find("could not bind") != std::string::npos) {
      EXPECT_THAT(job->err(), HasSubstr("starting it again with other ports"));
    }
    expectOwnNodesOnly(*job);
    EXPECT_EQ(job->tokens().size(), 1u) << "every Ray step of a job carries its one token";
  }
  // The two heads really shared node n0: one address, two ports, two tokens.
  const std::string head_ip = "10." + std::to_string(net) + ".0.1:";
  const std::string address_a = readDriver(a).address;
  const std::string address_b = readDriver(b).address;
  EXPECT_EQ(address_a.rfind(head_ip, 0), 0u) << address_a;
  EXPECT_EQ(address_b.rfind(head_ip, 0), 0u) << address_b;
  EXPECT_NE(address_a, address_b);
  EXPECT_NE(a.tokens(), b.tokens());
}

INSTANTIATE_TEST_SUITE_P(Runtimes, SharedNodesTest, bothRuntimes(), runtimeName);

// Ports free on a node's loopback address right now, for a site that pins them.
std::vector<int> freePorts(const std::string& ip, std::size_t count) {
  std::vector<int> ports;
  std::vector<int> held;
  while (ports.size() < count) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, ip.c_str(), &addr.sin_addr);
    socklen_t length = sizeof addr;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), length) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
      close(fd);
      ADD_FAILURE() << "cannot bind on " << ip;
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
    held.push_back(fd);  // held until all are chosen, so they differ
  }
  for (int fd : held) close(fd);
  return ports;
}

// The bug this guards against, caught: with the ports a site pins, the second head on the
// node cannot bind them, and its job stops with kExitRayHeadFailed.
TEST(SharedNodesWithPinnedPorts, TheSecondHeadOnANodeCollidesAndItsJobStops) {
  sh::TempDir root;
  const int net = 73;
  const auto ports = freePorts("127." + std::to_string(net) + ".0.1", 7);
  ASSERT_EQ(ports.size(), 7u);
  Job a(root.path(), "a", "b", 2001, catalog::ContainerRuntime::kPyxis);
  Job b(root.path(), "b", "a", 2002, catalog::ContainerRuntime::kPyxis);
  for (Job* job : {&a, &b}) {
    catalog::RayConfig& ray = job->request().ray;
    ray.port = ports[0];
    ray.node_manager_port = ports[1];
    ray.object_manager_port = ports[2];
    ray.ray_client_server_port = ports[3];
    ray.dashboard_agent_listen_port = ports[4];
    ray.min_worker_port = std::min(ports[5], ports[6]);
    ray.max_worker_port = std::max(ports[5], ports[6]);
    ASSERT_TRUE(checkRenderable(job->request()));
  }
  const Outcome outcome = runSideBySide(root.path(), a, b, net);
  const bool a_won = outcome.exit_codes.at("a") == 0;
  Job& winner = a_won ? a : b;
  Job& loser = a_won ? b : a;
  EXPECT_EQ(outcome.exit_codes.at(winner.name()), 0) << winner.err();
  EXPECT_EQ(outcome.exit_codes.at(loser.name()), kExitRayHeadFailed) << loser.err();
  EXPECT_THAT(loser.err(), HasSubstr("Address already in use"));
  EXPECT_THAT(loser.err(), HasSubstr("the Ray head stopped before it reported its address"));
  EXPECT_FALSE(fs::exists(loser.driverOut())) << "the failed job's driver ran";
  expectOwnNodesOnly(winner);
}

// The stand-in itself: a worker joins only with the head's own token.
TEST(RayStandIn, AWorkerJoinsOnlyTheHeadWhoseTokenItHolds) {
  sh::TempDir root;
  const fs::path bin = root.path() / "bin";
  fs::create_directories(bin);
  for (const char* stub : {"getent", "ray"}) {
    fs::copy_file(kStubs / stub, bin / stub);
    fs::permissions(bin / stub, fs::perms::owner_all);
  }
  const auto env = [&](const std::string& token, const std::string& node) {
    std::vector<std::string> vars = {"PATH=" + bin.string() + ":/usr/bin:/bin",
                                     "PYTHONPATH=" + (kStubs / "python").string(),
                                     "TP_STUB_HOST_IPS=" + hostIps(74), "SLURMD_NODENAME=" + node};
    if (!token.empty()) {
      vars.push_back("RAY_AUTH_MODE=token");
      vars.push_back("RAY_AUTH_TOKEN=" + token);
    }
    return vars;
  };
  const auto run = [&](const std::string& name, const std::vector<std::string>& argv,
                       const std::vector<std::string>& vars) {
    return test::ChildProcess::start(argv,
                                     {.scratch = root.path(), .env = vars, .cwd = root.path()},
                                     name, test::ChildProcess::Output::kTruncate);
  };
  const fs::path temp = root.path() / "head-tmp";
  const std::string ray = (bin / "ray").string();
  auto head = run("head",
                  {ray, "start", "--head", "--node-ip-address=10.74.0.1", "--port=0",
                   "--include-dashboard=false", "--min-worker-port=0", "--max-worker-port=0",
                   "--temp-dir=" + temp.string(), "--block"},
                  env("right", "n0"));
  ASSERT_NE(head, nullptr);
  std::string address;
  test::waitUntil(
      [&] {
        address = sh::readFile(temp / "ray_current_cluster");
        return !address.empty();
      },
      std::chrono::seconds(10));
  ASSERT_FALSE(address.empty()) << sh::readFile(root.path() / "head.err");
  const std::vector<std::string> join = {
      ray,      "start", "--address=" + address, "--min-worker-port=0", "--max-worker-port=0",
      "--block"};
  for (const std::string& token : {std::string("wrong"), std::string()}) {
    auto stranger = run("stranger", join, env(token, "n1"));
    ASSERT_NE(stranger, nullptr);
    EXPECT_EQ(stranger->exitWithin(std::chrono::seconds(30)), 1) << "token '" << token << "'";
    EXPECT_THAT(sh::readFile(root.path() / "stranger.err"), HasSubstr("refused"));
  }
  auto member = run("member", join, env("right", "n1"));
  ASSERT_NE(member, nullptr);
  const auto nodes = [&](const std::string& token) {
    const auto listed = run("list",
                            {"python3", "-c",
                             "import ray; ray.init(address='" + address +
                                 "'); print(sorted(n['NodeName'] for n in ray.nodes() if "
                                 "n['Alive']))"},
                            env(token, "n0"));
    if (listed) listed->exitWithin(std::chrono::seconds(30));
    return sh::readFile(root.path() / "list.out") + sh::readFile(root.path() / "list.err");
  };
  std::string seen;
  for (int i = 0; i < 250 && seen.find("'n1'") == std::string::npos; ++i) {  // at most ~10 s
    seen = nodes("right");
  }
  EXPECT_THAT(seen, HasSubstr("['n0', 'n1']"));
  EXPECT_THAT(nodes("wrong"), HasSubstr("refused"));
}

}  // namespace
}  // namespace tuneplane::slurm
