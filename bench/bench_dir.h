// Where a benchmark writes its files: TUNEPLANE_BENCH_DIR when set (kept afterwards), else a
// new temp directory that is removed with everything in it when the BenchDir ends.
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace tuneplane::bench {

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
    own_ = true;
  }
  ~BenchDir() {
    std::error_code ec;
    if (own_) std::filesystem::remove_all(path_, ec);
  }
  BenchDir(const BenchDir&) = delete;
  BenchDir& operator=(const BenchDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool own_ = false;
};

}  // namespace tuneplane::bench
