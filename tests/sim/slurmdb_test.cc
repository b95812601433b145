// The simulator's slurmdbd (--accounting; sim/slurmdb_ledger.h, slurmdb_routes.cc) held to the
// real slurmrestd 26.05.3's answers: 21_slurmdb_jobs replayed where it is deterministic — the
// same three jobs (alice 2 CPUs, bob 1 GPU, alice's requeued once), then the window query
// (users repeated), a comma list (500), one job by id, an unknown id, another user's token —
// each answer compared by status, record count, what each record says of its run, and the
// JSON keys and types of every record against the real one's; and 22_no_slurmdbd: without
// --accounting every /slurmdb/ path answers slurmrestd's 404 text. Both REST API versions.
#include <filesystem>
#include <regex>
#include <set>

#include "sim_test_support.h"
#include "support/fixtures.h"

namespace tuneplane::sim::testing {
namespace {

// What a record says of its run, in words a test compares: who, which state, which run,
// how many CPUs and GPUs.
std::string runSummary(const json& record) {
  int64_t gpus = 0, cpus = 0;
  for (const auto& t : record["tres"]["allocated"]) {
    if (t["type"] == "cpu") cpus = t["count"];
    if (t["type"] == "gres" && t["name"] == "gpu") gpus = t["count"];
  }
  return record["user"].get<std::string>() + " " + record["account"].get<std::string>() + " " +
         record["state"]["current"].dump() + " restart " +
         std::to_string(record["restart_cnt"].get<int>()) + " cpu " + std::to_string(cpus) +
         " gpu " + std::to_string(gpus);
}

// The summaries of the replayed jobs' records (named acct-…): the real window also holds a
// job of the recording before (20_associations'), which the replay does not make.
std::multiset<std::string> summaries(const json& answer) {
  std::multiset<std::string> out;
  for (const auto& record : answer["jobs"]) {
    if (record["name"].get<std::string>().rfind("acct-", 0) == 0) out.insert(runSummary(record));
  }
  return out;
}

class SlurmdbConformance : public SimFixture {
 protected:
  void tune(SimulatorOptions& options) override {
    options.accounting = true;
    options.requeue_delay = std::chrono::milliseconds(300);
    options.api_versions = {"v0.0.44", "v0.0.45"};
  }

  json transcript() const {
    return version_ == "v0.0.45"
               ? test::transcript("21_slurmdb_jobs")
               : test::versionTranscript(version_, "21_slurmdb_jobs", "transcripts-26.05");
  }
  static const json& exchange(const json& t, const std::string& label) {
    for (const auto& e : t["exchanges"]) {
      if (e["label"].get<std::string>().rfind(label, 0) == 0) return e;
    }
    throw std::runtime_error("no exchange " + label);
  }
  httplib::Headers as(const std::string& user) const {
    return {{"X-SLURM-USER-NAME", user}, {"X-SLURM-USER-TOKEN", token(user)}};
  }
  // The recorded submit, its paths moved here and its sleeps shortened fourfold.
  int submitAs(const json& recorded) {
    const std::string user = recorded["request"]["headers"]["X-SLURM-USER-NAME"];
    std::string body = recorded["request"]["body"].dump();
    body = std::regex_replace(body, std::regex("/shared/rec44"), dir_.path());
    body = std::regex_replace(body, std::regex("sleep 3"), "sleep 0.75");
    body = std::regex_replace(body, std::regex("sleep 8"), "sleep 2");
    std::filesystem::create_directories(dir_.path() + "/" + user);
    auto res = client_->Post(("/slurm/" + version_ + "/job/submit").c_str(), as(user), body,
                             "application/json");
    EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
    return res ? json::parse(res->body).value("job_id", 0) : 0;
  }
  json jobState(int id) {
    auto res = client_->Get(("/slurm/" + version_ + "/job/" + std::to_string(id)).c_str(), auth());
    if (!res || res->status != 200) return json();
    return json::parse(res->body)["jobs"][0]["job_state"];
  }
  httplib::Result slurmdb(const std::string& path_and_query, const std::string& user = "slurm") {
    return client_->Get(("/slurmdb/" + version_ + path_and_query).c_str(), as(user));
  }

