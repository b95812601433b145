// Helpers the benchmarks share: numbers from the environment, the median of rounds, and the
// directory a benchmark writes its files in (TUNEPLANE_BENCH_DIR, else a fresh temp dir that
// is removed again).
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace tuneplane::bench {

inline long long envNumber(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::atoll(v);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// TUNEPLANE_BENCH_DIR when set (left in place), else a new temp dir (removed when done).
class BenchDir {
 public:
  BenchDir() {
    if (const char* d = std::getenv("TUNEPLANE_BENCH_DIR"); d != nullptr && *d != '\0') {
      path_ = d;
      return;
    }
    std::string pattern = (std::filesystem::temp_directory_path() / "tp-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      return;
    }
    path_ = pattern;
    owned_ = true;
  }
  ~BenchDir() {
    std::error_code ec;
    if (owned_) std::filesystem::remove_all(path_, ec);
  }
  BenchDir(const BenchDir&) = delete;
  BenchDir& operator=(const BenchDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool owned_ = false;
};

}  // namespace tuneplane::bench
