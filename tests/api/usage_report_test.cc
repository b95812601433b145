// The usage rules (api/usage_report.h) from tables: which directory is an attempt, how many
// seconds of a run fall in a window, what is counted once, what is TunePlane's, who sees what,
// and the figures of the real slurmdbd answer (21_slurmdb_jobs) as sacct would sum them.
#include "api/usage_report.h"

#include <gtest/gtest.h>

#include "support/fixtures.h"

namespace tuneplane::api {
namespace {

using slurm::AccountingRun;

constexpr const char* kRoot = "/shared/staging";
constexpr const char* kJobA = "train-0123abcd";  // alice's
constexpr const char* kJobB = "tune-89abcdef";   // bob's

std::string attemptPath(const std::string& job, int n, const std::string& user = "") {
  return std::string(kRoot) + (user.empty() ? "" : "/users/" + user) + "/jobs/" + job +
         "/attempts/" + std::to_string(n);
}

AccountingRun acctRun(uint64_t id, const std::string& user, const std::string& account,
                      int64_t start, int64_t end, int64_t cpus, int64_t gpus = 0,
                      const std::string& cwd = "/home/x") {
  AccountingRun r;
  r.job_id = id;
  r.cluster = "tp";
  r.user = user;
  r.account = account;
  r.state = {"COMPLETED"};
  r.submit_time = start > 0 ? start - 1 : 100;
  r.start_time = start;
  r.end_time = end;
  r.elapsed = end > start ? end - start : 0;
  r.cpus = cpus;
  r.gpus = gpus;
  r.working_directory = cwd;
  return r;
}

// alice's job runs as alice (per_user), bob's as bob; the shared-mode job as slurm.user.
std::optional<JobOwnership> knownJobs(const std::string& id) {
  if (id == kJobA) return JobOwnership{"alice", "alice"};
  if (id == kJobB) return JobOwnership{"bob", "bob"};
  if (id == "shared-00000001") return JobOwnership{"carol", ""};
  return std::nullopt;
}

UsageInput usageInput(UsageGrouping by = UsageGrouping::kUser,
                      UsageScope scope = {.everyone = true}) {
  UsageInput in;
  in.window = {1000, 2000};
  in.now = 5000;
  in.by = by;
  in.staging_root = kRoot;
  in.service_user = "tpsvc";
  in.scope = std::move(scope);
  return in;
}

TEST(UsageReport, AttemptDirectoriesOfBothLayoutsAndNothingElse) {
  struct Case {
    std::string root, dir;
    std::optional<AttemptRef> want;
  };
  const std::vector<Case> cases = {
      {kRoot, attemptPath(kJobA, 1), AttemptRef{kJobA, 1}},
      {kRoot, attemptPath(kJobA, 12, "alice"), AttemptRef{kJobA, 12}},
      {kRoot, attemptPath(kJobA, 3) + "/", AttemptRef{kJobA, 3}},
      {std::string(kRoot) + "/", attemptPath(kJobA, 3), AttemptRef{kJobA, 3}},
      {kRoot, "/shared/staging2/jobs/" + std::string(kJobA) + "/attempts/1", std::nullopt},
      {kRoot, "/other/jobs/" + std::string(kJobA) + "/attempts/1", std::nullopt},
      {kRoot, attemptPath(kJobA, 0), std::nullopt},
      {kRoot, std::string(kRoot) + "/jobs/" + kJobA + "/attempts/01", std::nullopt},
      {kRoot, std::string(kRoot) + "/jobs/" + kJobA + "/attempts/1x", std::nullopt},
      {kRoot, std::string(kRoot) + "/jobs/Not_A_Job/attempts/1", std::nullopt},
      {kRoot, attemptPath(kJobA, 1) + "/output", std::nullopt},
      {kRoot, std::string(kRoot) + "/jobs/" + kJobA, std::nullopt},
      {kRoot, std::string(kRoot) + "/users/Bad!/jobs/" + kJobA + "/attempts/1", std::nullopt},
      {kRoot, std::string(kRoot) + "/jobs//" + kJobA + "/attempts/1", std::nullopt},
      {kRoot, std::string(kRoot) + "/jobs/../jobs/" + kJobA + "/attempts/1", std::nullopt},
      {"", attemptPath(kJobA, 1), std::nullopt},
      {"relative", "relative/jobs/" + std::string(kJobA) + "/attempts/1", std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(attemptOfDirectory(c.root, c.dir), c.want) << c.root << " " << c.dir;
  }
}

TEST(UsageReport, RunSecondsAreClippedToTheWindow) {
  struct Case {
    const char* name;
    int64_t start, end, suspended;
    int64_t want;
  };
  // Window [1000, 2000), now 5000.
  const std::vector<Case> cases = {
      {"inside", 1100, 1400, 0, 300},
      {"started before the window", 500, 1400, 0, 400},
      {"ends after the window", 1900, 2600, 0, 100},
      {"spans the window", 0 + 10, 9000, 0, 1000},
      {"still running (end 0): up to now, clipped", 1500, 0, 0, 500},
      {"never started", 0, 0, 0, 0},
      {"ended as it started", 1500, 1500, 0, 0},
      {"ended before the window", 100, 900, 0, 0},
      {"starts at the window's end", 2000, 2100, 0, 0},
      {"half suspended, inside", 1000, 1400, 200, 200},
      {"half suspended, clipped to half its span", 800, 1200, 200, 100},
  };
  for (const auto& c : cases) {
    AccountingRun r = acctRun(1, "alice", "team-a", c.start, c.end, 1);
    r.suspended = c.suspended;
    EXPECT_EQ(runSecondsIn(r, {1000, 2000}, 5000), c.want) << c.name;
  }
}

TEST(UsageReport, EveryRunCountsOnceRequeuedRunsIncluded) {
  // Job 9 ran twice (a requeue): two records, same id, own starts; the second answer's copy
  // of the first record (a repeated record) counts once.
  AccountingRun first = acctRun(9, "alice", "team-a", 1100, 1104, 1);
  first.state = {"PENDING", "REQUEUED"};
  AccountingRun second = acctRun(9, "alice", "team-a", 1300, 1308, 1);
  second.restart_count = 1;
  second.submit_time = 1105;
  const std::vector<AccountingRun> runs = {first, second, first};
  const UsageReport report = buildUsageReport(runs, usageInput(), knownJobs);
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_EQ(report.rows[0].key, "alice");
  EXPECT_EQ(report.rows[0].all, (UsageFigures{12, 0, 2}));
  EXPECT_EQ(report.total, (UsageFigures{12, 0, 2}));
}

TEST(UsageReport, ACancelledPendingJobIsNoRunAnInstantOneIs) {
  AccountingRun cancelled = acctRun(1, "alice", "team-a", 1500, 1500, 1);
  cancelled.state = {"CANCELLED"};
  AccountingRun instant = acctRun(2, "alice", "team-a", 1500, 1500, 1);
  const UsageReport report = buildUsageReport({cancelled, instant}, usageInput(), knownJobs);
  EXPECT_EQ(report.total, (UsageFigures{0, 0, 1}));
}

TEST(UsageReport, CpuAndGpuSecondsAreSecondsTimesTheAllocation) {
  const std::vector<AccountingRun> runs = {acctRun(1, "alice", "team-a", 1000, 1100, 8, 2),
                                           acctRun(2, "bob", "team-b", 1000, 1050, 4, 0)};
  const UsageReport report = buildUsageReport(runs, usageInput(), knownJobs);
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.rows[0].all, (UsageFigures{800, 200, 1}));
  EXPECT_EQ(report.rows[1].all, (UsageFigures{200, 0, 1}));
}

// The rows of one table of runs, grouped each way, as an admin sees them.
TEST(UsageReport, GroupedByUserTeamOwnerAndJob) {
  const std::vector<AccountingRun> runs = {
      acctRun(1, "alice", "team-a", 1000, 1100, 2, 0, attemptPath(kJobA, 1, "alice")),
      acctRun(2, "alice", "team-a", 1200, 1300, 2, 1, attemptPath(kJobA, 2, "alice")),
      acctRun(3, "alice", "general", 1000, 1010, 1),  // alice's own sbatch: not TunePlane's
      acctRun(4, "bob", "team-b", 1000, 1100, 1, 1, attemptPath(kJobB, 1)),
      acctRun(5, "tpsvc", "general", 1000, 1100, 1, 0, attemptPath("shared-00000001", 1)),
  };
  struct Case {
    UsageGrouping by;
    std::vector<std::string> keys;
    std::vector<UsageFigures> all;
    std::vector<UsageFigures> tuneplane;
  };
  const std::vector<Case> cases = {
      {UsageGrouping::kUser,
       {"alice", "bob", "tpsvc"},
       {{410, 100, 3}, {100, 100, 1}, {100, 0, 1}},
       {{400, 100, 2}, {100, 100, 1}, {100, 0, 1}}},
      {UsageGrouping::kTeam,
       {"general", "team-a", "team-b"},
       {{110, 0, 2}, {400, 100, 2}, {100, 100, 1}},
       {{100, 0, 1}, {400, 100, 2}, {100, 100, 1}}},
      {UsageGrouping::kOwner,
       {"alice", "bob", "carol"},
       {{400, 100, 2}, {100, 100, 1}, {100, 0, 1}},
       {{400, 100, 2}, {100, 100, 1}, {100, 0, 1}}},
      {UsageGrouping::kJob,
       {"shared-00000001", kJobA, kJobB},
       {{100, 0, 1}, {400, 100, 2}, {100, 100, 1}},
       {{100, 0, 1}, {400, 100, 2}, {100, 100, 1}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(toString(c.by)));
    const UsageReport report = buildUsageReport(runs, usageInput(c.by), knownJobs);
    ASSERT_EQ(report.rows.size(), c.keys.size());
    for (size_t i = 0; i < c.keys.size(); ++i) {
      EXPECT_EQ(report.rows[i].key, c.keys[i]);
      EXPECT_EQ(report.rows[i].all, c.all[i]) << c.keys[i];
      EXPECT_EQ(report.rows[i].tuneplane, c.tuneplane[i]) << c.keys[i];
    }
    // The total is every run the caller sees, whatever the grouping keeps in its rows.
    EXPECT_EQ(report.total, (UsageFigures{610, 200, 5}));
    EXPECT_EQ(report.total_tuneplane, (UsageFigures{600, 200, 4}));
  }
  const UsageReport by_job = buildUsageReport(runs, usageInput(UsageGrouping::kJob), knownJobs);
  const UsageRow& a = by_job.rows[1];
  EXPECT_EQ(a.owner, "alice");
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.team, "team-a");
  EXPECT_EQ(a.attempts, (std::vector<int>{1, 2}));
  EXPECT_EQ(by_job.rows[0].owner, "carol");  // shared mode: ran as slurm.user, carol's job
}

TEST(UsageReport, ARunIsTunePlanesOnlyWhenItsJobIsKnownAndRanAsItsUser) {
  struct Case {
    const char* name;
    AccountingRun run;
    bool tuneplane;
  };
  const std::vector<Case> cases = {
      {"alice's attempt, run as alice",
       acctRun(1, "alice", "a", 1000, 1010, 1, 0, attemptPath(kJobA, 1)), true},
      {"bob with --chdir into alice's attempt",
       acctRun(2, "bob", "b", 1000, 1010, 1, 0, attemptPath(kJobA, 1)), false},
      {"a job the store does not have",
       acctRun(3, "alice", "a", 1000, 1010, 1, 0, attemptPath("ghost-00000000", 1)), false},
      {"shared mode: run as slurm.user",
       acctRun(4, "tpsvc", "a", 1000, 1010, 1, 0, attemptPath("shared-00000001", 1)), true},
      {"shared-mode job run as someone else",
       acctRun(5, "alice", "a", 1000, 1010, 1, 0, attemptPath("shared-00000001", 1)), false},
      {"outside the staging root", acctRun(6, "alice", "a", 1000, 1010, 1, 0, "/home/alice"),
       false},
  };
  for (const auto& c : cases) {
    const UsageReport report = buildUsageReport({c.run}, usageInput(), knownJobs);
    EXPECT_EQ(report.total_tuneplane.runs, c.tuneplane ? 1 : 0) << c.name;
    EXPECT_EQ(report.total.runs, 1) << c.name;  // counted either way
  }
}

TEST(UsageReport, AUserSeesTheirJobsAndTheirOwnUnixUsersRunsOnly) {
  const std::vector<AccountingRun> runs = {
      acctRun(1, "alice", "team-a", 1000, 1100, 1, 0, attemptPath(kJobA, 1)),  // alice's job
      acctRun(2, "alice", "team-a", 1000, 1010, 1),                            // alice's own sbatch
      acctRun(3, "bob", "team-b", 1000, 1100, 1, 0, attemptPath(kJobB, 1)),    // bob's job
      acctRun(4, "bob", "team-b", 1000, 1100, 1),                              // bob's own sbatch
      acctRun(5, "tpsvc", "general", 1000, 1100, 1, 0,
              attemptPath("shared-00000001", 1)),     // carol's
      acctRun(6, "tpsvc", "general", 1000, 1100, 1),  // slurm.user's own run: nobody's
  };
  struct Case {
    UsageScope scope;
    UsageFigures want;
  };
  const std::vector<Case> cases = {
      {{.everyone = false, .user = "alice", .unix_user = "alice"}, {110, 0, 2}},
      {{.everyone = false, .user = "bob", .unix_user = "bob"}, {200, 0, 2}},
      {{.everyone = false, .user = "carol", .unix_user = "carol"}, {100, 0, 1}},
      // A user mapped to slurm.user sees their jobs, never slurm.user's other runs.
      {{.everyone = false, .user = "carol", .unix_user = "tpsvc"}, {100, 0, 1}},
      {{.everyone = true}, {510, 0, 6}},
  };
  for (const auto& c : cases) {
    const UsageReport report =
        buildUsageReport(runs, usageInput(UsageGrouping::kUser, c.scope), knownJobs);
    EXPECT_EQ(report.total, c.want) << c.scope.user;
    EXPECT_EQ(report.everyone, c.scope.everyone);
  }
}

// The real answer (21_slurmdb_jobs, v0.0.45 and v0.0.44): the figures sacct would give,
// CPUTimeRAW = elapsed × AllocCPUS summed over every run, the requeued one's first run too.
TEST(UsageReport, TheRecordedAnswerSumsAsSacctWould) {
  struct Case {
    std::string version;
    int64_t since, until;
    int64_t alice_cpu, bob_cpu, bob_gpu, alice_runs;
  };
  const std::vector<Case> cases = {
      // alice: 1 CPU × 4 s (first run of 9) + 2 × 4 (job 7) + 1 × 8 (second run of 9).
      {"", 1796653219, 1796653416, 20, 4, 4, 3},
      // alice: 1 × 3 (first run of 15) + 1 × 1 (12) + 2 × 3 (13) + 1 × 8 (second run of 15).
      {"v0.0.44", 1796653424, 1796653611, 18, 3, 3, 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.version);
    const auto t = c.version.empty()
                       ? test::transcript("21_slurmdb_jobs")
                       : test::versionTranscript(c.version, "21_slurmdb_jobs", "transcripts-26.05");
    auto runs = slurm::decodeSlurmdbJobs(t["exchanges"][3]["response"]["body"].dump());
    ASSERT_TRUE(runs) << runs.error().describe();
    UsageInput in = usageInput();
    in.window = {c.since, c.until};
    in.now = c.until;
    const UsageReport report = buildUsageReport(*runs, in, knownJobs);
    ASSERT_EQ(report.rows.size(), 2u);
    EXPECT_EQ(report.rows[0].key, "alice");
    EXPECT_EQ(report.rows[0].all, (UsageFigures{c.alice_cpu, 0, c.alice_runs}));
    EXPECT_EQ(report.rows[1].all, (UsageFigures{c.bob_cpu, c.bob_gpu, 1}));
    // Recorded from a plain directory, not TunePlane's: counted, marked as not TunePlane's.
    EXPECT_EQ(report.total_tuneplane, UsageFigures{});
  }
}

TEST(UsageReport, JsonHasHoursSecondsAndTheTunePlaneShare) {
  const std::vector<AccountingRun> runs = {
      acctRun(1, "alice", "team-a", 1000, 1900, 4, 1, attemptPath(kJobA, 1))};
  const auto json = usageReportJson(buildUsageReport(runs, usageInput(), knownJobs));
  EXPECT_EQ(json["since"], "1970-01-01T00:16:40.000Z");
  EXPECT_EQ(json["until"], "1970-01-01T00:33:20.000Z");
  EXPECT_EQ(json["by"], "user");
  EXPECT_EQ(json["scope"], "all");
  ASSERT_EQ(json["items"].size(), 1u);
  const auto& item = json["items"][0];
  EXPECT_EQ(item["user"], "alice");
  EXPECT_EQ(item["cpu_seconds"], 3600);
  EXPECT_DOUBLE_EQ(item["cpu_hours"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(item["gpu_hours"].get<double>(), 0.25);
  EXPECT_EQ(item["runs"], 1);
  EXPECT_EQ(item["tuneplane"]["cpu_seconds"], 3600);
  EXPECT_EQ(json["total"]["tuneplane"]["gpu_seconds"], 900);
  const auto by_job =
      usageReportJson(buildUsageReport(runs, usageInput(UsageGrouping::kJob), knownJobs));
  EXPECT_EQ(by_job["items"][0]["job"], kJobA);
  EXPECT_EQ(by_job["items"][0]["attempts"], nlohmann::json::array({1}));
  EXPECT_FALSE(by_job["items"][0].contains("tuneplane"));
}

TEST(UsageReport, TimesOfTheQuery) {
  struct Case {
    const char* text;
    std::optional<int64_t> want;
  };
  const std::vector<Case> cases = {
      {"2026-12-01", 1796083200},
      {"2026-12-01T08:00:00Z", 1796083200 + 8 * 3600},
      {"2026-12-01T08:00:00.250z", 1796083200 + 8 * 3600},
      {"2026-12-01T08:00:00+01:00", 1796083200 + 7 * 3600},
      {"2026-12-01T08:00:00-00:30", 1796083200 + 8 * 3600 + 1800},
      {"1796083200", 1796083200},
      {"2026-02-30", std::nullopt},
      {"2026-12-01T25:00:00Z", std::nullopt},
      {"2026-12-01T08:00:00", std::nullopt},
      {"2026-12-01 08:00:00Z", std::nullopt},
      {"yesterday", std::nullopt},
      {"", std::nullopt},
      {"-5", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(parseUsageTime(c.text), c.want) << c.text;
}

}  // namespace
}  // namespace tuneplane::api
