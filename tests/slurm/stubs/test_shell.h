// Helpers for the slurm tests that run rendered scripts: a temporary directory, whole-file
// I/O, and running a shell command line (bounded) with its stdout/stderr captured.
// Header-only because tests/CMakeLists.txt compiles only *_test.cc files.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/subprocess.h"
#include "support/test_files.h"

namespace tuneplane::slurm::shell_test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tp-slurm-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

using test::readFile;  // support/test_files.h
using test::writeFile;

using RunResult = test::ProcessResult;

// A stand-in container image's bytes and their sha256, which the rendered scripts check
// before they run anything.
inline constexpr const char* kImageContent = "test";
inline constexpr const char* kImageSha256 =
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

// Runs `command` with /bin/sh, bounded (support/subprocess.h); its stdout and stderr are
// captured in files in `scratch`.
inline RunResult runShell(const std::string& command, const std::filesystem::path& scratch) {
  return test::runShell(command, {.scratch = scratch});
}

inline std::vector<std::string> splitNul(const std::string& text) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (start < text.size()) {
    const auto end = text.find('\0', start);
    if (end == std::string::npos) {
      parts.push_back(text.substr(start));
      break;
    }
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

}  // namespace tuneplane::slurm::shell_test
