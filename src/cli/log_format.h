// How `tuneplane serve` writes its log on stderr (`--log-format json|text`, default json):
// JSON lines — every spdlog message as {"time","level","logger","msg"}, and the structured
// records (server/event_log.h: transitions, slurmrestd errors) as they are, one object per
// line — or spdlog's usual text, the records then as `event key=value …` with every value
// JSON-quoted. Either way a reason with quotes or newlines stays on its line. The access log
// (stdout) is JSON lines in both formats.
// Thread-safety: installServeLogging() once, before any thread logs; the sink it returns may
// be called from any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <spdlog/formatter.h>

#include "server/event_log.h"

namespace tuneplane::cli {

enum class LogFormat { kJson, kText };
std::optional<LogFormat> parseLogFormat(std::string_view text);

// spdlog's message as one JSON object: {"time" (UTC, ms),"level","logger","msg"}.
class JsonLogFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

// A structured record as one text line for --log-format text: `transition job="…" …`
// (the "event" first, then every other non-null field but time, level and msg, in order).
std::string recordText(const server::LogRecord& record);

// Makes spdlog's default logger write `format` to stderr, and returns the sink for the
// structured records, writing to the same stream (lines never interleave).
server::EventLog::Sink installServeLogging(LogFormat format);

}  // namespace tuneplane::cli
