// Where tests and benchmarks find the repository's files and the build's binaries. The
// absolute paths are compiled into test_paths.cc alone, not onto the command line of every
// test source, so the other sources compile identically in every build directory and
// worktree (ccache hits across them). Thread-safe: functions over constants.
#pragma once

#include <filesystem>

namespace tuneplane::test {

std::filesystem::path sourceDir();    // the repository's root
std::filesystem::path testDataDir();  // tests/data, or $TUNEPLANE_TEST_DATA_DIR when set
std::filesystem::path binaryDir();    // the CMake build directory (built executables)

}  // namespace tuneplane::test
