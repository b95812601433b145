// The log reader: the pure cut (line and UTF-8 boundaries, replacement, exact limits) from a
// table, and readLogTail on real files — a 1 GiB sparse log and 100,000 short lines read
// with bounded I/O, missing files, and the links and special files a job could plant.
#include "attempt/log_tail.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../catalog/temp_dir.h"
#include "../staging/sample_request.h"
#include "slurm/submit_body.h"
#include "support/subprocess.h"

namespace tuneplane::attempt {
namespace {

namespace fs = std::filesystem;
using tuneplane::testing::TempDir;

const std::string kFffd = "\xEF\xBF\xBD";

std::string repeat(const std::string& piece, std::size_t times) {
  std::string out;
  out.reserve(piece.size() * times);
  for (std::size_t i = 0; i < times; ++i) out += piece;
  return out;
}

// Lines "<prefix>NNNNNN\n" numbered from `first`, each exactly `width` bytes with its '\n'.
std::string numberedLines(std::size_t first, std::size_t count, std::size_t width = 12) {
  std::string out;
  char buf[32];
  for (std::size_t i = first; i < first + count; ++i) {
    std::snprintf(buf, sizeof buf, "%06zu", i);
    std::string line = std::string("line ") + buf;
    line.resize(width - 1, '.');
    out += line + "\n";
  }
  return out;
}

// ---- the pure cut ------------------------------------------------------------------------

struct CutCase {
  const char* name;
  std::string window;
  bool starts_file;
  LogTailLimits limits;
  std::string text;
  bool truncated;
  std::size_t lines;
  std::size_t replaced;
};

TEST(CutLogTail, Table) {
  const LogTailLimits small{16, 3};
  const CutCase cases[] = {
      {"empty file", "", true, {}, "", false, 0, 0},
      {"whole lines", "a\nb\n", true, {}, "a\nb\n", false, 2, 0},
      {"no trailing newline: the last line counts", "a\nb", true, {}, "a\nb", false, 2, 0},
      {"CRLF pairs stay whole", "a\r\nb\r\nc\r\n", true, {16, 2}, "b\r\nc\r\n", true, 2, 0},
      {"a lone CR is not a line end", "1%\r50%\r100%\n", true, {}, "1%\r50%\r100%\n", false, 1, 0},
      {"window inside the file drops its partial first line",
       "xx\nabc\n",
       false,
       {},
       "abc\n",
       true,
       1,
       0},
      {"a newline as the window's first byte: the next line is whole",
       "\nabc\n",
       false,
       {},
       "abc\n",
       true,
       1,
       0},
      {"window cut between CR and LF", "\nabc\r\n", false, {}, "abc\r\n", true, 1, 0},
      {"line limit", "1\n2\n3\n4\n", true, small, "2\n3\n4\n", true, 3, 0},
      {"exactly the line limit", "1\n2\n3\n", true, small, "1\n2\n3\n", false, 3, 0},
      {"byte limit on a line boundary", "0123456\n89abcde\nx\n", true, small, "89abcde\nx\n", true,
       2, 0},
      {"exactly the byte limit",
       "0123456\n89abcdef\n",
       true,
       {17, 3},
       "0123456\n89abcdef\n",
       false,
       2,
       0},
      {"a line longer than the limit: its tail", "0123456789abcdefghij\n", true, small,
       "56789abcdefghij\n", true, 1, 0},
      {"a long line before a short one is dropped", "0123456789abcdefghij\nok\n", true, small,
       "ok\n", true, 1, 0},
      {"long line tail starts on a character boundary", repeat("\xE2\x82\xAC", 7) + "\n", true,
       small, repeat("\xE2\x82\xAC", 5) + "\n", true, 1, 0},
      {"window starting inside a character", std::string("\x82\xAC") + "abc", false, small, "abc",
       true, 1, 0},
      {"a window starting with more trail bytes than a character has shows the rest replaced",
       std::string(8, '\x87') + "1\n",
       false,
       {12, 3},
       repeat(kFffd, 3) + "1\n",
       true,
       1,
       5},
      {"an invalid byte is replaced",
       "a\xFF"
       "b\n",
       true,
       {},
       "a" + kFffd + "b\n",
       false,
       1,
       1},
      {"a truncated sequence inside the text is one replacement",
       "\xE2\x82x\n",
       true,
       {},
       kFffd + "x\n",
       false,
       1,
       1},
      {"maximal subparts: F0 80 80 is three",
       "\xF0\x80\x80\n",
       true,
       {},
       repeat(kFffd, 3) + "\n",
       false,
       1,
       3},
      {"an encoded surrogate is ill-formed",
       "\xED\xA0\x80\n",
       true,
       {},
       repeat(kFffd, 3) + "\n",
       false,
       1,
       3},
      {"an overlong NUL is ill-formed",
       "\xC0\x80\n",
       true,
       {},
       repeat(kFffd, 2) + "\n",
       false,
       1,
       2},
      {"an incomplete character at the end is not written yet",
       "ab\n\xE2\x82",
       true,
       {},
       "ab\n",
       false,
       1,
       0},
      {"an incomplete 4-byte character at the end", "ab\xF0\x9F\x98", true, {}, "ab", false, 1, 0},
      {"a complete character at the end is kept",
       "ab\xF0\x9F\x98\x80",
       true,
       {},
       "ab\xF0\x9F\x98\x80",
       false,
       1,
       0},
      {"line limit with ill-formed lines", "\xFF\n\xFF\n\xFF\n\xFF\n", true, small,
       repeat(kFffd + "\n", 3), true, 3, 3},
      {"ill-formed bytes in the dropped partial line are not counted",
       "x\xFF\nab\n",
       false,
       {},
       "ab\n",
       true,
       1,
       0},
      {"replacement counts against the byte limit",
       "\xFF\xFF\xFF\n\xFF\xFF\xFF\n",
       true,
       {10, 5},
       repeat(kFffd, 3) + "\n",
       true,
       1,
       3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const LogTail tail = cutLogTail(c.window, c.starts_file, c.limits);
    EXPECT_EQ(tail.text, c.text);
    EXPECT_EQ(tail.truncated, c.truncated);
    EXPECT_EQ(tail.lines, c.lines);
    EXPECT_EQ(tail.replaced, c.replaced);
    EXPECT_LE(tail.text.size(), c.limits.max_bytes);
  }
}

// ---- reading files -----------------------------------------------------------------------

// An attempt dir <tmp>/jobs/hello-0a1b2c3d/attempts/1 with an empty logs/.
class LogTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    attempt_ = tmp_.path() + "/jobs/hello-0a1b2c3d/attempts/1";
    fs::create_directories(attempt_ + "/logs");
  }

