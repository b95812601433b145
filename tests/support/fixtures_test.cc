// The fixture loaders fail loudly, and a test whose fixture is missing fails at once with
// a message naming the file: neither a hang (the conformance replays once waited for jobs
// a missing transcript never submitted) nor a silent empty JSON.
#include "support/fixtures.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class FixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tp-fixture-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& content) const {
    std::ofstream(dir_ / name, std::ios::binary) << content;
    return dir_ / name;
  }
  // The FixtureError message of `load`, or "" when it did not throw one.
  template <typename Load>
  static std::string failureOf(Load load) {
    try {
      load();
    } catch (const FixtureError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(FixtureTest, ReadsWhatIsThere) {
  EXPECT_EQ(readFixture(write("a.txt", "text\n")), "text\n");
  EXPECT_EQ(readJsonFixture(write("a.json", R"({"k": [1]})")),
            nlohmann::json::parse(R"({"k":[1]})"));
  EXPECT_EQ(fixtureFiles(dir_, ".json"), std::vector<fs::path>{dir_ / "a.json"});
  EXPECT_EQ(fixtureFiles(dir_).size(), 2u);
}

TEST_F(FixtureTest, EveryFailureNamesTheFile) {
  const fs::path missing = dir_ / "06_failed.json";
  EXPECT_THAT(failureOf([&] { readFixture(missing); }),
              HasSubstr("test fixture missing: " + missing.string()));
  EXPECT_THAT(failureOf([&] { readJsonFixture(missing); }),
              HasSubstr("test fixture missing: " + missing.string()));
  EXPECT_THAT(failureOf([&] { readFixture(dir_); }),
              HasSubstr("not a regular file: " + dir_.string()));
  const fs::path truncated = write("truncated.json", R"({"exchanges": [)");
  EXPECT_THAT(failureOf([&] { readJsonFixture(truncated); }),
              HasSubstr("not valid JSON: " + truncated.string()));
  EXPECT_THAT(failureOf([&] { fixtureFiles(dir_ / "none"); }),
              HasSubstr("directory missing: " + (dir_ / "none").string()));
  fs::create_directory(dir_ / "text");
  write("text/a.txt", "");
  EXPECT_THAT(failureOf([&] { fixtureFiles(dir_ / "text", ".json"); }),
              HasSubstr("no .json test fixtures in " + (dir_ / "text").string()));
}

TEST(Transcripts, LabelsAreLookedUpAndAMissingOneIsAFailure) {
  EXPECT_TRUE(transcriptResponseBody("01_ping", "ping without").contains("pings"));
  EXPECT_EQ(transcript("01_ping.json"), transcript("01_ping"));
  try {
    transcriptResponseBody("01_ping", "no such label");
    ADD_FAILURE() << "no FixtureError";
  } catch (const FixtureError& e) {
    EXPECT_THAT(e.what(), HasSubstr("01_ping has no exchange labelled \"no such label"));
  }
}

// The tests that read transcripts, run with the data directory pointed at an empty one:
// each fails at once, naming the file. Conformance.Failed is the test that once hung (its
// simulator, stopped right after it started, never stopped). 4 × 12 s stays inside the
// default ctest timeout, so a hang here is reported as such, naming the binary.
TEST_F(FixtureTest, TestsWithAMissingTranscriptFailAtOnceNamingIt) {
  struct Case {
    std::string binary, filter, file;
  };
  for (const Case& c :
       {Case{"sim_test", "Conformance.Failed", "06_failed.json"},
        Case{"sim_test", "Conformance.CancelRunning", "08_cancel_running.json"},
        Case{"slurm_test", "*Decode.SubmitReceiptHasNumericIdAndNoSluid*", "02_submit_single.json"},
        Case{"slurm_test", "SubmitBodySchema.EveryGoldenBodyConforms", "openapi-v0.0.45.json"}}) {
    SCOPED_TRACE(c.binary + " " + c.filter);
    const auto env = environmentWith({"TUNEPLANE_TEST_DATA_DIR=" + dir_.string()});
    const auto run =
        runProcess({(binaryDir() / "tests" / c.binary).string(), "--gtest_filter=" + c.filter},
                   {.scratch = dir_, .env = env, .limit = std::chrono::seconds(12)});
    EXPECT_FALSE(run.timed_out);
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    EXPECT_THAT(run.out, HasSubstr("test fixture missing: " + dir_.string() + "/slurm/"));
    EXPECT_THAT(run.out, HasSubstr(c.file));
    EXPECT_THAT(run.out, HasSubstr("[  FAILED  ]"));
  }
}

}  // namespace
}  // namespace tuneplane::test
