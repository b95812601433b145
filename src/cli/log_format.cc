// See log_format.h.
#include "cli/log_format.h"

#include <chrono>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "api/json_views.h"

namespace tuneplane::cli {

std::optional<LogFormat> parseLogFormat(std::string_view text) {
  if (text == "json") return LogFormat::kJson;
  if (text == "text") return LogFormat::kText;
  return std::nullopt;
}

void JsonLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch()).count();
  server::LogRecord line = {
      {"time", api::timeJson(ms)},
      {"level", std::string_view(spdlog::level::to_string_view(msg.level).data(),
                                 spdlog::level::to_string_view(msg.level).size())},
      {"logger", std::string_view(msg.logger_name.data(), msg.logger_name.size())},
      {"msg", std::string_view(msg.payload.data(), msg.payload.size())}};
  if (msg.logger_name.size() == 0) line.erase("logger");
  const std::string text = server::dumpRecord(line) + "\n";
  dest.append(text.data(), text.data() + text.size());
}

std::unique_ptr<spdlog::formatter> JsonLogFormatter::clone() const {
  return std::make_unique<JsonLogFormatter>();
}

std::string recordText(const server::LogRecord& record) {
  std::string out = record.value("event", "record");
  for (const auto& [key, value] : record.items()) {
    if (key == "event" || key == "time" || key == "level" || key == "msg") continue;
    if (value.is_null()) continue;
    out += " " + key + "=" + server::dumpRecord(value);
  }
  return out;
}

server::EventLog::Sink installServeLogging(LogFormat format) {
  if (format == LogFormat::kText) {
    // main()'s text logger on stderr stays; each record becomes one of its lines.
    return [](const server::LogRecord& record) {
      spdlog::log(spdlog::level::from_str(record.value("level", "info")), "{}", recordText(record));
    };
  }
  // Formats belong to sinks, so the records (whole JSON objects already, printed bare) get a
  // sink of their own; spdlog's console sinks share one mutex, so lines never interleave.
  auto logger = std::make_shared<spdlog::logger>("tuneplane",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(std::make_unique<JsonLogFormatter>());
  auto records =
      std::make_shared<spdlog::logger>("events", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  records->set_pattern("%v");
  logger->flush_on(spdlog::level::info);  // a line at a time, even when stderr is a file
  records->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return [records](const server::LogRecord& record) {
    records->log(spdlog::level::from_str(record.value("level", "info")), "{}",
                 server::dumpRecord(record));
  };
}

}  // namespace tuneplane::cli
