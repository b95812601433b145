// The only source compiled with the build's absolute paths (see test_paths.h).
#include "support/test_paths.h"

#include <cstdlib>

namespace tuneplane::test {

std::filesystem::path sourceDir() {
  return TUNEPLANE_SOURCE_DIR;
}

std::filesystem::path testDataDir() {
  // Overridable, so a test can prove what a missing fixture does (and a packager can keep
  // the data elsewhere); the default is the repository's own tests/data.
  const char* dir = std::getenv("TUNEPLANE_TEST_DATA_DIR");
  return dir != nullptr && *dir != '\0' ? std::filesystem::path(dir)
                                        : std::filesystem::path(TUNEPLANE_TEST_DATA_DIR);
}

std::filesystem::path binaryDir() {
  return TUNEPLANE_BINARY_DIR;
}

}  // namespace tuneplane::test
