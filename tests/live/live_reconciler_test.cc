// The reconciler against a real slurmrestd (TUNEPLANE_LIVE_*): one complete CPU-only job from
// JobService::submit to Succeeded through the whole submit protocol, SLUID polling and the
// batch script's sentinels, with the real store (SQLite file) and the system clock. Skipped
// when the variables are not set. The site lives in a fresh directory under the shared dir;
// the cluster has no Apptainer, so a stand-in `apptainer` on the job's PATH drops the
// container options and runs the command on the node. Waits are bounded polls.
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "catalog/artifact_verifier.h"
#include "common/clock.h"
#include "control/attempt_files.h"
#include "control/attempt_launcher.h"
#include "control/job_service.h"
#include "control/launch_pipeline.h"
#include "control/reconciler.h"
#include "launch/attempt_identity.h"
#include "live_config.h"
#include "live_site.h"
#include "slurm/rest_client.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "store/sqlite_job_store.h"

namespace tuneplane::control {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using live::readFile;

class LiveReconciler : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!readEnvironment()) GTEST_SKIP() << live::kSkipReason;
    prepare(url_);
  }

  bool readEnvironment() {
    auto config = live::liveConfig();
    if (!config) return false;
    live_ = *config;
    url_ = config->url;
    user_ = config->user;
    shared_ = config->shared_dir;
    return true;
  }

  // A site in a fresh directory of the shared dir whose slurmrestd is `url`; `extra_slurm`
  // adds lines under `slurm:`.
  void prepare(const std::string& url, const std::string& extra_slurm = "") {
    auto dir = live::makeLiveSite(live_, "tp-live-control-", url, extra_slurm);
    ASSERT_TRUE(dir) << "cannot make a directory in " << shared_;
    dir_ = *dir;
    auto context = loadSiteContext(dir_ + "/site.yaml", SiteEnvironment{});
    ASSERT_TRUE(context) << context.error().front().describe();
    context_ = std::move(*context);
    auto client = slurm::SlurmRestClient::fromSite(context_.site.slurm);
    ASSERT_TRUE(client) << client.error().describe();
    client_ = std::move(*client);
    auto store = store::SqliteJobStore::open(dir_ + "/tuneplane.db");
    ASSERT_TRUE(store) << store.error().describe();
    store_ = std::move(*store);
    launcher_ = std::make_unique<AttemptLauncher>(context_, verifier_, random_, fs_);
    service_ = std::make_unique<JobService>(*store_, *launcher_, clock_);
  }

  void TearDown() override {
    // Cancel whatever this test left in Slurm, then remove its files.
    if (store_) {
      if (auto active = store_->activeJobs()) {
        for (const auto& view : *active) {
          for (const auto& a : view.attempts) {
            for (const auto& c : a.components) {
              if (!c.sluid.empty()) (void)client_->cancel(c.sluid, std::nullopt);
            }
          }
        }
      }
    }
    reconciler_.reset();
    service_.reset();
    launcher_.reset();
    store_.reset();
    client_.reset();
    if (!dir_.empty()) staging::PosixStagingFs().removeTree(dir_);
  }

  // Until the issue-11 staging group exists, the attempt's logs/ and output/ are handed to
  // the job's user once staged, so Slurm (running the job as that user) can write there.
  void handLogsToJobUser(const std::string& job_id, int attempt) {
    const passwd* pw = ::getpwnam(user_.c_str());
    ASSERT_NE(pw, nullptr) << "no local user " << user_;
    auto dir = launcher_->attemptDir(job_id, attempt);
    ASSERT_TRUE(dir);
    for (const std::string sub : {"/logs", "/output"}) {
      if (fs::exists(*dir + sub)) {
        EXPECT_EQ(::chown((*dir + sub).c_str(), pw->pw_uid, pw->pw_gid), 0) << sub;
      }
    }
    const std::string job_output = fs::path(*dir).parent_path().parent_path() / "output";
    if (fs::exists(job_output)) {
      EXPECT_EQ(::chown(job_output.c_str(), pw->pw_uid, pw->pw_gid), 0) << job_output;
    }
  }

  void makeReconciler() {
    ReconcilerOptions options;
    options.poll_interval = 1s;
    options.step_hook = [this](SubmitStep step, const std::string& job_id, int attempt) {
      if (step == SubmitStep::kStaged) handLogsToJobUser(job_id, attempt);
    };
    reconciler_ = std::make_unique<Reconciler>(*store_, *client_, *launcher_, clock_, options);
  }

  std::string submit(const std::string& command) {
    auto job = service_->submit(
        "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: live-hello\n"
        "spec:\n  framework:\n    name: custom\n    task: custom\n    runtime_id: custom-demo\n"
        "    command: [\"bash\", \"-c\", \"" +
            command +
            "\"]\n"
            "  resources:\n    time_limit: 5m\n    pools:\n      - name: main\n        nodes: 1\n"
            "        gpus_per_node: 0\n        cpus: 1\n        memory_gb: 1\n",
        "live");
    EXPECT_TRUE(job) << job.error().front().describe();
    return job ? job->id : "";
  }

  store::JobView stored(const std::string& id) {
    auto got = store_->getJob(id);
    EXPECT_TRUE(got && *got) << "no job " << id;
    return got && *got ? **got : store::JobView{};
  }

  // Ticks once a second until the job ends; bounded (a real scheduler and an epilog).
  store::JobView tickUntilTerminal(const std::string& id, std::chrono::seconds limit = 180s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    store::JobView view;
    while (std::chrono::steady_clock::now() < deadline) {
      reconciler_->tick();
      view = stored(id);
      if (store::isTerminal(view.job.phase)) break;
      std::this_thread::sleep_for(1s);
    }
    return view;
  }

  // The job phases the job went through, in order.
  std::vector<std::string> jobTrail(const std::string& id) {
    std::vector<std::string> trail;
    auto events = store_->events(id);
    EXPECT_TRUE(events);
    if (!events) return trail;
    for (const auto& e : *events) {
      if (e.attempt == 0 && e.from != e.to) trail.push_back(e.to);
    }
    return trail;
  }

  live::Live live_;
  std::string url_, user_, shared_;
  std::string dir_;
  SiteContext context_;
  catalog::ArtifactVerifier verifier_;
  launch::OpenSslRandomSource random_;
  staging::PosixStagingFs fs_;
  SystemClock clock_;
  std::unique_ptr<slurm::SlurmRestClient> client_;
  std::unique_ptr<store::SqliteJobStore> store_;
  std::unique_ptr<AttemptLauncher> launcher_;
  std::unique_ptr<JobService> service_;
  std::unique_ptr<Reconciler> reconciler_;
};

