// Fuzz target: the log tail reader (attempt/log_tail.h) — what `GET /v1/jobs/{id}/logs` and
// `tuneplane logs` show of a log a job wrote, any bytes at all. An input is four control
// bytes (flags; max_bytes, 4…1027; max_lines, 1…64) and then the log's bytes. Properties,
// besides no crash, leak, overflow or undefined behaviour:
//  - the text is valid UTF-8, within max_bytes and max_lines, its line count is right, and
//    with nothing replaced it is the log's own last bytes;
//  - reading only the window at the end (logTailWindow bytes, as readLogTail does) gives the
//    same text, line count and truncation as cutting the whole log;
//  - when the log is valid UTF-8 and fits whole, it comes back whole and not truncated;
//  - readLogTail on a real file (flag bit 0) gives what the cut gives.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "attempt/log_tail.h"
#include "common/text_checks.h"
#include "fuzz_support.h"

namespace tuneplane::fuzz {
namespace {

// A private attempt directory with logs/ in it, made once per process and removed at its exit.
class ScratchAttempt {
 public:
  ScratchAttempt() {
    char path[] = "/tmp/tp-fuzz-logs-XXXXXX";
    FUZZ_CHECK(mkdtemp(path) != nullptr, "cannot create a temporary directory");
    dir_ = path;
    FUZZ_CHECK(mkdir((dir_ + "/logs").c_str(), 0700) == 0, "cannot create logs/");
  }
  ~ScratchAttempt() {
    unlink((dir_ + "/logs/main.out").c_str());
    rmdir((dir_ + "/logs").c_str());
    rmdir(dir_.c_str());
  }
  ScratchAttempt(const ScratchAttempt&) = delete;
  ScratchAttempt& operator=(const ScratchAttempt&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

const std::string& attemptDir() {
  static const ScratchAttempt scratch;
  return scratch.dir();
}

void writeLog(std::string_view bytes) {
  const std::string path = attemptDir() + "/logs/main.out";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  FUZZ_CHECK(fd >= 0, "cannot write " + path);
  const bool written = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  close(fd);
  FUZZ_CHECK(written || bytes.empty(), "cannot write " + path);
}

std::string show(const attempt::LogTail& tail) {
  return "text of " + std::to_string(tail.text.size()) + " bytes, " + std::to_string(tail.lines) +
         " lines, truncated " + std::to_string(tail.truncated) + ", replaced " +
         std::to_string(tail.replaced);
}

std::size_t countLines(std::string_view text) {
  const auto breaks = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return breaks + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

void checkTail(const attempt::LogTail& tail, std::string_view log, bool starts_file,
               const attempt::LogTailLimits& limits) {
  FUZZ_CHECK(isUtf8(tail.text), "not UTF-8: " + show(tail));
  FUZZ_CHECK(tail.text.size() <= limits.max_bytes, "over max_bytes: " + show(tail));
  FUZZ_CHECK(tail.lines <= limits.max_lines, "over max_lines: " + show(tail));
  FUZZ_CHECK(tail.lines == countLines(tail.text), "miscounted lines: " + show(tail));
  FUZZ_CHECK(tail.truncated || starts_file, "a window not at the file's start, untruncated");
  if (tail.replaced == 0) {
    // The log's own last bytes, but for an incomplete character at its very end.
    bool suffix = false;
    for (std::size_t cut = 0; cut <= std::min<std::size_t>(3, log.size()) && !suffix; ++cut) {
      suffix = log.substr(0, log.size() - cut).ends_with(tail.text);
    }
    FUZZ_CHECK(suffix, "not the log's last bytes: " + show(tail));
  }
}

}  // namespace

int testOneLog(std::string_view input) {
  if (input.size() < 4) return 0;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(input[i]); };
  const bool via_file = (byte(0) & 1) != 0;
  attempt::LogTailLimits limits;
  limits.max_bytes = 4 + ((byte(1) | (byte(2) << 8)) % 1024);
  limits.max_lines = 1 + byte(3) % 64;
  const std::string_view log = input.substr(4);

  const attempt::LogTail whole = attempt::cutLogTail(log, true, limits);
  checkTail(whole, log, true, limits);
  const std::size_t want = std::min(log.size(), attempt::logTailWindow(limits));
  const std::string_view window_bytes = log.substr(log.size() - want);
  const bool window_starts_file = want == log.size();
  const attempt::LogTail window = attempt::cutLogTail(window_bytes, window_starts_file, limits);
  checkTail(window, window_bytes, window_starts_file, limits);
  FUZZ_CHECK(window.text == whole.text && window.lines == whole.lines &&
                 window.truncated == whole.truncated,
             "the window gives " + show(window) + "; the whole log " + show(whole));
  if (isUtf8(log) && log.size() <= limits.max_bytes && countLines(log) <= limits.max_lines) {
    FUZZ_CHECK(whole.text == log && !whole.truncated, "a log that fits was cut: " + show(whole));
  }

  if (via_file) {
    writeLog(log);
    const auto read = attempt::readLogTail(attemptDir(), "main", attempt::LogStream::kStdout,
                                           attempt::JobState::kMayStillWrite, limits);
    FUZZ_CHECK(read.has_value(), "readLogTail failed: " + read.error().describe());
    FUZZ_CHECK(read->text == window.text && read->lines == window.lines &&
                   read->truncated == window.truncated && read->file_bytes == log.size(),
               "readLogTail gives " + show(*read) + "; the cut " + show(window));
  }
  return 0;
}

}  // namespace tuneplane::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tuneplane::fuzz::testOneLog(tuneplane::fuzz::asText(data, size));
}
