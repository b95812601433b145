// serve's log formats: spdlog messages as one JSON object per line (quotes and newlines
// escaped, never a broken line), records as text with quoted values, and the flag's values.
#include "cli/log_format.h"

#include <gtest/gtest.h>

#include <spdlog/details/log_msg.h>

namespace tuneplane::cli {
namespace {

using nlohmann::json;

TEST(LogFormat, ParsesTheFlagsValuesOnly) {
  EXPECT_EQ(parseLogFormat("json"), LogFormat::kJson);
  EXPECT_EQ(parseLogFormat("text"), LogFormat::kText);
  EXPECT_EQ(parseLogFormat("JSON"), std::nullopt);
  EXPECT_EQ(parseLogFormat(""), std::nullopt);
}

TEST(JsonLogFormatter, AMessageWithQuotesAndNewlinesIsOneJsonLine) {
  const std::string text = "slurm submit: \"bad\"\nsecond line \\ end";
  spdlog::details::log_msg msg(spdlog::log_clock::time_point(std::chrono::milliseconds(1'500)), {},
                               "tuneplane", spdlog::level::warn, text);
  spdlog::memory_buf_t out;
  JsonLogFormatter().format(msg, out);
  const std::string line(out.data(), out.size());
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  const json parsed = json::parse(line);
  EXPECT_EQ(parsed["msg"], text);
  EXPECT_EQ(parsed["level"], "warning");
  EXPECT_EQ(parsed["logger"], "tuneplane");
  EXPECT_EQ(parsed["time"], "1970-01-01T00:00:01.500Z");
}

TEST(JsonLogFormatter, InvalidUtf8BecomesReplacementNotAThrow) {
  spdlog::details::log_msg msg("tuneplane", spdlog::level::info, "bad \xff byte");
  spdlog::memory_buf_t out;
  JsonLogFormatter().format(msg, out);
  const json parsed = json::parse(std::string(out.data(), out.size()));
  EXPECT_EQ(parsed["msg"], "bad \xEF\xBF\xBD byte");
}

TEST(RecordText, EventFirstThenQuotedFieldsWithoutNulls) {
  const server::LogRecord record = {
      {"time", "t"},        {"level", "info"}, {"event", "transition"},  {"job", "j-1"},
      {"attempt", nullptr}, {"to", "Pending"}, {"reason", "a \"b\"\nc"}, {"msg", "m"}};
  EXPECT_EQ(recordText(record), R"(transition job="j-1" to="Pending" reason="a \"b\"\nc")");
}

}  // namespace
}  // namespace tuneplane::cli