  std::string logPath(const std::string& name = "main.out") const {
    return attempt_ + "/logs/" + name;
  }
  void writeLog(const std::string& content, const std::string& name = "main.out") const {
    std::ofstream(logPath(name), std::ios::binary | std::ios::trunc) << content;
  }
  Result<LogTail> read(LogStream stream = LogStream::kStdout) const {
    return readLogTail(attempt_, "main", stream);
  }

  TempDir tmp_;
  std::string attempt_;
};

// Bytes this process has read through read(2)/pread(2) so far (/proc/self/io rchar). The
// reader's I/O is bounded by the limit, whatever the file's size; no clock is involved.
std::uint64_t bytesReadSoFar() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

constexpr std::uint64_t kReadSlack = 8192;  // the read of /proc/self/io itself

TEST_F(LogTailTest, ExactlyTheByteLimitIsReturnedWhole) {
  const std::string content = numberedLines(0, 1024, 64);  // 65536 bytes
  ASSERT_EQ(content.size(), kLogTailMaxBytes);
  writeLog(content);
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_EQ(tail->text, content);
  EXPECT_FALSE(tail->truncated);
  EXPECT_EQ(tail->lines, 1024u);
  EXPECT_EQ(tail->file_bytes, 65536u);
}

TEST_F(LogTailTest, OneByteOverTheLimitDropsTheWholeFirstLine) {
  const std::string rest = numberedLines(1, 1023, 64);
  writeLog(std::string(64, 'x') + "\n" + rest);  // 65537 bytes
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_EQ(tail->text, rest);
  EXPECT_TRUE(tail->truncated);
  EXPECT_EQ(tail->lines, 1023u);
  EXPECT_EQ(tail->file_bytes, 65537u);
}

// A character still being written at the end takes no room from the limit: the last line,
// exactly at the limit, still comes back whole (fuzz/regressions/log_tail/…-incomplete-…).
TEST_F(LogTailTest, AnIncompleteLastCharacterTakesNoRoomFromTheLimit) {
  const std::string line(kLogTailMaxBytes, 'a');
  writeLog("zz\n" + line + "\xE2\x82");
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_EQ(tail->text, line);
  EXPECT_TRUE(tail->truncated);
  EXPECT_EQ(tail->lines, 1u);
}

TEST_F(LogTailTest, ExactlyTheLineLimitIsReturnedWhole) {
  const std::string content = numberedLines(0, kLogTailMaxLines);
  writeLog(content);
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_EQ(tail->text, content);
  EXPECT_FALSE(tail->truncated);
  EXPECT_EQ(tail->lines, 2000u);
}

TEST_F(LogTailTest, OneLineOverTheLineLimitDropsTheFirst) {
  writeLog(numberedLines(0, kLogTailMaxLines + 1));
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_EQ(tail->text, numberedLines(1, kLogTailMaxLines));
  EXPECT_TRUE(tail->truncated);
  EXPECT_EQ(tail->lines, 2000u);
}

TEST_F(LogTailTest, AHundredThousandShortLinesGiveTheLast2000WithBoundedReads) {
  writeLog(numberedLines(0, 100000));
  const std::uint64_t before = bytesReadSoFar();
  ASSERT_GT(before, 0u) << "/proc/self/io has no rchar: the read bound cannot be checked";
  auto tail = read();
  const std::uint64_t read_bytes = bytesReadSoFar() - before;
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_EQ(tail->text, numberedLines(98000, 2000));
  EXPECT_TRUE(tail->text.starts_with("line 098000"));
  EXPECT_TRUE(tail->truncated);
  EXPECT_EQ(tail->file_bytes, 1200000u);
  EXPECT_LE(read_bytes, logTailWindow({}) + kReadSlack);
}

TEST_F(LogTailTest, AOneGibSparseLogIsReadFromItsEndOnly) {
  const std::string ending = "\n" + numberedLines(0, 3) + "the last line, no newline";
  const std::uint64_t size = 1ull << 30;
  {
    const int fd = ::open(logPath().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size - ending.size())), 0);
    ASSERT_EQ(::pwrite(fd, ending.data(), ending.size(), static_cast<off_t>(size - ending.size())),
              static_cast<ssize_t>(ending.size()));
    ::close(fd);
  }
  const std::uint64_t before = bytesReadSoFar();
  ASSERT_GT(before, 0u) << "/proc/self/io has no rchar: the read bound cannot be checked";
  auto tail = read();
  const std::uint64_t read_bytes = bytesReadSoFar() - before;
  ASSERT_TRUE(tail) << tail.error().describe();
  // The zeros before the first '\n' are one line that began before the window: dropped.
  EXPECT_EQ(tail->text, numberedLines(0, 3) + "the last line, no newline");
  EXPECT_TRUE(tail->truncated);
  EXPECT_EQ(tail->lines, 4u);
  EXPECT_EQ(tail->file_bytes, size);
  EXPECT_LE(read_bytes, logTailWindow({}) + kReadSlack);
}

