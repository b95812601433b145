// Reading an attempt's sentinels and logs safely: parse rules, symlinks and FIFOs refused,
// size capped, a logs/ that is itself a symlink refused.
#include "attempt/attempt_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "support/test_files.h"

namespace tuneplane::attempt {
namespace {

namespace fs = std::filesystem;
using test::writeFile;

TEST(AttemptFilesParse, GoodSentinels) {
  auto start = parseStartSentinel(R"({"version":1,"node":"cpu1","time":1700000000})");
  ASSERT_TRUE(start) << start.error().describe();
  EXPECT_EQ(*start, (StartSentinel{"cpu1", 1700000000}));
  auto exit = parseExitSentinel(
      R"({"version":1,"node":"cpu1","exit_code":3,"start_time":10,"end_time":20})");
  ASSERT_TRUE(exit) << exit.error().describe();
  EXPECT_EQ(*exit, (ExitSentinel{"cpu1", 3, 10, 20}));
}

TEST(AttemptFilesParse, BadSentinelsAreRefusedWithTheField) {
  struct Row {
    std::string text;
    std::string field;
  };
  const std::vector<Row> rows = {
      {"", ""},
      {"[1]", ""},
      {R"({"node":"a","exit_code":0,"start_time":1,"end_time":2})", "version"},
      {R"({"version":2,"node":"a","exit_code":0,"start_time":1,"end_time":2})", "version"},
      {R"({"version":1,"exit_code":0,"start_time":1,"end_time":2})", "node"},
      {R"({"version":1,"node":"a","exit_code":"0","start_time":1,"end_time":2})", "exit_code"},
      {R"({"version":1,"node":"a","exit_code":300,"start_time":1,"end_time":2})", "exit_code"},
      {R"({"version":1,"node":"a","exit_code":0,"end_time":2})", "start_time"},
  };
  for (const Row& row : rows) {
    auto parsed = parseExitSentinel(row.text);
    ASSERT_FALSE(parsed) << row.text;
    EXPECT_EQ(parsed.error().code, "control.bad_sentinel");
    EXPECT_EQ(parsed.error().field, row.field) << row.text;
  }
}

class AttemptFilesRead : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-files-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    attempt_ = root_ + "/attempt";
    fs::create_directories(attempt_ + "/logs");
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string root_, attempt_;
};

TEST_F(AttemptFilesRead, ReadsEachPoolsSentinelsAndNamesBadOnes) {
  writeFile(attempt_ + "/logs/start-a.json", R"({"version":1,"node":"n1","time":5})");
  writeFile(attempt_ + "/logs/exit-a.json",
            R"({"version":1,"node":"n1","exit_code":0,"start_time":5,"end_time":9})");
  writeFile(attempt_ + "/logs/start-b.json", "garbage");
  const AttemptSentinels s = readSentinels(attempt_, {"a", "b", "c"});
  EXPECT_EQ(s.start.size(), 1u);
  EXPECT_EQ(s.start.at("a").node, "n1");
  EXPECT_EQ(s.exit.at("a").end_time, 9);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].find("start-b.json"), std::string::npos) << s.problems[0];
  EXPECT_TRUE(s.any());
}

TEST(AttemptFilesParse, AClaimIsAJobIdAndANewline) {
  EXPECT_EQ(parseClaim("4021\n"), 4021u);
  EXPECT_EQ(parseClaim("4294967295\n"), 4294967295u);
  for (const char* bad : {"", "\n", "4021", "0\n", "-4\n", "12a\n", "99999999999\n", "4 \n"}) {
    EXPECT_EQ(parseClaim(bad), std::nullopt) << bad;
  }
}

TEST_F(AttemptFilesRead, TheClaimNamesTheSlurmJobThatStartedFirst) {
  EXPECT_EQ(readSentinels(attempt_, {"a"}).claimed_by, std::nullopt);
  writeFile(attempt_ + "/logs/claim", "");  // created, not written yet
  EXPECT_EQ(readSentinels(attempt_, {"a"}).claimed_by, std::nullopt);
  writeFile(attempt_ + "/logs/claim", "77\n");
  const AttemptSentinels s = readSentinels(attempt_, {"a"});
  EXPECT_EQ(s.claimed_by, 77u);
  EXPECT_TRUE(s.problems.empty());
  fs::remove(attempt_ + "/logs/claim");
  writeFile(root_ + "/planted", "12\n");
  fs::create_symlink(root_ + "/planted", attempt_ + "/logs/claim");
  const AttemptSentinels planted = readSentinels(attempt_, {"a"});
  EXPECT_EQ(planted.claimed_by, std::nullopt);  // never followed
  EXPECT_EQ(planted.problems.size(), 1u);
}

