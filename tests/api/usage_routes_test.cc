// GET /v1/usage through the real server (api/usage_routes.cc) over a scripted slurmdbd reader:
// who may ask for what and what slurmdbd is then asked, the parameters, the errors (no
// accounting is a 501, never figures), a TunePlane job's runs tied to it, the limit on reads
// at once, and /metrics' usage lines. Every answer is checked against docs/openapi.json.
#include <condition_variable>
#include <future>
#include <thread>

#include "api/usage_service.h"
#include "api_fixture.h"
#include "staging/staging_paths.h"

namespace tuneplane::api::testing {
namespace {

using slurm::AccountingRun;
using slurm::SlurmdbJobsQuery;

AccountingRun usageRun(uint64_t id, const std::string& user, const std::string& account,
                       int64_t start, int64_t seconds, int64_t cpus, int64_t gpus,
                       const std::string& cwd) {
  AccountingRun r;
  r.job_id = id;
  r.cluster = "tp";
  r.user = user;
  r.account = account;
  r.state = {"COMPLETED"};
  r.submit_time = start;
  r.start_time = start;
  r.end_time = start + seconds;
  r.elapsed = seconds;
  r.cpus = cpus;
  r.gpus = gpus;
  r.working_directory = cwd;
  return r;
}

class UsageRoutesTest : public ApiFixture {
 protected:
  void tune(ApiDependencies& deps, HttpServerOptions&) override {
    UsageService::Options options;
    options.staging_root = context_.site.staging_root;
    options.service_user = context_.site.slurm.user;
    deps.usage = std::make_shared<UsageService>(
        [this](const SlurmdbJobsQuery& query) -> slurm::SlurmResult<std::vector<AccountingRun>> {
          std::unique_lock<std::mutex> lock(reader_mu_);
          queries_.push_back(query);
          ++reading_;
          reader_cv_.notify_all();
          reader_cv_.wait(lock, [&] { return !hold_; });
          --reading_;
          if (failure_) return slurm::slurmFail(*failure_);
          return runs_;
        },
        ownershipFromStore(*store_), options, clock_);
  }
  int64_t now() const { return clock_.nowMs() / 1000; }
  std::vector<SlurmdbJobsQuery> queries() {
    std::lock_guard<std::mutex> lock(reader_mu_);
    return queries_;
  }
  std::string service() const { return context_.site.slurm.user; }

