// Every example job spec in examples/jobs parses: the examples are documentation that a
// user copies, so they must stay valid as the format grows.
#include <gtest/gtest.h>

#include <filesystem>

#include "spec/spec_parser.h"

namespace tuneplane::spec {
namespace {

TEST(Examples, EveryExampleJobSpecParses) {
  const std::filesystem::path dir = std::filesystem::path(TUNEPLANE_SOURCE_DIR) / "examples/jobs";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    SCOPED_TRACE(entry.path().string());
    const auto spec = loadJobSpecFile(entry.path().string());
    ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
    EXPECT_EQ(spec->kind, JobKind::kTrainingJob);
    ++seen;
  }
  EXPECT_GE(seen, 4);  // cpu-custom, gpu-2node, hetero-2pool, llamafactory-sft
}

}  // namespace
}  // namespace tuneplane::spec