TEST_F(AttemptFilesRead, SymlinkFifoAndHugeFilesAreRefused) {
  writeFile(root_ + "/outside.json", R"({"version":1,"node":"evil","time":1})");
  fs::create_symlink(root_ + "/outside.json", attempt_ + "/logs/start-a.json");
  ASSERT_EQ(::mkfifo((attempt_ + "/logs/start-b.json").c_str(), 0600), 0);
  writeFile(attempt_ + "/logs/start-c.json", std::string(kMaxSentinelBytes + 1, ' '));
  const AttemptSentinels s = readSentinels(attempt_, {"a", "b", "c"});
  EXPECT_TRUE(s.start.empty());
  EXPECT_EQ(s.problems.size(), 3u);
}

TEST_F(AttemptFilesRead, LogsDirThatIsASymlinkIsNotFollowed) {
  fs::remove_all(attempt_ + "/logs");
  fs::create_directories(root_ + "/elsewhere");
  writeFile(root_ + "/elsewhere/start-a.json", R"({"version":1,"node":"evil","time":1})");
  writeFile(root_ + "/elsewhere/a.out", "planted");
  fs::create_symlink(root_ + "/elsewhere", attempt_ + "/logs");
  const AttemptSentinels s = readSentinels(attempt_, {"a"});
  EXPECT_FALSE(s.any());
  EXPECT_FALSE(schedulerLogExists(attempt_, "a"));
}

TEST(AttemptFilesParse, AResumeRecordIsAStepOfZeroOrMore) {
  EXPECT_EQ(parseResumeRecord(R"({"version":1,"step":0})"), 0);
  EXPECT_EQ(parseResumeRecord(R"({"version":1,"step":1200})"
                              "\n"),
            1200);
  for (const char* bad : {"", "garbage", R"({"version":2,"step":3})", R"({"version":1})",
                          R"({"version":1,"step":-1})", R"({"version":1,"step":"3"})",
                          R"({"version":1,"step":3.5})", "[3]"}) {
    EXPECT_FALSE(parseResumeRecord(bad)) << bad;
  }
}

// The step an attempt started from: the job writes logs/, so the record is read as safely as
// the sentinels, and anything odd about it just leaves the step unknown.
TEST_F(AttemptFilesRead, TheResumeStepIsReadFromTheRecordAndNothingElse) {
  EXPECT_EQ(readResumeStep(attempt_), std::nullopt);  // not written (yet, or ever)
  writeFile(attempt_ + "/logs/resume.json", R"({"version":1,"step":42})");
  EXPECT_EQ(readResumeStep(attempt_), 42);
  writeFile(attempt_ + "/logs/resume.json", R"({"version":1,"step":-3})");
  EXPECT_EQ(readResumeStep(attempt_), std::nullopt);
  fs::remove(attempt_ + "/logs/resume.json");
  writeFile(root_ + "/planted.json", R"({"version":1,"step":7})");
  fs::create_symlink(root_ + "/planted.json", attempt_ + "/logs/resume.json");
  EXPECT_EQ(readResumeStep(attempt_), std::nullopt);  // never followed
  fs::remove(attempt_ + "/logs/resume.json");
  ASSERT_EQ(::mkfifo((attempt_ + "/logs/resume.json").c_str(), 0600), 0);
  EXPECT_EQ(readResumeStep(attempt_), std::nullopt);  // and a FIFO does not block
  fs::remove(attempt_ + "/logs/resume.json");
  writeFile(attempt_ + "/logs/resume.json", std::string(kMaxSentinelBytes + 1, ' '));
  EXPECT_EQ(readResumeStep(attempt_), std::nullopt);
  fs::remove_all(attempt_ + "/logs");
  EXPECT_EQ(readResumeStep(attempt_), std::nullopt);
  EXPECT_EQ(readResumeStep(root_ + "/no-such-attempt"), std::nullopt);
}

TEST_F(AttemptFilesRead, NoLogsDirMeansNoSentinelsAndNoProblem) {
  fs::remove_all(attempt_ + "/logs");
  const AttemptSentinels s = readSentinels(attempt_, {"a"});
  EXPECT_FALSE(s.any());
  EXPECT_TRUE(s.problems.empty());
}

TEST_F(AttemptFilesRead, SchedulerLogExistsOnlyAsARegularFile) {
  EXPECT_FALSE(schedulerLogExists(attempt_, "a"));
  writeFile(attempt_ + "/logs/a.out", "hello\n");
  EXPECT_TRUE(schedulerLogExists(attempt_, "a"));
  fs::create_symlink(attempt_ + "/logs/a.out", attempt_ + "/logs/b.out");
  EXPECT_FALSE(schedulerLogExists(attempt_, "b"));
}

}  // namespace
}  // namespace tuneplane::attempt