  std::mutex reader_mu_;
  std::condition_variable reader_cv_;
  std::vector<SlurmdbJobsQuery> queries_;
  std::vector<AccountingRun> runs_;
  std::optional<slurm::SlurmError> failure_;
  bool hold_ = false;
  int reading_ = 0;
};

TEST_F(UsageRoutesTest, AnAdminSeesEveryUsersRunsAndSlurmdbdIsAskedForEveryone) {
  const int64_t t = now() - 3600;
  runs_ = {usageRun(1, "alice", "team-a", t, 3600, 2, 0, "/home/alice"),
           usageRun(2, "bob", "team-b", t, 1800, 1, 1, "/home/bob")};
  auto res = get("/v1/usage?by=team", kRootToken);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json b = body(res);
  EXPECT_EQ(b["by"], "team");
  EXPECT_EQ(b["scope"], "all");
  ASSERT_EQ(b["items"].size(), 2u);
  EXPECT_EQ(b["items"][0]["team"], "team-a");
  EXPECT_EQ(b["items"][0]["cpu_seconds"], 7200);
  EXPECT_DOUBLE_EQ(b["items"][0]["cpu_hours"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(b["items"][1]["gpu_hours"].get<double>(), 0.5);
  EXPECT_EQ(b["total"]["runs"], 2);
  EXPECT_EQ(b["total"]["tuneplane"]["runs"], 0);  // neither ran in an attempt directory
  ASSERT_EQ(queries().size(), 1u);
  EXPECT_TRUE(queries()[0].users.empty());
  // The default window: the last 7 days, up to now.
  EXPECT_EQ(queries()[0].end_time, now());
  EXPECT_EQ(queries()[0].start_time, now() - 7 * 86400);
}

TEST_F(UsageRoutesTest, AUserSeesTheirOwnAndSlurmdbdIsAskedForThemAndTheServiceUser) {
  const int64_t t = now() - 3600;
  runs_ = {usageRun(1, "alice", "team-a", t, 3600, 2, 0, "/home/alice"),
           usageRun(2, "bob", "team-b", t, 1800, 1, 1, "/home/bob")};
  auto res = get("/v1/usage");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json b = body(res);
  EXPECT_EQ(b["scope"], "own");
  ASSERT_EQ(b["items"].size(), 1u);
  EXPECT_EQ(b["items"][0]["user"], "alice");
  EXPECT_EQ(b["total"]["cpu_seconds"], 7200);
  ASSERT_EQ(queries().size(), 1u);
  std::vector<std::string> want = {"alice"};
  if (service() != "alice") want.push_back(service());
  EXPECT_EQ(queries()[0].users, want);
}

TEST_F(UsageRoutesTest, AUserNamingAnotherUserIsForbiddenAnAdminNamesAny) {
  auto other = get("/v1/usage?user=bob");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 403);
  EXPECT_EQ(code(other), "auth.forbidden");
  auto own = get("/v1/usage?user=alice");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200) << own->body;
  auto admin = get("/v1/usage?user=alice&user=bob", kRootToken);
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->status, 200) << admin->body;
  ASSERT_EQ(queries().size(), 2u);  // the refused request asked slurmdbd nothing
  EXPECT_EQ(queries()[1].users, (std::vector<std::string>{"alice", "bob"}));
}

TEST_F(UsageRoutesTest, BadParametersAre400NamingEachWithoutAskingSlurmdbd) {
  struct Case {
    std::string query;
    std::vector<std::string> fields;
  };
  const std::vector<Case> cases = {
      {"by=nope", {"by"}},
      {"since=yesterday&until=2026-13-01", {"since", "until"}},
      {"user=Not%20A%20User", {"user"}},
      {"since=2026-12-02&until=2026-12-01", {"since"}},
      {"since=2024-01-01&until=2026-01-01", {"since"}},  // more than 366 days
  };
  for (const auto& c : cases) {
    auto res = get("/v1/usage?" + c.query, kRootToken);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << c.query << ": " << res->body;
    std::vector<std::string> fields;
    const json answer = body(res);
    for (const auto& e : answer["errors"]) {
      EXPECT_EQ(e["code"], "api.invalid_parameter");
      fields.push_back(e["field"]);
    }
    EXPECT_EQ(fields, c.fields) << c.query;
  }
  EXPECT_TRUE(queries().empty());
}

TEST_F(UsageRoutesTest, AnExplicitWindowIsAskedAsIs) {
  auto res = get("/v1/usage?since=2026-12-01&until=2026-12-01T12:00:00Z", kRootToken);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(body(res)["since"], "2026-12-01T00:00:00.000Z");
  EXPECT_EQ(body(res)["until"], "2026-12-01T12:00:00.000Z");
  ASSERT_EQ(queries().size(), 1u);
  EXPECT_EQ(queries()[0].start_time, 1796083200);
  EXPECT_EQ(queries()[0].end_time, 1796083200 + 12 * 3600);
}

TEST_F(UsageRoutesTest, NoAccountingIs501AndNeverFigures) {
  failure_ = slurm::makeSlurmError(slurm::kErrAccountingUnavailable, "slurmdb_jobs",
                                   "slurmrestd has no /slurmdb/v0.0.45/ routes (HTTP 404)",
                                   slurm::TransportClass::kRejected);
  failure_->http_status = 404;
  for (const char* token : {kAliceToken, kRootToken}) {
    auto res = get("/v1/usage", token);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 501) << res->body;
    EXPECT_EQ(code(res), "usage.accounting_unavailable");
    EXPECT_FALSE(body(res).contains("items"));
    EXPECT_NE(res->body.find("accounting is not available"), std::string::npos) << res->body;
  }
}

TEST_F(UsageRoutesTest, AFailedReadIs502WithSlurmsWords) {
  failure_ = slurm::makeSlurmError(slurm::kErrServerError, "slurmdb_jobs",
                                   "slurmrestd answered HTTP 500: Unspecified error",
                                   slurm::TransportClass::kRejected);
  failure_->http_status = 500;
  auto res = get("/v1/usage", kRootToken);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 502) << res->body;
  EXPECT_EQ(code(res), "usage.slurm_error");
  EXPECT_NE(res->body.find("Unspecified error"), std::string::npos);
}