TEST_F(LiveReconciler, OneCompleteJobFromSubmitToSucceeded) {
  makeReconciler();
  const std::string id = submit("echo hello from $(hostname)");
  ASSERT_FALSE(id.empty());
  const store::JobView view = tickUntilTerminal(id);
  ASSERT_EQ(view.job.phase, store::JobPhase::kSucceeded) << view.job.reason;
  ASSERT_EQ(view.attempts.size(), 1u);
  const store::AttemptRecord& attempt = view.attempts.front();
  EXPECT_EQ(attempt.phase, store::AttemptPhase::kSucceeded);
  ASSERT_EQ(attempt.components.size(), 1u);
  const store::ComponentRecord& c = attempt.components.front();
  EXPECT_FALSE(c.sluid.empty());
  EXPECT_EQ(c.exit_code, 0);

  // The record Slurm keeps is ours: found by SLUID, carrying the submit token.
  auto records = client_->getJob(c.sluid);
  if (records) {  // it may be purged already (MinJobAge)
    ASSERT_FALSE(records->empty());
    EXPECT_EQ(records->front().comment, attempt.submit_token);
  }

  // The batch script's sentinels and the scheduler log, on the shared filesystem.
  const AttemptSentinels sentinels = readSentinels(attempt.staging_dir, {"main"});
  ASSERT_EQ(sentinels.exit.count("main"), 1u) << "no exit sentinel";
  EXPECT_EQ(sentinels.exit.at("main").exit_code, 0);
  EXPECT_EQ(sentinels.start.count("main"), 1u);
  EXPECT_NE(readFile(attempt.staging_dir + "/logs/main.out").find("hello from "),
            std::string::npos);

  // From Pending through Submitting to Succeeded (a short job may end between two polls, so
  // Running or Releasing can go unseen).
  const std::vector<std::string> trail = jobTrail(id);
  ASSERT_FALSE(trail.empty());
  EXPECT_EQ(trail.front(), "Pending");
  EXPECT_EQ(trail.back(), "Succeeded");
  EXPECT_NE(std::find(trail.begin(), trail.end(), "Submitting"), trail.end());
}

