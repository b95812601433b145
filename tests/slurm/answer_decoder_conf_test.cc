// GET /conf (v0.0.45), decoded from the real 26.05.3 answer of the test cluster started with
// --preemption (tests/data/slurm/transcripts/24_conf.json) and from hand-made ones: only the
// preemption settings are read, the ~200 other settings skipped.
#include <string>

#include <gtest/gtest.h>

#include "slurm/answer_decoder.h"
#include "support/fixtures.h"

namespace tuneplane::slurm {
namespace {

TEST(DecodeControllerConfig, TheRealAnswerGivesTheClustersPreemptionSettings) {
  const std::string real = test::transcriptResponseBody("24_conf", "GET /conf (v0.0.45)").dump();
  for (const DecodeOptions& options : {DecodeOptions{}, DecodeOptions{0}, DecodeOptions{0, 37}}) {
    auto config = decodeControllerConfig(real, options);
    ASSERT_TRUE(config.has_value()) << config.error().describe();
    EXPECT_EQ(config->preempt_type, "preempt/partition_prio");
    EXPECT_EQ(config->preempt_mode, (std::vector<std::string>{"CANCEL"}));
    EXPECT_EQ(config->preempt_parameters, (std::vector<std::string>{"send_user_signal"}));
  }
}

TEST(DecodeControllerConfig, ParametersAsACommaSeparatedStringAndUnsetFields) {
  auto config = decodeControllerConfig(
      R"({"slurm_conf": {"PreemptType": "preempt/qos", "PreemptMode": ["SUSPEND", "GANG"],
          "PreemptParameters": "reclaim_licenses,send_user_signal", "MaxArraySize": 1001},
          "errors": [], "warnings": []})");
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  EXPECT_EQ(config->preempt_type, "preempt/qos");
  EXPECT_EQ(config->preempt_mode, (std::vector<std::string>{"SUSPEND", "GANG"}));
  EXPECT_EQ(config->preempt_parameters,
            (std::vector<std::string>{"reclaim_licenses", "send_user_signal"}));
  // slurmrestd omits what is unset: empty values, not an error.
  auto bare = decodeControllerConfig(R"({"slurm_conf": {}, "errors": []})");
  ASSERT_TRUE(bare.has_value()) << bare.error().describe();
  EXPECT_EQ(bare->preempt_type, "");
  EXPECT_TRUE(bare->preempt_mode.empty());
}

TEST(DecodeControllerConfig, AnAnswerWithoutSlurmConfOrMalformedIsRefused) {
  auto missing = decodeControllerConfig(R"({"errors": [], "warnings": []})");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, "slurm.bad_response");
  EXPECT_EQ(missing.error().field, "slurm_conf");
  auto cut = decodeControllerConfig(R"({"slurm_conf": {"PreemptType": "preempt/no)");
  ASSERT_FALSE(cut.has_value());
  EXPECT_EQ(cut.error().code, "slurm.bad_response");
  auto text = decodeControllerConfig(
      test::transcriptResponseBody("24_conf", "GET /conf (v0.0.44)").get<std::string>());
  EXPECT_FALSE(text.has_value());  // v0.0.44's 404 text is no answer
}

}  // namespace
}  // namespace tuneplane::slurm
