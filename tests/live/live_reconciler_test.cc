// The reconciler against a real slurmrestd (TUNEPLANE_LIVE_*): one complete CPU-only job from
// JobService::submit to Succeeded through the whole submit protocol, SLUID polling and the
// batch script's sentinels, with the real store (SQLite file) and the system clock. Skipped
// when the variables are not set. The site lives in a fresh directory under the shared dir;
// the cluster has no Apptainer, so a stand-in `apptainer` on the job's PATH drops the
// container options and runs the command on the node. Waits are bounded polls. The pieces are
// put together as serve's start does: the job access checkJobAccess decides, one Slurm client
// from SlurmClientFactory, jobs submitted for the caller mapped to the live user; whom they act
// as is TUNEPLANE_LIVE_IDENTITY's (live_identity.h): per_user, each job is the live user's
// (run_as), asked of Slurm as that user through SlurmUser's token, staged in users/<user>.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "attempt/attempt_files.h"
#include "catalog/artifact_verifier.h"
#include "common/clock.h"
#include "common/jwt.h"
#include "control/job_service.h"
#include "control/reconciler.h"
#include "launch/attempt_identity.h"
#include "live_config.h"
#include "live_identity.h"
#include "live_site.h"
#include "pipeline/attempt_launcher.h"
#include "pipeline/launch_pipeline.h"
#include "slurm/client_factory.h"
#include "slurm/job_key.h"
#include "slurm/rest_client.h"
#include "slurm/script_renderer.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "store/sqlite_job_store.h"
#include "support/subprocess.h"
#include "support/wait.h"

namespace tuneplane::control {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using live::readFile;

class LiveReconciler : public ::testing::Test {
 protected:
  void SetUp() override {
    configure();
    if (IsSkipped() || HasFatalFailure()) return;
    prepare(url_);
  }

  // live_ from TUNEPLANE_LIVE_*, identity_ from TUNEPLANE_LIVE_IDENTITY (live_identity.h);
  // skips the test without them. The caller returns when it was skipped or failed.
  void configure() {
    auto config = live::liveConfig();
    if (!config) GTEST_SKIP() << live::kSkipReason;
    live_ = *config;
    url_ = config->url;
    user_ = config->user;
    shared_ = config->shared_dir;
    live::configureIdentity(live_, live::Staging::kForTheLiveUser, identity_);
  }

  // A site in a fresh directory of the shared dir whose slurmrestd is `url`; `extra_slurm`
  // adds lines under `slurm:`. per_user: the one-time step for the live user done.
  void prepare(const std::string& url, const std::string& extra_slurm = "") {
    auto dir = live::makeLiveSite(identity_.site(live_), "tp-live-control-", url,
                                  identity_.slurmLines() + extra_slurm, identity_.stagingSection());
    ASSERT_TRUE(dir) << "cannot make a directory in " << shared_;
    dir_ = *dir;
    if (identity_.per_user) {
      const Status made = live::makeUserStagingDir(dir_ + "/staging", user_);
      ASSERT_TRUE(made) << made.error().describe();
    }
    auto context = pipeline::loadSiteContext(dir_ + "/site.yaml", pipeline::SiteEnvironment{});
    ASSERT_TRUE(context) << context.error().front().describe();
    context_ = std::move(*context);
    auto access = pipeline::checkJobAccess(context_);
    ASSERT_TRUE(access) << access.error().describe();
    auto factory = slurm::SlurmClientFactory::fromSite(context_.site.slurm);
    ASSERT_TRUE(factory) << factory.error().describe();
    auto client = factory->make();
    ASSERT_TRUE(client) << client.error().describe();
    client_ = std::move(*client);
    // The REST API version, chosen as serve chooses it at start (slurm.api_version).
    auto negotiated = client_->negotiate();
    ASSERT_TRUE(negotiated) << negotiated.error().describe();
    auto store = store::SqliteJobStore::open(dir_ + "/tuneplane.db");
    ASSERT_TRUE(store) << store.error().describe();
    store_ = std::move(*store);
    launcher_ = std::make_unique<pipeline::AttemptLauncher>(context_, verifier_, random_, fs_,
                                                            std::move(*access));
    service_ = std::make_unique<JobService>(*store_, *launcher_, clock_);
  }

