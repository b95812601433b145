// `tuneplane usage` end to end (e2e_fixture.h): the simulator with --accounting keeps
// slurmdbd's record of every run, serve reads it through /slurmdb/ (GET /v1/usage) and ties
// each run to its TunePlane job by the attempt directory it ran in; without --accounting the
// site has no accounting, and the command says so and exits 1 — no figures.
#include "e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

class ServeE2eUsageTest : public ServeE2eTest {
 protected:
  std::vector<std::string> simArgs() const override {
    auto args = ServeE2eTest::simArgs();
    args.push_back("--accounting");
    return args;
  }
};

TEST_F(ServeE2eUsageTest, AJobsRunIsCountedForItsOwnerAndTiedToIt) {
  const std::string id = submit(cpuSpec("sleep 2; echo done", "", "counted"));
  ASSERT_FALSE(id.empty());
  waitPhase(id, "Succeeded");

  const auto by_job = alice_->run({"usage", "--by", "job", "--since", "1h", "-o", "json"});
  ASSERT_EQ(by_job.exit_code, 0) << by_job.err;
  const json report = json::parse(by_job.out);
  EXPECT_EQ(report["scope"], "own");
  ASSERT_EQ(report["items"].size(), 1u) << report.dump(2);
  const json& item = report["items"][0];
  EXPECT_EQ(item["job"], id);
  EXPECT_EQ(item["owner"], "alice");
  EXPECT_EQ(item["attempts"], json::array({1}));
  EXPECT_EQ(item["runs"], 1);
  EXPECT_GE(item["cpu_seconds"].get<int64_t>(), 1);  // ≥ 1 s on ≥ 1 CPU
  EXPECT_EQ(item["gpu_seconds"], 0);
  EXPECT_EQ(report["total"]["tuneplane"]["runs"], 1);

  // Text: a table with the total last; the window on stderr.
  const auto text = alice_->run({"usage"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("CPU-HOURS"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("TOTAL"), std::string::npos) << text.out;
  EXPECT_NE(text.err.find("your runs only"), std::string::npos) << text.err;

  // The admin sees it per team; bob does not see alice's job.
  const auto by_team = as(kOpsToken).run({"usage", "--by", "team", "-o", "json"});
  ASSERT_EQ(by_team.exit_code, 0) << by_team.err;
  const json teams = json::parse(by_team.out);
  EXPECT_EQ(teams["scope"], "all");
  EXPECT_EQ(teams["total"]["tuneplane"]["runs"], 1) << teams.dump(2);
  const auto bob = as(kBobToken).run({"usage", "-o", "json"});
  ASSERT_EQ(bob.exit_code, 0) << bob.err;
  EXPECT_EQ(json::parse(bob.out)["total"]["tuneplane"]["runs"], 0);
  // A user asking for another user's runs: refused (403 → exit 4).
  EXPECT_EQ(as(kBobToken).run({"usage", "--user", "alice"}).exit_code, 4);
  // /metrics: the figures of the last 24 h, by team and origin.
  EXPECT_EQ(test::metricValue(serve_->url(), "tuneplane_usage_accounting_up"), 1.0);
}

using ServeE2eNoAccountingTest = ServeE2eTest;

TEST_F(ServeE2eNoAccountingTest, ASiteWithoutSlurmdbdSaysSoAndExitsOne) {
  const auto plain = alice_->run({"usage"});
  EXPECT_EQ(plain.exit_code, 1) << plain.out << plain.err;
  EXPECT_NE(plain.err.find("accounting is not available"), std::string::npos) << plain.err;
  EXPECT_NE(plain.err.find("usage.accounting_unavailable"), std::string::npos) << plain.err;
  EXPECT_EQ(plain.out.find("TOTAL"), std::string::npos) << plain.out;
  const auto as_json = as(kOpsToken).run({"usage", "-o", "json"});
  EXPECT_EQ(as_json.exit_code, 1);
  EXPECT_EQ(as_json.out.find("\"items\""), std::string::npos) << as_json.out;
  EXPECT_EQ(test::metricValue(serve_->url(), "tuneplane_usage_accounting_up"), 0.0);
}

}  // namespace
}  // namespace tuneplane::cli::testing