  // Replays the deterministic parts of 21_slurmdb_jobs for `version_`.
  void replay() {
    const json t = transcript();
    const int64_t start = unixNow() - 1;
    const int cpu = submitAs(exchange(t, "alice: 2 CPUs"));
    const int gpu = submitAs(exchange(t, "bob: 1 GPU"));
    const int requeued = submitAs(exchange(t, "alice: requeueable"));
    ASSERT_TRUE(
        tuneplane::test::waitUntil([&] { return jobState(requeued) == json::array({"RUNNING"}); }));
    ASSERT_TRUE(sim_->requeueJob(std::to_string(requeued), false));
    for (int id : {cpu, gpu, requeued}) {
      ASSERT_TRUE(tuneplane::test::waitUntil(
          [&] { return jobState(id) == json::array({"COMPLETED"}); }, std::chrono::seconds(30)))
          << id << ": " << jobState(id).dump();
    }
    const std::string window =
        "start_time=" + std::to_string(start) + "&end_time=" + std::to_string(unixNow() + 1);

    for (const char* label : {"every job in the window", "the same with show_duplicates",
                              "the jobs, asked with tpuser's own token"}) {
      SCOPED_TRACE(label);
      const json& real = exchange(t, label);
      const std::string user = real["request"]["headers"]["X-SLURM-USER-NAME"];
      const std::string show = std::string(label).find("show_duplicates") != std::string::npos
                                   ? "&show_duplicates=true"
                                   : "";
      auto res = slurmdb("/jobs/?users=alice&users=bob" + show + "&" + window, user);
      ASSERT_TRUE(res);
      ASSERT_EQ(res->status, real["response"]["status"].get<int>()) << res->body;
      const json got = json::parse(res->body);
      const json& want = real["response"]["body"];
      // One record per run, the requeued job's first run included, as the real one lists.
      EXPECT_EQ(summaries(got), summaries(want));
      EXPECT_EQ(summaries(got).size(), 4u);
      std::vector<std::string> diffs;
      json envelope_got = got, envelope_want = want;
      envelope_got.erase("jobs");
      envelope_want.erase("jobs");
      shapeDiff(envelope_want, envelope_got, "", diffs);
      for (const auto& record : got["jobs"]) {
        // Compared with the real record of the same run.
        for (const auto& real_record : want["jobs"]) {
          if (runSummary(real_record) == runSummary(record)) {
            shapeDiff(real_record, record, "/jobs[" + runSummary(record) + "]", diffs);
            break;
          }
        }
        EXPECT_EQ(record["working_directory"],
                  dir_.path() + "/" + record["user"].get<std::string>());
        const auto& time = record["time"];
        EXPECT_EQ(time["elapsed"], time["end"].get<int64_t>() - time["start"].get<int64_t>());
      }
      EXPECT_TRUE(diffs.empty()) << [&] {
        std::string s;
        for (const auto& d : diffs) s += d + "\n";
        return s;
      }();
    }

    const json& comma = exchange(t, "users as a comma list");
    auto refused = slurmdb("/jobs/?users=alice,bob&" + window);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, comma["response"]["status"].get<int>());
    EXPECT_EQ(refused->body, comma["response"]["body"].get<std::string>());
    EXPECT_EQ(refused->get_header_value("Content-Type"), "text/plain");

    const json& one = exchange(t, "one job by id");
    auto by_id = slurmdb("/job/" + std::to_string(gpu));
    ASSERT_TRUE(by_id);
    ASSERT_EQ(by_id->status, 200);
    const json got_one = json::parse(by_id->body);
    EXPECT_EQ(summaries(got_one), summaries(one["response"]["body"]));
    std::vector<std::string> diffs;
    shapeDiff(one["response"]["body"], got_one, "", diffs);
    EXPECT_TRUE(diffs.empty()) << ::testing::PrintToString(diffs);

    const json& unknown = exchange(t, "an id slurmdbd never saw");
    auto none = slurmdb("/job/999999");
    ASSERT_TRUE(none);
    EXPECT_EQ(none->status, 200);
    const json got_none = json::parse(none->body);
    EXPECT_TRUE(got_none["jobs"].empty());
    EXPECT_EQ(got_none["warnings"], unknown["response"]["body"]["warnings"]);
  }