TEST_F(LogTailTest, ALineLongerThan64KibShowsItsLastBytes) {
  writeLog("start\n" + std::string(100000, 'x') + "\n");
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_EQ(tail->text, std::string(kLogTailMaxBytes - 1, 'x') + "\n");
  EXPECT_TRUE(tail->truncated);
  EXPECT_EQ(tail->lines, 1u);
}

TEST_F(LogTailTest, MultiByteCharactersAcrossTheCutAreNeverSplit) {
  // One long line of 3-byte characters: whatever the window's first byte, the text starts on
  // a character boundary and holds only whole euro signs.
  const std::string euro = "\xE2\x82\xAC";
  for (std::size_t pad : {0, 1, 2}) {
    SCOPED_TRACE(pad);
    writeLog(std::string(pad, 'a') + repeat(euro, 30000));
    auto tail = read();
    ASSERT_TRUE(tail) << tail.error().describe();
    EXPECT_LE(tail->text.size(), kLogTailMaxBytes);
    EXPECT_EQ(tail->text.size() % 3, 0u);
    EXPECT_EQ(tail->text, repeat(euro, tail->text.size() / 3));
    EXPECT_EQ(tail->replaced, 0u);
  }
  // Lines of 2-byte characters: the cut falls inside a character, the partial line goes.
  const std::string line = repeat("\xC3\xA9", 40) + "\n";  // 81 bytes
  writeLog("\xC3\xA9" + repeat(line, 1000));
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_EQ(tail->text, repeat(line, 809));
  EXPECT_EQ(tail->replaced, 0u);
}

