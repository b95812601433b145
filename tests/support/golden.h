// Golden-file comparison: a test's output against a reviewed file under tests/. With
// TUNEPLANE_UPDATE_GOLDEN=1 in the environment the file is (re)written instead, for review
// in the diff.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "support/fixtures.h"
#include "support/test_files.h"

namespace tuneplane::test {

inline bool updatingGolden() {
  const char* update = std::getenv("TUNEPLANE_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

// `what` names the output in the failure ("rendered output", "the CLI's output").
inline void expectGolden(const std::filesystem::path& file, const std::string& actual,
                         std::string_view what) {
  if (updatingGolden()) {
    std::filesystem::create_directories(file.parent_path());
    writeFile(file, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(file))
      << file << " missing; run with TUNEPLANE_UPDATE_GOLDEN=1";
  EXPECT_EQ(readFixture(file), actual)
      << what << " differs from " << file
      << "; if the change is intended, regenerate with TUNEPLANE_UPDATE_GOLDEN=1";
}

}  // namespace tuneplane::test