  void TearDown() override {
    // Cancel whatever this test left in Slurm, then remove its files.
    if (store_) {
      if (auto active = store_->activeJobs()) {
        for (const auto& view : *active) {
          for (const auto& a : view.attempts) {
            for (const auto& c : a.components) {
              if (!c.sluid.empty()) (void)jobsOf(view.job).cancel(c.sluid, std::nullopt);
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

  void makeReconciler() {
    ReconcilerOptions options;
    options.poll_interval = 1s;
    reconciler_ = std::make_unique<Reconciler>(*store_, *client_, *launcher_, clock_, options);
  }

  // The client a job's own requests go through, as the reconciler asks them: as its run_as.
  slurm::SlurmClient& jobsOf(const store::JobRecord& job) { return client_->as(job.run_as); }

  std::string submit(const std::string& command) {
    // The caller is mapped to the live user (server.tokens[].unix_user): its jobs' run_as in
    // per_user mode; a shared site runs every job as slurm.user.
    auto job = service_->submit(live::cpuJobSpec("live-hello", command), "live", user_);
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
    store::JobView view;
    tuneplane::test::waitUntil(
        [&] {
          reconciler_->tick();
          view = stored(id);
          return phase::isTerminal(view.job.phase);
        },
        limit, 1s);
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

  // Slurm's own answer to GET `path` (under /slurm/<the version spoken>), straight from slurmrestd
  // and read as JSON, so the assertions below depend on Slurm alone; null when it did not answer
  // 200.
  nlohmann::json slurmGet(const std::string& path) {
    std::string token;
    if (live_.token_file) {
      token = readFile(*live_.token_file);
      while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    } else {
      const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      token = jwt::mintHs256({user_, now, now + 600}, readFile(*live_.key_file));
    }
    httplib::Client client(url_);
    client.set_connection_timeout(10, 0);  // bounds on a hung server, not timing checks
    client.set_read_timeout(30, 0);
    auto res =
        client.Get(client_->api()->route(path).c_str(),
                   httplib::Headers{{"X-SLURM-USER-NAME", user_}, {"X-SLURM-USER-TOKEN", token}});
    if (!res || res->status != 200) return nullptr;
    return nlohmann::json::parse(res->body, nullptr, false);
  }

  // Slurm's records (single jobs and het leaders) whose comment is `token`, in id order.
  std::vector<nlohmann::json> slurmRecordsWithToken(const std::string& token) {
    std::vector<nlohmann::json> out;
    const nlohmann::json listing = slurmGet("/jobs/");
    EXPECT_TRUE(listing.is_object()) << "no job listing from slurmrestd";
    if (!listing.is_object()) return out;
    for (const auto& j : listing["jobs"]) {
      if (j.value("comment", "") == token && j["het_job_offset"].value("number", 0) == 0)
        out.push_back(j);
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a["job_id"] < b["job_id"]; });
    return out;
  }

  live::Live live_;
  live::LiveIdentity identity_;
  std::string url_, user_, shared_;
  std::string dir_;
  pipeline::SiteContext context_;
  catalog::ArtifactVerifier verifier_;
  launch::OpenSslRandomSource random_;
  staging::PosixStagingFs fs_;
  SystemClock clock_;
  std::unique_ptr<slurm::SlurmRestClient> client_;
  std::unique_ptr<store::SqliteJobStore> store_;
  std::unique_ptr<pipeline::AttemptLauncher> launcher_;
  std::unique_ptr<JobService> service_;
  std::unique_ptr<Reconciler> reconciler_;
};

TEST_F(LiveReconciler, OneCompleteJobFromSubmitToSucceeded) {
  makeReconciler();
  const std::string id = submit("echo hello from $(hostname)");
  ASSERT_FALSE(id.empty());
  const store::JobView view = tickUntilTerminal(id);
  ASSERT_EQ(view.job.phase, phase::JobPhase::kSucceeded) << view.job.reason;
  ASSERT_EQ(view.attempts.size(), 1u);
  const store::AttemptRecord& attempt = view.attempts.front();
  EXPECT_EQ(attempt.phase, phase::AttemptPhase::kSucceeded);
  ASSERT_EQ(attempt.components.size(), 1u);
  const store::ComponentRecord& c = attempt.components.front();
  EXPECT_FALSE(c.sluid.empty());
  EXPECT_EQ(c.exit_code, 0);

  // The record Slurm keeps is ours: found by SLUID, carrying the submit token, the job's user's.
  EXPECT_EQ(view.job.run_as, identity_.runAs(live_));
  auto records = jobsOf(view.job).getJob(c.sluid);
  if (records) {  // it may be purged already (MinJobAge)
    ASSERT_FALSE(records->empty());
    EXPECT_EQ(records->front().comment, attempt.submit_token);
    EXPECT_EQ(records->front().user_name, user_);
  }

  // The batch script's sentinels and the scheduler log, on the shared filesystem.
  const attempt::AttemptSentinels sentinels = attempt::readSentinels(attempt.staging_dir, {"main"});
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
      auto send = [&] {
        return req.method == "POST"
                   ? client.Post(req.target.c_str(), headers, req.body, "application/json")
               : req.method == "DELETE" ? client.Delete(req.target.c_str(), headers)
                                        : client.Get(req.target.c_str(), headers);
      };
      httplib::Result answer = send();
      const bool submit = req.method == "POST" && req.path.ends_with("/job/submit");
      if (answer && submit && twice_.exchange(false)) {
        // A proxy that retries the POST: the real server carries it out a second time.
        answer = send();
        ++duplicated_;
      }
      if (!answer) {
        res.status = 502;
        return;
      }
      if (submit && drop_.exchange(false)) {
        ++dropped_;
        // The answer is held in real time past the request_timeout of the client under test
        // (its own real clock), so that the client gives up first; this server cannot see the
        // client go, so there is no event to wait for.
        std::this_thread::sleep_for(kHoldBack);
      }
      res.status = answer->status;
      res.set_content(answer->body, answer->get_header_value("Content-Type").c_str());
    };
    server_.Get(".*", forward);
    server_.Post(".*", forward);
    server_.Delete(".*", forward);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    tuneplane::test::waitUntil([this] { return server_.is_running(); }, 10s, 10ms);
  }
  ~SubmitAnswerDropper() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  static constexpr auto kHoldBack = 5s;  // longer than the site's request_timeout below
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool running() const { return port_ > 0 && server_.is_running(); }
  void dropNextSubmitAnswer() { drop_ = true; }
  // The next submit is sent to slurmrestd twice (two jobs, one token) and its answer lost.
  void duplicateNextSubmitAndDropTheAnswer() {
    twice_ = true;
    drop_ = true;
  }
  int dropped() const { return dropped_.load(); }
  int duplicated() const { return duplicated_.load(); }

 private:
  std::string upstream_;
  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
  std::atomic<bool> drop_{false};
  std::atomic<bool> twice_{false};
  std::atomic<int> dropped_{0};
  std::atomic<int> duplicated_{0};
};

class LiveLostReceipt : public LiveReconciler {
 protected:
  void SetUp() override {
    configure();
    if (IsSkipped() || HasFatalFailure()) return;
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
  ASSERT_EQ(view.job.phase, phase::JobPhase::kSubmitUnknown) << view.job.reason;
  ASSERT_EQ(view.attempts.size(), 1u);
  const std::string token = view.attempts.front().submit_token;

  // Found by its token, adopted, followed to the end; nothing was submitted again.
  view = tickUntilTerminal(id);
  ASSERT_EQ(view.job.phase, phase::JobPhase::kSucceeded) << view.job.reason;
  ASSERT_EQ(view.attempts.size(), 1u);
  EXPECT_FALSE(view.attempts.front().components.front().sluid.empty());
  EXPECT_EQ(slurmJobsWithToken(token), 1);
  const std::vector<std::string> trail = jobTrail(id);
  EXPECT_NE(std::find(trail.begin(), trail.end(), "SubmitUnknown"), trail.end());
  EXPECT_EQ(trail.back(), "Succeeded");
}

// The SLUID in a job key (slurm/job_key.h): the key itself, or its "<SLUID>" of "<SLUID>@<id>".
std::string sluidOf(const std::string& key) {
  const auto parsed = slurm::parseJobKey(key);
  return parsed && !parsed->sluid.empty() ? parsed->sluid : key;
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// Issue 17: a proxy sends one submit twice and loses the answer, so while the attempt is
// SubmitUnknown two Slurm jobs carry its token. On this idle cluster both may start at once:
// the first to start claims the attempt (logs/claim) and the other exits 71 having run
// nothing. The attempt adopts the claimant — or, when neither had started, the earliest
// (lowest submit time, then lowest id) — and cancels the other by its SLUID; one runs.
TEST_F(LiveLostReceipt, ASecondSlurmJobWithTheAttemptsTokenIsCancelledAndOneSurvives) {
  makeReconciler();
  const std::string id = submit("echo run; sleep 20");
  ASSERT_FALSE(id.empty());
  proxy_->duplicateNextSubmitAndDropTheAnswer();

  reconciler_->tick();
  ASSERT_EQ(proxy_->duplicated(), 1);
  ASSERT_EQ(proxy_->dropped(), 1);
  store::JobView view = stored(id);
  ASSERT_EQ(view.job.phase, phase::JobPhase::kSubmitUnknown) << view.job.reason;
  const std::string token = view.attempts.front().submit_token;
  const std::string logs = view.attempts.front().staging_dir + "/logs";
  std::vector<nlohmann::json> twins = slurmRecordsWithToken(token);
  ASSERT_EQ(twins.size(), 2u) << "the proxy did not make two jobs";
  const auto earliest = [](const nlohmann::json& a, const nlohmann::json& b) {
    const int64_t ta = a["submit_time"].value("number", int64_t{0});
    const int64_t tb = b["submit_time"].value("number", int64_t{0});
    return ta != tb ? ta < tb : a["job_id"] < b["job_id"];
  };
  const bool first_is_0 = earliest(twins[0], twins[1]);

  view = tickUntilTerminal(id);
  ASSERT_EQ(view.job.phase, phase::JobPhase::kSucceeded) << view.job.reason;
  ASSERT_EQ(view.attempts.size(), 1u);
  ASSERT_EQ(view.attempts.front().components.size(), 1u);
  // Which one was to be kept: the claimant if one started, else the earliest.
  const std::string claim = fs::exists(logs + "/claim") ? readFile(logs + "/claim") : "";
  size_t keep = first_is_0 ? 0 : 1;
  for (size_t i = 0; i < twins.size(); ++i) {
    if (claim == std::to_string(twins[i]["job_id"].get<uint64_t>()) + "\n") keep = i;
  }
  const std::string kept = twins[keep]["step_id"]["sluid"];
  const std::string dropped = twins[1 - keep]["step_id"]["sluid"];
  EXPECT_EQ(upper(sluidOf(view.attempts.front().components.front().sluid)), upper(kept)) << claim;

  // In Slurm: the adopted one COMPLETED; the other CANCELLED before it ran, or, having
  // started, FAILED with exit code 71 (both still listed: MinJobAge). The command ran once.
  twins = slurmRecordsWithToken(token);
  ASSERT_EQ(twins.size(), 2u);
  for (const auto& j : twins) {
    const std::string sluid = j["step_id"]["sluid"];
    const std::string base = j["job_state"][0];
    if (upper(sluid) == upper(kept)) {
      EXPECT_EQ(base, "COMPLETED") << j["job_state"].dump();
    } else if (base != "CANCELLED") {
      EXPECT_EQ(base, "FAILED") << j["job_state"].dump();
      EXPECT_EQ(j["exit_code"]["return_code"]["number"], slurm::kExitAlreadyClaimed)
          << j["exit_code"].dump();
    }
  }
  std::string out;
  for (const auto& entry : fs::directory_iterator(logs)) {
    if (entry.path().extension() == ".out") out += readFile(entry.path().string());
  }
  EXPECT_EQ(out, "run\n") << "the command did not run exactly once";
  // The job's history names the duplicate that was cancelled.
  auto events = store_->events(id);
  ASSERT_TRUE(events);
  bool named = false;
  for (const auto& e : *events)
    named = named || upper(e.reason).find(upper(dropped)) != std::string::npos;
  EXPECT_TRUE(named) << "no event names the cancelled duplicate " << dropped;
}

// A job that appends a line to `runs` and then runs `rest` (shell), seen running by the
// reconciler, then requeued by an administrator (`scontrol update Requeue=1` then `scontrol
// requeue`, as on a real site; the REST API v0.0.45 has no requeue). Each run of the job
// appends to `runs`, whatever Slurm does with its log files. Returns the Slurm job's id, or
// 0 with a test failure.
class LiveRequeue : public LiveReconciler {
 protected:
  void SetUp() override {
    LiveReconciler::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    conf_ = live::liveSlurmConf(live_);
    if (conf_.empty()) GTEST_SKIP() << "no slurm.conf for scontrol: set TUNEPLANE_LIVE_SLURM_CONF";
  }
  uint64_t runThenRequeue(const std::string& rest) {
    const std::string runs_dir = dir_ + "/runs";
    fs::create_directories(runs_dir);
    fs::permissions(runs_dir, fs::perms::all | fs::perms::sticky_bit);
    runs_ = runs_dir + "/count";
    makeReconciler();
    id_ = submit("echo run >> " + runs_ + "; " + rest);
    if (id_.empty()) return 0;
    store::JobView view;
    tuneplane::test::waitUntil(
        [&] {
          reconciler_->tick();
          view = stored(id_);
          return (view.job.phase == phase::JobPhase::kRunning && fs::exists(runs_)) ||
                 phase::isTerminal(view.job.phase);
        },
        120s, 1s);
    if (view.job.phase != phase::JobPhase::kRunning) {
      ADD_FAILURE() << "never seen running: " << view.job.reason;
      return 0;
    }
    const uint64_t slurm_id = view.attempts.front().slurm_job_id;
    const std::string job = std::to_string(slurm_id);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"scontrol", "update", "JobId=" + job, "Requeue=1"},
          std::vector<std::string>{"scontrol", "requeue", job}}) {
      const test::ProcessResult done = scontrol(args);
      if (done.exit_code != 0) {
        ADD_FAILURE() << args[1] << ": " << done.err << done.out;
        return 0;
      }
    }
    return slurm_id;
  }
  test::ProcessResult scontrol(const std::vector<std::string>& args) {
    return live::runSlurmCommand(live_, conf_, args, dir_);
  }
  // Slurm's record of the job, read until `done` says so (bounded); null if Slurm has none.
  nlohmann::json slurmRecordUntil(uint64_t slurm_id,
                                  const std::function<bool(const nlohmann::json&)>& done) {
    nlohmann::json record;
    tuneplane::test::waitUntil(
        [&] {
          const nlohmann::json answer = slurmGet("/job/" + std::to_string(slurm_id));
          record = answer.is_object() && !answer["jobs"].empty() ? answer["jobs"][0] : nullptr;
          return !record.is_object() || done(record);
        },
        120s, 500ms);
    return record;
  }

  std::string conf_;
  std::string id_;
  std::string runs_;
};

// Issue 17: Slurm makes a requeued job PENDING again and, once the epilog is done, gives it a
// new SLUID. The attempt ends saying Slurm requeued it; the requeued job is cancelled so it
// never runs a second time.
TEST_F(LiveRequeue, AnAdministratorsRequeueEndsTheAttemptAndTheJobNeverRunsAgain) {
  const uint64_t slurm_id = runThenRequeue("sleep 120");
  ASSERT_NE(slurm_id, 0u);

  const store::JobView view = tickUntilTerminal(id_);
  ASSERT_EQ(view.job.phase, phase::JobPhase::kFailed) << view.job.reason;
  ASSERT_EQ(view.attempts.size(), 1u);  // max_attempts 1: TunePlane's policy, not Slurm's
  const store::AttemptRecord& attempt = view.attempts.front();
  EXPECT_EQ(attempt.phase, phase::AttemptPhase::kFailed);
  EXPECT_EQ(attempt.cause, phase::EndCause::kInfrastructure);
  EXPECT_NE(upper(attempt.reason).find("REQUEUE"), std::string::npos) << attempt.reason;

  // In Slurm the job (same numeric id) ends CANCELLED, for good, after one run.
  const nlohmann::json record = slurmRecordUntil(slurm_id, [](const nlohmann::json& r) {
    return r["job_state"] == nlohmann::json::array({"CANCELLED"});
  });
  ASSERT_TRUE(record.is_object()) << "Slurm has no record of job " << slurm_id;
  EXPECT_EQ(record["job_state"], nlohmann::json::array({"CANCELLED"}))
      << record["job_state"].dump();
  EXPECT_GE(record.value("restart_cnt", 0), 1) << "Slurm did not requeue it";
  EXPECT_EQ(record.value("comment", ""), attempt.submit_token);
  EXPECT_EQ(readFile(runs_), "run\n") << "the job ran again after the requeue";
}

// The same requeue while TunePlane is not looking (serve stopped, or a site whose
// requeue_delay is short: here the administrator sets StartTime=now), so real Slurm starts
// the job a second time before anyone cancels it. The restarted script runs nothing (it sees
// SLURM_RESTART_COUNT and exits 70), the first run's log survives (open_mode APPEND), and
// the attempt ends as requeued once TunePlane looks.
TEST_F(LiveRequeue, ARequeuedJobSlurmStartsAgainBeforeTunePlaneLooksRunsNothing) {
  const uint64_t slurm_id = runThenRequeue("echo first-run-output; sleep 120");
  ASSERT_NE(slurm_id, 0u);
  // No tick from here. Once the requeue is done (plain PENDING), make it eligible at once;
  // then wait for Slurm to start it again and for that start to end.
  bool released = false;
  const nlohmann::json record = slurmRecordUntil(slurm_id, [&](const nlohmann::json& r) {
    const nlohmann::json& state = r["job_state"];
    if (!released && state == nlohmann::json::array({"PENDING"})) {
      released =
          scontrol({"scontrol", "update", "JobId=" + std::to_string(slurm_id), "StartTime=now"})
              .exit_code == 0;
    }
    return released && state.size() == 1 && state[0] != "PENDING" && state[0] != "RUNNING";
  });
  ASSERT_TRUE(record.is_object()) << "Slurm has no record of job " << slurm_id;
  ASSERT_TRUE(released) << "the requeue never finished: " << record["job_state"].dump();
  EXPECT_EQ(record["job_state"], nlohmann::json::array({"FAILED"})) << record.dump();
  EXPECT_GE(record.value("restart_cnt", 0), 1);
  EXPECT_EQ(record["exit_code"]["return_code"]["number"], slurm::kExitRestartRefused)
      << record["exit_code"].dump();

  const store::JobView view = tickUntilTerminal(id_);
  ASSERT_EQ(view.job.phase, phase::JobPhase::kFailed) << view.job.reason;
  const store::AttemptRecord& attempt = view.attempts.front();
  EXPECT_EQ(attempt.cause, phase::EndCause::kInfrastructure);
  EXPECT_NE(upper(attempt.reason).find("REQUEUE"), std::string::npos) << attempt.reason;
  EXPECT_EQ(readFile(runs_), "run\n") << "the job ran again after the requeue";
  std::string out, err;
  for (const auto& entry : fs::directory_iterator(attempt.staging_dir + "/logs")) {
    if (entry.path().extension() == ".out") out += readFile(entry.path().string());
    if (entry.path().extension() == ".err") err += readFile(entry.path().string());
  }
  EXPECT_NE(out.find("first-run-output"), std::string::npos) << "the restart truncated the log";
  EXPECT_NE(err.find("Slurm started this job again"), std::string::npos) << err;
}

}  // namespace
}  // namespace tuneplane::control