TEST_F(LogTailTest, CrlfLogsKeepTheirPairs) {
  std::string content;
  for (int i = 0; i < 3000; ++i) content += "row " + std::to_string(i) + "\r\n";
  writeLog(content);
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_EQ(tail->lines, 2000u);
  EXPECT_TRUE(tail->text.starts_with("row 1000\r\n"));
  EXPECT_TRUE(tail->text.ends_with("row 2999\r\n"));
}

TEST_F(LogTailTest, InvalidUtf8IsReplacedAndStaysWithinTheLimit) {
  writeLog(repeat(std::string(63, '\xFF') + "\n", 1024));  // 65536 raw bytes, all ill-formed
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  const std::size_t line = 63 * kFffd.size() + 1;
  EXPECT_EQ(tail->lines, kLogTailMaxBytes / line);
  EXPECT_EQ(tail->text, repeat(repeat(kFffd, 63) + "\n", kLogTailMaxBytes / line));
  EXPECT_TRUE(tail->truncated);
  EXPECT_EQ(tail->replaced, 63 * tail->lines);
}

TEST_F(LogTailTest, StderrIsTheErrFile) {
  writeLog("out\n", "main.out");
  writeLog("err\n", "main.err");
  auto out = read(LogStream::kStdout);
  auto err = read(LogStream::kStderr);
  ASSERT_TRUE(out && err);
  EXPECT_EQ(out->text, "out\n");
  EXPECT_EQ(err->text, "err\n");
}

TEST_F(LogTailTest, FileNamesAreTheOnesTheSubmitBodyGivesSlurm) {
  auto request = staging::testing::sampleRequest(attempt_);
  const auto body = slurm::buildSubmitBody(request, "#!/bin/bash\n");
  ASSERT_EQ(body["jobs"].size(), request.components.size());
  for (std::size_t i = 0; i < request.components.size(); ++i) {
    const std::string& pool = request.components[i].pool_name;
    EXPECT_EQ(body["jobs"][i]["standard_output"],
              attempt_ + "/logs/" + *logFileName(pool, LogStream::kStdout));
    EXPECT_EQ(body["jobs"][i]["standard_error"],
              attempt_ + "/logs/" + *logFileName(pool, LogStream::kStderr));
  }
}

