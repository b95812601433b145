// Issue 37's simulator faults: Slurm's reads lying for a window (an empty state poll, a bare
// 404 for one job, a 502 for the listing) while the jobs go on running, and a claim that
// cannot be created (logs/claim already a directory or a dangling link when the script runs).
// In process and through the admin route; the history's run times (start_us, end_us).
#include <filesystem>

#include "sim_test_support.h"

namespace tuneplane::sim::testing {
namespace {

namespace fs = std::filesystem;

class ReadFaultTest : public SimFixture {
 protected:
  // GET `path` with no token at all.
  httplib::Result getWithoutToken(const std::string& path) {
    return client_->Get((std::string(kApi) + path).c_str());
  }
  json listing() { return json::parse(get("/jobs/")->body); }
};

TEST_F(ReadFaultTest, ReadsLieForTheirWindowWhileTheJobRunsOn) {
  const std::string id = std::to_string(submit(jobBody("sleep 300")));
  ASSERT_TRUE(waitState(id, {"RUNNING"}));
  sim_->lieAboutReads(std::chrono::minutes(5));

  auto polled = get("/jobs/state/?job_id=" + id);
  ASSERT_TRUE(polled);
  EXPECT_EQ(polled->status, 200);
  const json body = json::parse(polled->body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << polled->body;
  EXPECT_EQ(body["jobs"], json::array());  // "no such job": a lie
  EXPECT_EQ(body["errors"], json::array());

  auto one = get("/job/" + id);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 404);
  EXPECT_TRUE(json::parse(one->body, nullptr, false).is_discarded())
      << "a bare 404 carries no Slurm JSON: " << one->body;
  EXPECT_EQ(one->get_header_value("Content-Type"), "text/plain");

  auto all = get("/jobs/");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->status, 502);

  // A proxy's answer: the token is not even looked at.
  ASSERT_TRUE(getWithoutToken("/jobs/"));
  EXPECT_EQ(getWithoutToken("/jobs/")->status, 502);

  // Submits and the other routes answer truly; the job still runs.
  const int second = submit(jobBody("sleep 300"));
  EXPECT_GT(second, 0);
  EXPECT_EQ(get("/ping")->status, 200);
  EXPECT_EQ(get("/partitions")->status, 200);

  sim_->lieAboutReads(std::chrono::milliseconds(0));
  EXPECT_EQ(state(id), json::array({"RUNNING"}));
  const json truth = listing();
  EXPECT_EQ(truth["jobs"].size(), 2u);
  EXPECT_EQ(json::parse(get("/jobs/state/?job_id=" + id)->body)["jobs"].size(), 1u);
}

TEST_F(ReadFaultTest, TheLieEndsByItselfWhenItsWindowHasPassed) {
  const std::string id = std::to_string(submit(jobBody("sleep 300")));
  sim_->lieAboutReads(std::chrono::milliseconds(300));
  EXPECT_EQ(get("/jobs/")->status, 502);
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return get("/jobs/")->status == 200; }));
  EXPECT_EQ(get("/job/" + id)->status, 200);
}

TEST_F(ReadFaultTest, AdminRouteSetsLiesAndUncreatableClaims) {
  auto res =
      client_->Post("/sim/admin/faults", json{{"lie_reads_ms", 60000}}.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(get("/jobs/")->status, 502);
  res = client_->Post("/sim/admin/faults", json{{"lie_reads_ms", 0}}.dump(), "application/json");
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(get("/jobs/")->status, 200);

  res = client_->Post("/sim/admin/faults",
                      json{{"uncreatable_claims", 1}, {"claim_as", "a fifo"}}.dump(),
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
  res = client_->Post("/sim/admin/faults",
                      json{{"uncreatable_claims", 1}, {"claim_as", "dangling_link"}}.dump(),
                      "application/json");
  EXPECT_EQ(res->status, 200) << res->body;
  const std::string dir = jobs_dir_ + "/via-admin";
  fs::create_directories(dir);
  submit(jobBody("true", {{"standard_output", dir + "/out"}}));
  EXPECT_TRUE(tuneplane::test::waitUntil([&] { return fs::is_symlink(dir + "/claim"); }));
}

// What TunePlane's batch script does first (slurm/script_renderer.cc): an exclusive create
// of `claim` beside its output. The job prints whether it could, and what it found there.
std::string claimScript(const std::string& dir) {
  return "if (set -C && echo $SLURM_JOB_ID >" + dir +
         "/claim) 2>/dev/null; then echo created; "
         "else echo refused; fi; [[ -L " +
         dir + "/claim ]] && echo link; [[ -d " + dir + "/claim ]] && echo directory; true";
}

TEST_F(ReadFaultTest, TheNextJobsFindTheirClaimUncreatableThenTheyAreCreatableAgain) {
  sim_->makeNextClaimsUncreatable(2, false);
  std::vector<std::string> dirs;
  for (int i = 0; i < 3; ++i) {
    dirs.push_back(jobs_dir_ + "/attempt-" + std::to_string(i));
    fs::create_directories(dirs.back());
    const std::string id = std::to_string(
        submit(jobBody(claimScript(dirs.back()), {{"standard_output", dirs.back() + "/out"}})));
    ASSERT_TRUE(waitState(id, {"COMPLETED"})) << id;
  }
  EXPECT_EQ(readFile(dirs[0] + "/out"), "refused\ndirectory\n");
  EXPECT_EQ(readFile(dirs[1] + "/out"), "refused\ndirectory\n");
  EXPECT_EQ(readFile(dirs[2] + "/out"), "created\n");  // only the next two

  sim_->makeNextClaimsUncreatable(1, true);
  const std::string dir = jobs_dir_ + "/attempt-link";
  fs::create_directories(dir);
  const std::string id =
      std::to_string(submit(jobBody(claimScript(dir), {{"standard_output", dir + "/out"}})));
  ASSERT_TRUE(waitState(id, {"COMPLETED"}));
  // A link to nowhere: the create fails and nothing exists there ([[ -e ]] is false).
  EXPECT_EQ(readFile(dir + "/out"), "refused\nlink\n");
  EXPECT_FALSE(fs::exists(dir + "/claim"));
}

TEST_F(ReadFaultTest, TheHistoryTimesEachRunFromItsStartToWhenItWasGone) {
  const std::string marker = jobs_dir_ + "/ran";
  const int64_t before = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const std::string id = std::to_string(submit(jobBody("date +%s%6N >" + marker)));
  ASSERT_TRUE(waitState(id, {"COMPLETED"}));
  const json history = sim_->history()["jobs"];
  ASSERT_EQ(history.size(), 1u);
  const json& run = history[0]["runs"][0];
  ASSERT_TRUE(run.contains("start_us") && run.contains("end_us")) << run.dump();
  const int64_t ran_at = std::stoll(readFile(marker));
  EXPECT_LE(before, run["start_us"].get<int64_t>());
  EXPECT_LE(run["start_us"].get<int64_t>(), ran_at);
  EXPECT_LE(ran_at, run["end_us"].get<int64_t>());
}

}  // namespace
}  // namespace tuneplane::sim::testing
