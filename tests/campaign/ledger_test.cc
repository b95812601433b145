// The jobs' own ledger (ledger.h): crafted ledgers, one row each, for what the checker must
// find (two runs at once, an attempt that started after a later one, a run killed before it
// recorded its end, malformed records) and must not (runs one after another, a run that ends
// as the next starts); and the prologue run by a real bash, ending by itself and on SIGTERM.
#include "campaign/ledger.h"

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/subprocess.h"
#include "support/test_files.h"
#include "support/wait.h"

namespace tuneplane::campaign {
namespace {

using ::testing::HasSubstr;

// "start|end SECONDS.MICROS JOB ATTEMPT PID" lines; times in whole seconds from 1000.
std::string ledgerLine(const char* kind, int at, int job, int attempt, int pid) {
  return std::string(kind) + " " + std::to_string(1000 + at) + ".000000 " + std::to_string(job) +
         " " + std::to_string(attempt) + " " + std::to_string(pid) + "\n";
}
int64_t atSecond(int at) {
  return (1000 + int64_t{at}) * 1'000'000;
}

// No bound known for a run that recorded no end.
const EndBound kNoBound = [](const LedgerRun&) { return std::optional<int64_t>(); };

struct Row {
  const char* name;
  std::string ledger;
  std::optional<int> bound_at;  // the bound of every run without an end
  int runs;
  int overlaps;
  int out_of_order;
  size_t violations;
};

// The row's name, not its bytes, in ctest's list and gtest's output.
void PrintTo(const Row& row, std::ostream* out) {
  *out << row.name;
}

class LedgerTable : public ::testing::TestWithParam<Row> {};

TEST_P(LedgerTable, FindsWhatTheRowSays) {
  const Row& row = GetParam();
  const EndBound bound = [&](const LedgerRun&) -> std::optional<int64_t> {
    if (!row.bound_at) return std::nullopt;
    return atSecond(*row.bound_at);
  };
  const LedgerVerdict v = checkLedger(row.ledger, bound);
  EXPECT_EQ(static_cast<int>(v.runs.size()), row.runs);
  EXPECT_EQ(v.overlaps, row.overlaps);
  EXPECT_EQ(v.out_of_order, row.out_of_order);
  EXPECT_EQ(v.violations.size(), row.violations) << ::testing::PrintToString(v.violations) << "\n"
                                                 << row.ledger;
}

INSTANTIATE_TEST_SUITE_P(
    Ledger, LedgerTable,
    ::testing::Values(Row{"Empty", "", std::nullopt, 0, 0, 0, 0},
                      Row{"OneRun",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("end", 9, 5, 1, 77),
                          std::nullopt, 1, 0, 0, 0},
                      Row{"TwoAttemptsOneAfterTheOther",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("end", 10, 5, 1, 77) +
                              ledgerLine("start", 30, 6, 2, 80) + ledgerLine("end", 40, 6, 2, 80),
                          std::nullopt, 2, 0, 0, 0},
                      Row{"TheNextStartsTheMomentTheFirstEnds",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("end", 20, 5, 1, 77) +
                              ledgerLine("start", 20, 6, 2, 80) + ledgerLine("end", 40, 6, 2, 80),
                          std::nullopt, 2, 0, 0, 0},
                      Row{"TwoAttemptsAtOnce",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("start", 20, 6, 2, 80) +
                              ledgerLine("end", 30, 5, 1, 77) + ledgerLine("end", 40, 6, 2, 80),
                          std::nullopt, 2, 1, 0, 1},
                      Row{"TwoSlurmJobsOfOneAttemptAtOnce",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("start", 1, 8, 1, 91) +
                              ledgerLine("end", 9, 5, 1, 77) + ledgerLine("end", 9, 8, 1, 91),
                          std::nullopt, 2, 1, 0, 1},
                      Row{"AnEarlierAttemptStartedAfterALaterOne",
                          ledgerLine("start", 0, 6, 2, 80) + ledgerLine("end", 10, 6, 2, 80) +
                              ledgerLine("start", 30, 5, 1, 77) + ledgerLine("end", 40, 5, 1, 77),
                          std::nullopt, 2, 0, 1, 1},
                      Row{"AStartedAndOverlappingEarlierAttemptIsBoth",
                          ledgerLine("start", 0, 6, 2, 80) + ledgerLine("start", 5, 5, 1, 77) +
                              ledgerLine("end", 10, 6, 2, 80) + ledgerLine("end", 12, 5, 1, 77),
                          std::nullopt, 2, 1, 1, 2},
                      Row{"AKilledRunBoundedBeforeTheNextStarts",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("start", 30, 6, 2, 80) +
                              ledgerLine("end", 40, 6, 2, 80),
                          25, 2, 0, 0, 0},
                      Row{"AKilledRunBoundedAfterTheNextStarted",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("start", 30, 6, 2, 80) +
                              ledgerLine("end", 40, 6, 2, 80),
                          35, 2, 1, 0, 1},
                      Row{"AKilledRunWithNoBoundRunsForEver",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("start", 300, 6, 2, 80) +
                              ledgerLine("end", 400, 6, 2, 80),
                          std::nullopt, 2, 1, 0, 1},
                      Row{"ARestartInOneSlurmJobIsTwoRunsOneAfterTheOther",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("end", 5, 5, 1, 77) +
                              ledgerLine("start", 9, 5, 1, 78) + ledgerLine("end", 12, 5, 1, 78),
                          std::nullopt, 2, 0, 0, 0},
                      Row{"AMalformedLineAndAnEndWithoutItsStart",
                          ledgerLine("start", 0, 5, 1, 77) + "start yesterday 5 1 77\n" +
                              ledgerLine("end", 3, 9, 1, 12) + ledgerLine("end", 5, 5, 1, 77),
                          std::nullopt, 1, 0, 0, 2},
                      Row{"AnEndThatNamesAnotherAttemptEndsNothing",
                          ledgerLine("start", 0, 5, 1, 77) + ledgerLine("end", 3, 5, 2, 77) +
                              ledgerLine("start", 9, 6, 2, 80),
                          4, 2, 0, 0, 1}),
    [](const ::testing::TestParamInfo<Row>& info) { return std::string(info.param.name); });

TEST(Ledger, TimesKeepTheirMicrosecondsAndACommaAsTheSeparator) {
  const LedgerVerdict v =
      checkLedger("start 1796535528,000007 5 1 77\nend 1796535528.1 5 1 77\n", kNoBound);
  ASSERT_EQ(v.runs.size(), 1u);
  EXPECT_EQ(v.runs[0].start_us, 1796535528'000007);
  EXPECT_EQ(v.runs[0].end_us, 1796535528'100000);
  EXPECT_EQ(v.runs[0].until_us, 1796535528'100000);
  EXPECT_TRUE(v.violations.empty());
}

TEST(Ledger, AViolationNamesBothRunsAndTheirSlurmJobs) {
  const LedgerVerdict v =
      checkLedger(ledgerLine("start", 0, 5, 1, 77) + ledgerLine("start", 20, 6, 2, 80) +
                      ledgerLine("end", 40, 6, 2, 80),
                  kNoBound);
  ASSERT_EQ(v.violations.size(), 1u);
  EXPECT_THAT(v.violations[0], HasSubstr("RAN AT ONCE"));
  EXPECT_THAT(v.violations[0], HasSubstr("attempt 2's command in Slurm job 6"));
  EXPECT_THAT(v.violations[0], HasSubstr("attempt 1's command in Slurm job 5"));
  EXPECT_THAT(v.violations[0], HasSubstr("no end recorded"));
}

// The prologue as a job runs it: bash -c with the job's variables. It records its start and
// its end, both when the command ends by itself and when a cancel's SIGTERM reaches its
// process group (as Slurm's, and the simulator's, do).
class LedgerPrologue : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tp-ledger-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::vector<std::string> env(int job, int attempt) const {
    return test::environmentWith({"TUNEPLANE_CHECKPOINT_DIR=" + dir_,
                                  "SLURM_JOB_ID=" + std::to_string(job),
                                  "TUNEPLANE_ATTEMPT=" + std::to_string(attempt)});
  }
  std::string ledger() const { return test::readFile(dir_ + "/" + std::string(kLedgerFile)); }
  std::string dir_;
};

TEST_F(LedgerPrologue, RecordsTheStartAndTheEndOfACommandThatEndsByItself) {
  const test::ProcessResult ran =
      test::runProcess({"bash", "-c", ledgerPrologue() + "; echo working; exit 3"},
                       {.scratch = dir_, .env = env(41, 2)});
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_EQ(ran.out, "working\n");
  const LedgerVerdict v = checkLedger(ledger(), kNoBound);
  ASSERT_EQ(v.runs.size(), 1u) << ledger();
  EXPECT_EQ(v.runs[0].slurm_job_id, 41u);
  EXPECT_EQ(v.runs[0].attempt, 2);
  ASSERT_TRUE(v.runs[0].end_us.has_value()) << ledger();
  EXPECT_LE(v.runs[0].start_us, *v.runs[0].end_us);
  EXPECT_TRUE(v.violations.empty());
}

TEST_F(LedgerPrologue, RecordsTheEndOfACommandCancelledBySigterm) {
  // `& wait`: bash runs a trap only between commands, and a SIGTERM that comes while it forks
  // a foreground command would wait for that command; the wait builtin returns at once.
  auto child = test::ChildProcess::start({"bash", "-c", ledgerPrologue() + "; sleep 60 & wait"},
                                         {.scratch = dir_, .env = env(42, 1)}, "job");
  ASSERT_NE(child, nullptr);
  tuneplane::test::waitUntil([&] { return ledger().find("start") != std::string::npos; },
                             std::chrono::seconds(10));
  ASSERT_NE(ledger().find("start"), std::string::npos);
  ::kill(-child->pid(), SIGTERM);  // the job's whole process group, as a cancel's
  EXPECT_EQ(child->waitExit(std::chrono::seconds(30)), 143);
  const LedgerVerdict v = checkLedger(ledger(), kNoBound);
  ASSERT_EQ(v.runs.size(), 1u) << ledger();
  EXPECT_TRUE(v.runs[0].end_us.has_value()) << ledger();
}

}  // namespace
}  // namespace tuneplane::campaign