TEST_F(LogTailTest, AMissingFileIsEmptyWithAReason) {
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_TRUE(tail->missing);
  EXPECT_TRUE(tail->text.empty());
  EXPECT_NE(tail->reason.find("logs/main.out"), std::string::npos) << tail->reason;

  fs::remove(attempt_ + "/logs");
  tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_TRUE(tail->missing);
  EXPECT_NE(tail->reason.find("no logs/"), std::string::npos) << tail->reason;

  tail = readLogTail(tmp_.path() + "/jobs/hello-0a1b2c3d/attempts/9", "main", LogStream::kStdout);
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_TRUE(tail->missing);
  EXPECT_NE(tail->reason.find("does not exist"), std::string::npos) << tail->reason;
  EXPECT_EQ(tail->reason.find(tmp_.path()), std::string::npos) << tail->reason;
}

// Issue 11: a job Slurm ran that ended without its log could not write in logs/; that is
// the reason, not "not yet". A log that exists is read whatever the job's state.
TEST_F(LogTailTest, ALogMissingAfterTheJobRanSaysTheJobCouldNotWriteIt) {
  for (const LogStream stream : {LogStream::kStdout, LogStream::kStderr}) {
    auto tail = readLogTail(attempt_, "main", stream, JobState::kRanAndEnded);
    ASSERT_TRUE(tail) << tail.error().describe();
    EXPECT_TRUE(tail->missing);
    EXPECT_EQ(tail->reason.rfind(kLogNeverWrittenReason, 0), 0u) << tail->reason;
    EXPECT_NE(tail->reason.find(stream == LogStream::kStdout ? "logs/main.out" : "logs/main.err"),
              std::string::npos)
        << tail->reason;
    EXPECT_EQ(tail->reason.find(tmp_.path()), std::string::npos) << tail->reason;
  }
  auto waiting = readLogTail(attempt_, "main", LogStream::kStdout, JobState::kMayStillWrite);
  ASSERT_TRUE(waiting) << waiting.error().describe();
  EXPECT_EQ(waiting->reason.find("could not write"), std::string::npos) << waiting->reason;

  writeLog("done\n");
  auto written = readLogTail(attempt_, "main", LogStream::kStdout, JobState::kRanAndEnded);
  ASSERT_TRUE(written) << written.error().describe();
  EXPECT_FALSE(written->missing);
  EXPECT_EQ(written->text, "done\n");
  EXPECT_TRUE(written->reason.empty());
}

TEST_F(LogTailTest, EmptyFileIsNotMissing) {
  writeLog("");
  auto tail = read();
  ASSERT_TRUE(tail) << tail.error().describe();
  EXPECT_FALSE(tail->missing);
  EXPECT_FALSE(tail->truncated);
  EXPECT_EQ(tail->text, "");
}

TEST_F(LogTailTest, PoolNamesCannotTraverse) {
  for (const std::string pool : {"", ".", "..", "../main", "a/b", "Main", "main.out", "-a"}) {
    SCOPED_TRACE(pool);
    auto tail = readLogTail(attempt_, pool, LogStream::kStdout);
    ASSERT_FALSE(tail);
    EXPECT_EQ(tail.error().code, "logs.invalid_pool");
    EXPECT_EQ(tail.error().field, "pool");
  }
}

TEST_F(LogTailTest, AttemptDirMustBeCleanAndAbsolute) {
  for (const std::string dir : {"", "relative/1", "/tmp/../etc", "/tmp//x", "/"}) {
    SCOPED_TRACE(dir);
    auto tail = readLogTail(dir, "main", LogStream::kStdout);
    ASSERT_FALSE(tail);
    EXPECT_EQ(tail.error().code, "logs.invalid_attempt_dir");
  }
}