  std::string version_ = "v0.0.45";
};

TEST_F(SlurmdbConformance, JobsOfTheWindowOneRecordPerRunV0045) {
  version_ = "v0.0.45";
  replay();
}

TEST_F(SlurmdbConformance, JobsOfTheWindowOneRecordPerRunV0044) {
  version_ = "v0.0.44";
  replay();
}

// A run still running: no end, elapsed so far; a job that never started: no start, no
// allocation. And the window: a run that ended before it is not listed.
TEST_F(SlurmdbConformance, RunningAndPendingRunsAndTheWindow) {
  const int running = submit(jobBody("sleep 30"));
  ASSERT_TRUE(waitState(std::to_string(running), {"RUNNING"}));
  sim_->pauseScheduling(true);
  const int pending = submit(jobBody("true"));
  auto res = client_->Get("/slurmdb/v0.0.45/jobs/?users=tpuser", auth());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json jobs = json::parse(res->body)["jobs"];
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]["job_id"], running);
  EXPECT_EQ(jobs[0]["state"]["current"], json::array({"RUNNING"}));
  EXPECT_EQ(jobs[0]["time"]["end"], 0);
  EXPECT_GT(jobs[0]["time"]["start"].get<int64_t>(), 0);
  EXPECT_EQ(jobs[1]["job_id"], pending);
  EXPECT_EQ(jobs[1]["time"]["start"], 0);
  EXPECT_TRUE(jobs[1]["tres"]["allocated"].empty());
  auto window = [&](int64_t from, int64_t to) {
    auto res =
        client_->Get(("/slurmdb/v0.0.45/jobs/?users=tpuser&start_time=" + std::to_string(from) +
                      "&end_time=" + std::to_string(to))
                         .c_str(),
                     auth());
    EXPECT_TRUE(res && res->status == 200);
    return res ? json::parse(res->body)["jobs"].size() : 0u;
  };
  // Submitted after a window's end: not in it; a run with no end: in every later window.
  EXPECT_EQ(window(unixNow() - 1000, unixNow() - 900), 0u);
  EXPECT_EQ(window(unixNow() + 100, unixNow() + 200), 2u);
  auto skip = client_->Get("/slurmdb/v0.0.45/jobs/?users=tpuser&skip_steps=true", auth());
  ASSERT_TRUE(skip);
  const json skipped = json::parse(skip->body);
  ASSERT_EQ(skipped["jobs"].size(), 2u);
  for (const auto& job : skipped["jobs"]) EXPECT_TRUE(job["steps"].empty());
  auto other = client_->Get("/slurmdb/v0.0.45/jobs/?users=alice", auth());
  ASSERT_TRUE(other);
  EXPECT_TRUE(json::parse(other->body)["jobs"].empty());
  sim_->pauseScheduling(false);
  ASSERT_EQ(client_->Delete((std::string(kApi) + "/job/" + std::to_string(running)).c_str(), auth())
                ->status,
            200);
}

// Records outlive slurmctld's purge (MinJobAge), as slurmdbd's do.
class SlurmdbAfterPurge : public SimFixture {
 protected:
  void tune(SimulatorOptions& options) override {
    options.accounting = true;
    options.min_job_age = std::chrono::seconds(0);
  }
};

TEST_F(SlurmdbAfterPurge, AJobSlurmctldForgotIsStillInSlurmdbd) {
  const int id = submit(jobBody("true"));
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return sim_->jobCount() == 0; }));
  auto res = client_->Get(("/slurmdb/v0.0.45/job/" + std::to_string(id)).c_str(), auth());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const json jobs = json::parse(res->body)["jobs"];
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["state"]["current"], json::array({"COMPLETED"}));
}

// 22_no_slurmdbd: the simulator without --accounting is a slurmrestd without openapi/slurmdbd.
class NoSlurmdbd : public SimFixture {
 protected:
  void tune(SimulatorOptions& options) override { options.api_versions = {"v0.0.44", "v0.0.45"}; }
};

TEST_F(NoSlurmdbd, EverySlurmdbPathIs404TextAndPingStillAnswers) {
  for (const auto& [version, t] :
       {std::pair{std::string("v0.0.45"), test::transcript("22_no_slurmdbd")},
        std::pair{std::string("v0.0.44"),
                  test::versionTranscript("v0.0.44", "22_no_slurmdbd", "transcripts-26.05")}}) {
    for (const auto& e : t["exchanges"]) {
      SCOPED_TRACE(version + ": " + e["label"].get<std::string>());
      const std::string url = e["request"]["url"];
      const std::string path = url.substr(url.find('/', url.find("://") + 3));
      auto res = client_->Get(path.c_str(), auth());
      ASSERT_TRUE(res);
      EXPECT_EQ(res->status, e["response"]["status"].get<int>()) << res->body;
      if (e["response"]["body"].is_string()) {
        EXPECT_EQ(res->body, e["response"]["body"].get<std::string>());
        EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain");
      }
    }
  }
}

}  // namespace
}  // namespace tuneplane::sim::testing
