// Every example job spec in examples/jobs parses: the examples are documentation that a
// user copies, so they must stay valid as the format grows.
#include <gtest/gtest.h>

#include <filesystem>

#include "spec/spec_parser.h"
#include "support/fixtures.h"
#include "support/test_paths.h"

namespace tuneplane::spec {
namespace {

TEST(Examples, EveryExampleJobSpecParses) {
  int seen = 0;
  for (const auto& file : test::fixtureFiles(test::sourceDir() / "examples/jobs")) {
    SCOPED_TRACE(file.string());
    const auto spec = loadJobSpecFile(file.string());
    ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
    EXPECT_EQ(spec->kind, JobKind::kTrainingJob);
    ++seen;
  }
  EXPECT_GE(seen, 8);  // the CPU, GPU, het, LlamaFactory and Ray examples
}

}  // namespace
}  // namespace tuneplane::spec
