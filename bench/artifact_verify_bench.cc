// Artifact verification benchmark: ArtifactVerifier's streaming SHA-256 against coreutils'
// sha256sum on the same file in the same run (page cache warm for both, runs alternated),
// then the cost of a repeat check of the unchanged file (served from the identity cache).
// Env: TUNEPLANE_BENCH_DIR (default: a new temp dir), TUNEPLANE_BENCH_BYTES (default 2 GiB),
// TUNEPLANE_BENCH_ROUNDS (default 3). The file is deleted at the end.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "bench_dir.h"
#include "catalog/artifact_verifier.h"

namespace {

using Clock = std::chrono::steady_clock;
using tuneplane::catalog::ArtifactVerifier;

long long envNumber(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::atoll(v);
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool writeFile(const std::string& path, long long bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::vector<unsigned char> chunk(1 << 20);
  std::mt19937_64 rng(42);
  long long left = bytes;
  while (left > 0) {
    for (std::size_t i = 0; i + 8 <= chunk.size(); i += 8) {
      const auto x = rng();
      for (int b = 0; b < 8; ++b) chunk[i + b] = static_cast<unsigned char>(x >> (8 * b));
    }
    const auto n = static_cast<std::size_t>(std::min<long long>(left, chunk.size()));
    if (::write(fd, chunk.data(), n) != static_cast<ssize_t>(n)) {
      ::close(fd);
      return false;
    }
    left -= static_cast<long long>(n);
  }
  return ::close(fd) == 0;
}

// Runs sha256sum on `path`; returns its hex digest ("" on failure).
std::string sha256sum(const std::string& path) {
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE* pipe = ::popen(("sha256sum " + quoted).c_str(), "r");
  if (pipe == nullptr) return "";
  char buf[128] = {};
  const std::size_t n = std::fread(buf, 1, 64, pipe);
  ::pclose(pipe);
  return n == 64 ? std::string(buf, 64) : "";
}

}  // namespace

int main() {
  const long long bytes = envNumber("TUNEPLANE_BENCH_BYTES", 2LL << 30);
  const int rounds = static_cast<int>(std::max(1LL, envNumber("TUNEPLANE_BENCH_ROUNDS", 3)));
  const tuneplane::bench::BenchDir bench_dir;
  if (!bench_dir.ok()) return 1;
  const std::string& dir = bench_dir.path();
  const std::string path = dir + "/artifact-bench.sqsh";
  std::printf("artifact_verify_bench: %lld bytes (%.2f GiB) in %s, %d rounds\n", bytes,
              static_cast<double>(bytes) / (1 << 30), dir.c_str(), rounds);
  if (!writeFile(path, bytes)) {
    std::perror("write");
    return 1;
  }
  int status = 0;
  const std::string reference = sha256sum(path);  // also warms the page cache
  if (reference.empty()) {
    std::fprintf(stderr, "sha256sum failed\n");
    status = 1;
  }

  std::vector<double> tool_s, verifier_s;
  for (int r = 0; r < rounds && status == 0; ++r) {
    auto t0 = Clock::now();
    const std::string tool = sha256sum(path);
    tool_s.push_back(seconds(Clock::now() - t0));
    ArtifactVerifier fresh;  // an empty cache: a full read
    t0 = Clock::now();
    const auto ok = fresh.verify(path, reference);
    verifier_s.push_back(seconds(Clock::now() - t0));
    if (tool != reference || !ok) {
      std::fprintf(stderr, "digests disagree\n");
      status = 1;
    }
  }

  if (status == 0) {
    const double mib = static_cast<double>(bytes) / (1 << 20);
    const double tool_mbs = mib / median(tool_s);
    const double verifier_mbs = mib / median(verifier_s);
    std::printf("sha256sum            : %8.1f MiB/s (median %.3f s)\n", tool_mbs, median(tool_s));
    std::printf("ArtifactVerifier cold: %8.1f MiB/s (median %.3f s)\n", verifier_mbs,
                median(verifier_s));
    std::printf("RATIO verifier/sha256sum throughput: %.3f\n", verifier_mbs / tool_mbs);

    ArtifactVerifier cached;
    (void)cached.verify(path, reference);
    const int repeats = 10000;
    const auto t0 = Clock::now();
    for (int i = 0; i < repeats; ++i) {
      if (!cached.verify(path, reference)) status = 1;
    }
    const double per_check_us = seconds(Clock::now() - t0) * 1e6 / repeats;
    std::printf("repeat check (cached): %.2f us per check over %d checks, %lld full read(s)\n",
                per_check_us, repeats, cached.fullReads());
    std::printf("RATIO cached check / full read: %.2e (full read %.0f us)\n",
                per_check_us / (median(verifier_s) * 1e6), median(verifier_s) * 1e6);
    if (cached.fullReads() != 1) status = 1;
  }

  std::filesystem::remove(path);
  return status;
}
