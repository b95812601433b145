// Log reader benchmark: attempt::readLogTail on a 1 GiB log against `tail -c 65536` of the
// same file, in the same run (rounds alternated, page cache warm for both). The log is
// sparse (ftruncate) with 1 MiB of real log lines at its end, so it costs no disk. Also
// prints readLogTail on a 1 MiB log (its cost must not grow with the file) and a bare
// pread of the last 64 KiB (the floor: what the reader adds over the one syscall it needs).
// Env: TUNEPLANE_BENCH_DIR (default: a new temp dir), TUNEPLANE_BENCH_ROUNDS (default 5).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "attempt/log_tail.h"
#include "bench_dir.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using tuneplane::attempt::kLogTailMaxBytes;
using tuneplane::attempt::LogStream;
using tuneplane::attempt::readLogTail;

constexpr std::uint64_t kBigLog = 1ull << 30;
constexpr std::uint64_t kSmallLog = 1ull << 20;
constexpr int kReadsPerRound = 2000;  // readLogTail and pread: microseconds each
constexpr int kTailsPerRound = 100;   // tail(1): a process each

long long envNumber(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::atoll(v);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A log of `size` bytes: a hole, then 1 MiB (or all of it, if smaller) of log lines.
bool writeLog(const std::string& path, std::uint64_t size) {
  std::string lines;
  for (int i = 0; lines.size() < kSmallLog; ++i) {
    lines += "step " + std::to_string(i) + " loss=0.4213 lr=3e-05 tokens/s=18231 gpu_mem=71.2GiB\n";
  }
  lines.erase(0, lines.size() - std::min<std::uint64_t>(size, kSmallLog));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const auto at = static_cast<off_t>(size - lines.size());
  const bool ok = ::ftruncate(fd, at) == 0 && ::pwrite(fd, lines.data(), lines.size(), at) ==
                                                  static_cast<ssize_t>(lines.size());
  return ::close(fd) == 0 && ok;
}

// Microseconds per call of `op`, over `count` calls.
template <typename Op>
double microsPerCall(int count, Op op) {
  const auto t0 = Clock::now();
  for (int i = 0; i < count; ++i) op();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / count;
}

// `tail -c 65536 FILE >/dev/null`, as a person or a script would run it; false on failure.
bool runTail(const std::string& path) {
  const std::string bytes = std::to_string(kLogTailMaxBytes);
  const char* argv[] = {"tail", "-c", bytes.c_str(), path.c_str(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc =
      ::posix_spawnp(&pid, "tail", &actions, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  int status = 0;
  return ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main() {
  const int rounds = static_cast<int>(std::max(1LL, envNumber("TUNEPLANE_BENCH_ROUNDS", 5)));
  const tuneplane::bench::BenchDir dir;
  if (!dir.ok()) return 1;
  const std::string& root = dir.path();
  // Two attempts, each with logs/main.out: a 1 GiB log and a 1 MiB one.
  const std::string big_attempt = root + "/big";
  const std::string small_attempt = root + "/small";
  std::filesystem::create_directories(big_attempt + "/logs");
  std::filesystem::create_directories(small_attempt + "/logs");
  const std::string big_log = big_attempt + "/logs/main.out";
  if (!writeLog(big_log, kBigLog) || !writeLog(small_attempt + "/logs/main.out", kSmallLog)) {
    std::perror("write");
    return 1;
  }
  std::printf("log_tail_bench: 1 GiB sparse log (1 MiB of lines at its end) in %s, %d rounds\n",
              root.c_str(), rounds);

  int status = 0;
  auto first = readLogTail(big_attempt, "main", LogStream::kStdout);
  if (!first || first->file_bytes != kBigLog || first->text.empty() || !runTail(big_log)) {
    std::fprintf(stderr, "log_tail_bench: the reader or tail(1) failed on the 1 GiB log\n");
    status = 1;
  } else {
    std::printf("readLogTail returns %zu bytes, %zu lines, truncated=%s\n", first->text.size(),
                first->lines, first->truncated ? "true" : "false");
  }

  std::vector<double> reader_big, reader_small, tail_us, pread_us;
  const int big_fd = ::open(big_log.c_str(), O_RDONLY | O_CLOEXEC);
  std::string buffer(kLogTailMaxBytes, '\0');
  for (int r = 0; r < rounds && status == 0; ++r) {
    tail_us.push_back(microsPerCall(kTailsPerRound, [&] {
      if (!runTail(big_log)) status = 1;
    }));
    reader_big.push_back(microsPerCall(kReadsPerRound, [&] {
      if (!readLogTail(big_attempt, "main", LogStream::kStdout)) status = 1;
    }));
    reader_small.push_back(microsPerCall(kReadsPerRound, [&] {
      if (!readLogTail(small_attempt, "main", LogStream::kStdout)) status = 1;
    }));
    pread_us.push_back(microsPerCall(kReadsPerRound, [&] {
      const auto at = static_cast<off_t>(kBigLog - kLogTailMaxBytes);
      if (::pread(big_fd, buffer.data(), buffer.size(), at) !=
          static_cast<ssize_t>(buffer.size())) {
        status = 1;
      }
    }));
  }
  ::close(big_fd);

  if (status == 0) {
    std::printf("tail -c 65536 (a process)   : %9.1f us per read (median of %d rounds)\n",
                median(tail_us), rounds);
    std::printf("readLogTail, 1 GiB log      : %9.1f us per read\n", median(reader_big));
    std::printf("readLogTail, 1 MiB log      : %9.1f us per read\n", median(reader_small));
    std::printf("bare pread of the last 64KiB: %9.1f us per read\n", median(pread_us));
    std::printf("RATIO readLogTail / tail -c 65536 (1 GiB): %.3f (goal <= 1.0)\n",
                median(reader_big) / median(tail_us));
    std::printf("RATIO readLogTail 1 GiB / 1 MiB log: %.3f (size-independent: ~1)\n",
                median(reader_big) / median(reader_small));
    std::printf("RATIO readLogTail / bare pread: %.3f\n", median(reader_big) / median(pread_us));
  } else {
    std::fprintf(stderr, "log_tail_bench: a read failed\n");
  }

  std::filesystem::remove_all(big_attempt);
  std::filesystem::remove_all(small_attempt);
  return status;
}
