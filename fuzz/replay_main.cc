// The standalone driver: runs a fuzz target's LLVMFuzzerTestOneInput over every file of the
// directories it is given, in name order, so the g++ builds (`make test`, `make test-asan`)
// replay each corpus and every saved regression input as an ordinary ctest test without
// clang or libFuzzer. No mutation: libFuzzer (`make fuzz`) explores; this proves that what
// it found, and what it fixed, stays fixed.
//
//   fuzz_<target>_replay CORPUS_DIR [REGRESSION_DIR...]
//
// The corpus must hold at least one input (an empty or missing corpus is a broken checkout,
// not a pass); a regression directory may be empty or missing. Exit 0 when every input ran;
// a broken property aborts (FUZZ_CHECK), a sanitizer stops the process, naming the input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "fuzz_support.h"
#include "support/subprocess.h"
#include "support/test_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace tuneplane::fuzz {
namespace {

std::string g_current_input;  // for checkFailed's message

std::vector<std::filesystem::path> inputsIn(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_regular_file() && entry.path().filename().string().front() != '.') {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

bool deepChecks() {
  return true;
}

std::string bashSyntaxErrors(const std::string& script) {
  std::error_code error;
  const auto scratch =
      std::filesystem::temp_directory_path() / ("tp-fuzz-replay-" + std::to_string(::getpid()));
  std::filesystem::create_directories(scratch, error);
  const auto path = scratch / "job.sh";
  test::writeFile(path, script);
  const auto result = test::runProcess({"bash", "-n", path.string()}, {.scratch = scratch});
  std::filesystem::remove_all(scratch, error);
  if (result.exit_code == 0) return "";
  return "exit " + std::to_string(result.exit_code) + ": " + result.err;
}

void checkFailed(const char* condition, const std::string& what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed on input %s: %s\n", file, line, condition,
               g_current_input.c_str(), what.c_str());
  std::abort();
}

int replay(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [REGRESSION_DIR...]\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::size_t total = 0;
  for (int i = 1; i < argc; ++i) {
    const auto files = inputsIn(argv[i]);
    if (i == 1 && files.empty()) {
      std::fprintf(stderr, "%s: the corpus %s holds no input\n", argv[0], argv[i]);
      return 1;
    }
    for (const auto& file : files) {
      g_current_input = file.string();
      std::ifstream in(file, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      // A copy of exactly the input's size, as libFuzzer hands it over: reading past it is
      // an overflow ASan reports.
      std::vector<std::uint8_t> exact(bytes.begin(), bytes.end());
      LLVMFuzzerTestOneInput(exact.data(), exact.size());
      ++total;
    }
    std::printf("%s: %zu inputs replayed\n", argv[i], files.size());
  }
  std::printf("%zu inputs, no failure\n", total);
  return 0;
}

}  // namespace tuneplane::fuzz

int main(int argc, char** argv) {
  return tuneplane::fuzz::replay(argc, argv);
}