TEST_F(LogTailTest, ASymlinkedLogFileIsRefused) {
  const std::string secret = tmp_.write("secret", "root:SECRET-HASH:19000:0:99999:7:::\n");
  ASSERT_EQ(::symlink(secret.c_str(), logPath().c_str()), 0);
  auto tail = read();
  ASSERT_FALSE(tail);
  EXPECT_EQ(tail.error().code, "logs.symlink");
  EXPECT_NE(tail.error().message.find("logs/main.out"), std::string::npos);
  EXPECT_EQ(tail.error().message.find("SECRET"), std::string::npos);
  // The API hands the message to a client: no server path (issue 16).
  EXPECT_EQ(tail.error().message.find(tmp_.path()), std::string::npos) << tail.error().message;

  // A dangling link (to a file that may appear later) is refused the same way.
  ASSERT_EQ(::symlink("/nonexistent/x", logPath("main.err").c_str()), 0);
  auto err = read(LogStream::kStderr);
  ASSERT_FALSE(err);
  EXPECT_EQ(err.error().code, "logs.symlink");
}

TEST_F(LogTailTest, ASymlinkedLogsFolderIsRefused) {
  const std::string elsewhere = tmp_.path() + "/elsewhere";
  fs::create_directories(elsewhere);
  std::ofstream(elsewhere + "/main.out") << "not the job's log\n";
  fs::remove(attempt_ + "/logs");
  ASSERT_EQ(::symlink(elsewhere.c_str(), (attempt_ + "/logs").c_str()), 0);
  auto tail = read();
  ASSERT_FALSE(tail);
  EXPECT_EQ(tail.error().code, "logs.symlink");
  EXPECT_NE(tail.error().message.find("logs/"), std::string::npos);
  EXPECT_EQ(tail.error().message.find(tmp_.path()), std::string::npos) << tail.error().message;
}

TEST_F(LogTailTest, ASymlinkedAttemptDirIsRefused) {
  const std::string link = tmp_.path() + "/jobs/hello-0a1b2c3d/attempts/2";
  ASSERT_EQ(::symlink(attempt_.c_str(), link.c_str()), 0);
  writeLog("x\n");
  auto tail = readLogTail(link, "main", LogStream::kStdout);
  ASSERT_FALSE(tail);
  EXPECT_EQ(tail.error().code, "logs.symlink");
  EXPECT_EQ(tail.error().message.find(tmp_.path()), std::string::npos) << tail.error().message;
}

TEST_F(LogTailTest, AHardLinkedLogIsRefused) {
  const std::string other = tmp_.write("other", "someone else's file\n");
  ASSERT_EQ(::link(other.c_str(), logPath().c_str()), 0);
  auto tail = read();
  ASSERT_FALSE(tail);
  EXPECT_EQ(tail.error().code, "logs.not_regular_file");
  EXPECT_NE(tail.error().message.find("hard links"), std::string::npos);
}

TEST_F(LogTailTest, ADirectoryInPlaceOfTheLogIsRefused) {
  fs::create_directories(logPath());
  auto tail = read();
  ASSERT_FALSE(tail);
  EXPECT_EQ(tail.error().code, "logs.not_regular_file");
}

// A FIFO with no writer would block a plain open(O_RDONLY) forever. The read runs in a
// child process so that a regression fails this test after a bounded wait, not hangs it.
TEST_F(LogTailTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(logPath().c_str(), 0644), 0);
  const auto exit_code = test::runInChild(
      [&] {
        auto tail = readLogTail(attempt_, "main", LogStream::kStdout);
        return !tail && tail.error().code == "logs.not_regular_file" ? 0 : 1;
      },
      "reading a FIFO as the log");
  ASSERT_TRUE(exit_code) << "reading a FIFO blocked (or the child did not run)";
  EXPECT_EQ(*exit_code, 0) << "a FIFO was not refused as not_regular_file";
}

}  // namespace
}  // namespace tuneplane::attempt