TEST_F(UsageRoutesTest, NeedsAToken) {
  auto res = get("/v1/usage", "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_TRUE(queries().empty());
}

// A job submitted through the API, whose attempt ran in its attempt directory as the site's
// Slurm user (shared mode): its runs are tied to it, its owner's and nobody else's.
TEST_F(UsageRoutesTest, ATunePlaneJobsRunsAreTiedToItByItsAttemptDirectory) {
  const std::string id = submitJob(kAliceToken, "tied");
  ASSERT_FALSE(id.empty());
  auto dir = staging::attemptDir(context_.site.staging_root, id, 1);
  ASSERT_TRUE(dir);
  const int64_t t = now() - 7200;
  runs_ = {usageRun(11, service(), "general", t, 1800, 4, 1, *dir),
           usageRun(11, service(), "general", t + 3600, 900, 4, 1, *dir + "/"),  // a requeued run
           usageRun(12, "bob", "team-b", t, 600, 1, 0, *dir)};                   // bob's --chdir
  runs_[1].restart_count = 1;
  auto res = get("/v1/usage?by=job", kRootToken);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json b = body(res);
  ASSERT_EQ(b["items"].size(), 1u);
  EXPECT_EQ(b["items"][0]["job"], id);
  EXPECT_EQ(b["items"][0]["owner"], "alice");
  EXPECT_EQ(b["items"][0]["attempts"], json::array({1}));
  EXPECT_EQ(b["items"][0]["runs"], 2);
  EXPECT_EQ(b["items"][0]["cpu_seconds"], 4 * 2700);
  EXPECT_EQ(b["items"][0]["gpu_seconds"], 2700);
  EXPECT_EQ(b["total"]["runs"], 3);  // bob's run is counted, as not TunePlane's
  EXPECT_EQ(b["total"]["tuneplane"]["runs"], 2);
  // alice sees her job; bob only his own run.
  auto as_alice = get("/v1/usage?by=owner");
  ASSERT_TRUE(as_alice);
  b = body(as_alice);
  ASSERT_EQ(b["items"].size(), 1u);
  EXPECT_EQ(b["items"][0]["owner"], "alice");
  EXPECT_EQ(b["total"]["runs"], 2);
  auto as_bob = get("/v1/usage", kBobToken);
  ASSERT_TRUE(as_bob);
  b = body(as_bob);
  EXPECT_EQ(b["total"]["runs"], 1);
  EXPECT_EQ(b["total"]["tuneplane"]["runs"], 0);
}

TEST_F(UsageRoutesTest, AtMostTwoReadsAtOnceTheThirdIs429) {
  {
    std::lock_guard<std::mutex> lock(reader_mu_);
    hold_ = true;
  }
  auto ask = [this](const char* token) {
    return std::async(std::launch::async, [this, token] {
      auto res = checkedClient(server_->port())->Get("/v1/usage", bearer(token));
      return res ? res->status : -1;
    });
  };
  auto first = ask(kRootToken);
  auto second = ask(kAliceToken);
  {
    std::unique_lock<std::mutex> lock(reader_mu_);
    ASSERT_TRUE(reader_cv_.wait_for(lock, std::chrono::seconds(30), [&] { return reading_ == 2; }));
  }
  auto third = get("/v1/usage", kBobToken);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->status, 429);
  EXPECT_EQ(code(third), "usage.busy");
  EXPECT_EQ(third->get_header_value("Retry-After"), "5");
  {
    std::lock_guard<std::mutex> lock(reader_mu_);
    hold_ = false;
  }
  reader_cv_.notify_all();
  EXPECT_EQ(first.get(), 200);
  EXPECT_EQ(second.get(), 200);
}

TEST_F(UsageRoutesTest, MetricsCarryTheTeamsFiguresFromOneCachedRead) {
  const int64_t t = now() - 3600;
  runs_ = {usageRun(1, "alice", "team-a", t, 1800, 2, 1, "/home/alice")};
  auto scrape = [&] {
    auto res = http_->Get("/metrics");
    EXPECT_TRUE(res && res->status == 200);
    return res ? res->body : "";
  };
  const std::string first = scrape();
  EXPECT_NE(first.find("tuneplane_usage_cpu_hours{team=\"team-a\",origin=\"other\"} 1.000\n"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("tuneplane_usage_gpu_hours{team=\"team-a\",origin=\"other\"} 0.500\n"),
            std::string::npos);
  EXPECT_NE(first.find("tuneplane_usage_cpu_hours{team=\"team-a\",origin=\"tuneplane\"} 0.000\n"),
            std::string::npos);
  EXPECT_NE(first.find("tuneplane_usage_accounting_up 1\n"), std::string::npos);
  EXPECT_NE(first.find("tuneplane_usage_window_seconds 86400\n"), std::string::npos);
  EXPECT_EQ(first.find("alice"), std::string::npos);  // no user name on the public route
  scrape();
  ASSERT_EQ(queries().size(), 1u);  // the second scrape read nothing
  EXPECT_TRUE(queries()[0].users.empty());
  EXPECT_EQ(queries()[0].end_time - queries()[0].start_time, 86400);
}

}  // namespace
}  // namespace tuneplane::api::testing