// A proxy in front of the real slurmrestd that passes everything through, except that it
// holds back the answer to the next submit — after the real server made the job — past the
// client's request timeout: a lost receipt, for real.
class SubmitAnswerDropper {
 public:
  explicit SubmitAnswerDropper(std::string upstream) : upstream_(std::move(upstream)) {
    auto forward = [this](const httplib::Request& req, httplib::Response& res) {
      httplib::Client client(upstream_);
      client.set_read_timeout(60, 0);
      httplib::Headers headers;
      for (const char* name : {"X-SLURM-USER-NAME", "X-SLURM-USER-TOKEN"}) {
        if (req.has_header(name)) headers.emplace(name, req.get_header_value(name));
      }
      httplib::Result answer = req.method == "POST"     ? client.Post(req.target.c_str(), headers,
                                                                      req.body, "application/json")
                               : req.method == "DELETE" ? client.Delete(req.target.c_str(), headers)
                                                        : client.Get(req.target.c_str(), headers);
      if (!answer) {
        res.status = 502;
        return;
      }
      if (req.method == "POST" && req.path.ends_with("/job/submit") && drop_.exchange(false)) {
        ++dropped_;
        std::this_thread::sleep_for(kHoldBack);  // the client gives up first
      }
      res.status = answer->status;
      res.set_content(answer->body, answer->get_header_value("Content-Type").c_str());
    };
    server_.Get(".*", forward);
    server_.Post(".*", forward);
    server_.Delete(".*", forward);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
  }
  ~SubmitAnswerDropper() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  static constexpr auto kHoldBack = 5s;  // longer than the site's request_timeout below
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool running() const { return port_ > 0 && server_.is_running(); }
  void dropNextSubmitAnswer() { drop_ = true; }
  int dropped() const { return dropped_.load(); }

 private:
  std::string upstream_;
  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
  std::atomic<bool> drop_{false};
  std::atomic<int> dropped_{0};
};

class LiveLostReceipt : public LiveReconciler {
 protected:
  void SetUp() override {
    if (!readEnvironment()) GTEST_SKIP() << live::kSkipReason;
    proxy_ = std::make_unique<SubmitAnswerDropper>(url_);
    ASSERT_TRUE(proxy_->running());
    prepare(proxy_->url(), "  request_timeout: 2s\n");
  }
  void TearDown() override {
    LiveReconciler::TearDown();
    proxy_.reset();
  }

  // Slurm jobs (het leaders and single jobs) whose comment is `token`, from a full listing.
  int slurmJobsWithToken(const std::string& token) {
    auto listing = client_->listJobs(std::nullopt);
    EXPECT_TRUE(listing) << (listing ? "" : listing.error().describe());
    if (!listing) return -1;
    int count = 0;
    for (const auto& r : listing->jobs) {
      if (r.comment == token && (!r.het_job_offset.set || r.het_job_offset.number == 0)) ++count;
    }
    return count;
  }

  std::unique_ptr<SubmitAnswerDropper> proxy_;
};

TEST_F(LiveLostReceipt, ADroppedSubmitAnswerIsFoundByItsTokenAndRunsExactlyOnce) {
  makeReconciler();
  const std::string id = submit("sleep 2; echo once");
  ASSERT_FALSE(id.empty());
  proxy_->dropNextSubmitAnswer();

  // The POST reached slurmrestd, which made the job; no receipt came back.
  reconciler_->tick();
  ASSERT_EQ(proxy_->dropped(), 1);
  store::JobView view = stored(id);
  ASSERT_EQ(view.job.phase, store::JobPhase::kSubmitUnknown) << view.job.reason;
  ASSERT_EQ(view.attempts.size(), 1u);
  const std::string token = view.attempts.front().submit_token;

  // Found by its token, adopted, followed to the end; nothing was submitted again.
  view = tickUntilTerminal(id);
  ASSERT_EQ(view.job.phase, store::JobPhase::kSucceeded) << view.job.reason;
  ASSERT_EQ(view.attempts.size(), 1u);
  EXPECT_FALSE(view.attempts.front().components.front().sluid.empty());
  EXPECT_EQ(slurmJobsWithToken(token), 1);
  const std::vector<std::string> trail = jobTrail(id);
  EXPECT_NE(std::find(trail.begin(), trail.end(), "SubmitUnknown"), trail.end());
  EXPECT_EQ(trail.back(), "Succeeded");
}

}  // namespace
}  // namespace tuneplane::control
