// The logs route's reader: the tail cut (pure, from a table) and the safe file access
// (missing, symlinked, FIFO, larger than the window).
#include "api/log_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tuneplane::api {
namespace {

TEST(LogSourceTest, CutTable) {
  struct Case {
    std::string name;
    std::string window;
    bool starts_file;
    std::size_t max_lines;
    std::string text;
    bool truncated;
    std::size_t lines;
  };
  const std::vector<Case> cases = {
      {"whole small file", "a\nb\n", true, 10, "a\nb\n", false, 2},
      {"last line unterminated", "a\nb", true, 10, "a\nb", false, 2},
      {"empty", "", true, 10, "", false, 0},
      {"too many lines", "a\nb\nc\n", true, 2, "b\nc\n", true, 2},
      {"window starts mid-line", "tail of x\nb\nc\n", false, 10, "b\nc\n", true, 2},
      {"one line, limit one", "only\n", true, 1, "only\n", false, 1},
  };
  for (const auto& c : cases) {
    const LogSnapshot cut = cutLog(c.window, c.starts_file, c.max_lines);
    EXPECT_EQ(cut.text, c.text) << c.name;
    EXPECT_EQ(cut.truncated, c.truncated) << c.name;
    EXPECT_EQ(cut.lines, c.lines) << c.name;
  }
}

class LogFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tp-api-logs-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::filesystem::create_directories(dir_ + "/logs");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/logs/" + name, std::ios::binary) << text;
  }
  std::string dir_;
};

TEST_F(LogFileTest, ReadsStdoutAndStderrOfAPool) {
  write("main.out", "hello\n");
  write("main.err", "oops\n");
  auto out = readLog(dir_, "main", LogStream::kStdout);
  ASSERT_TRUE(out) << out.error().describe();
  EXPECT_EQ(out->text, "hello\n");
  EXPECT_FALSE(out->missing);
  EXPECT_EQ(out->file_bytes, 6u);
  EXPECT_EQ(readLog(dir_, "main", LogStream::kStderr)->text, "oops\n");
}

TEST_F(LogFileTest, AMissingLogIsNotAnError) {
  auto out = readLog(dir_, "main", LogStream::kStdout);
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->missing);
  EXPECT_FALSE(out->reason.empty());
  auto no_dir = readLog(dir_ + "/nope", "main", LogStream::kStdout);
  ASSERT_TRUE(no_dir);
  EXPECT_TRUE(no_dir->missing);
}

TEST_F(LogFileTest, ASymlinkOrAFifoIsRefusedNotFollowed) {
  std::filesystem::create_symlink("/etc/passwd", dir_ + "/logs/main.out");
  auto link = readLog(dir_, "main", LogStream::kStdout);
  ASSERT_FALSE(link);
  EXPECT_EQ(link.error().code, "control.unsafe_log");
  ASSERT_EQ(::mkfifo((dir_ + "/logs/main.err").c_str(), 0600), 0);
  auto fifo = readLog(dir_, "main", LogStream::kStderr);  // must not block
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().code, "control.unsafe_log");
}

TEST_F(LogFileTest, APoolNameCannotTraverse) {
  auto out = readLog(dir_, "../../etc/passwd", LogStream::kStdout);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, "logs.invalid_pool");
}

TEST_F(LogFileTest, ALargeLogGivesItsTailWithinTheLimits) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + "\n";
  write("main.out", big);
  auto out = readLog(dir_, "main", LogStream::kStdout);
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->truncated);
  EXPECT_LE(out->text.size(), kMaxLogBytes);
  EXPECT_LE(out->lines, kMaxLogLines);
  EXPECT_TRUE(out->text.ends_with("line 19999\n"));
  EXPECT_TRUE(out->text.starts_with("line "));  // starts at a line
  EXPECT_EQ(out->file_bytes, big.size());
}

TEST_F(LogFileTest, OneHugeLineGivesItsLastBytes) {
  write("main.out", std::string(200 * 1024, 'x'));
  auto out = readLog(dir_, "main", LogStream::kStdout);
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->truncated);
  EXPECT_EQ(out->text.size(), kMaxLogBytes);
}

}  // namespace
}  // namespace tuneplane::api
