// See log_source.h.
#include "api/log_source.h"

#include "control/attempt_files.h"
#include "spec/names.h"

namespace tuneplane::api {

LogSnapshot cutLog(std::string_view window, bool starts_file, std::size_t max_lines) {
  LogSnapshot out;
  std::size_t begin = 0;
  if (!starts_file) {
    // The first bytes may be the end of a line that began before the window.
    const auto newline = window.find('\n');
    begin = newline == std::string_view::npos ? 0 : newline + 1;
    out.truncated = true;
  }
  // Walk back from the end counting lines; a last line without '\n' counts as one.
  std::size_t lines = 0;
  std::size_t pos = window.size();
  if (pos > begin && window[pos - 1] == '\n') --pos;
  while (pos > begin) {
    const auto newline = window.rfind('\n', pos - 1);
    if (newline == std::string_view::npos || newline < begin) {
      ++lines;
      pos = begin;
      break;
    }
    ++lines;
    if (lines == max_lines) {
      pos = newline + 1;
      break;
    }
    pos = newline;
  }
  if (pos > begin) out.truncated = true;
  out.text = std::string(window.substr(pos));
  out.lines = out.text.empty() ? 0 : lines;
  return out;
}

Result<LogSnapshot> readLog(const std::string& attempt_dir, std::string_view pool,
                            LogStream stream) {
  if (!spec::isDnsLabel(pool)) {
    return fail("logs.invalid_pool", "component", "'" + std::string(pool) + "' is not a pool name");
  }
  const std::string name = std::string(pool) + (stream == LogStream::kStdout ? ".out" : ".err");
  // One byte more than the limit tells whether the first line in the window is whole.
  auto window = control::readLogWindow(attempt_dir, name, kMaxLogBytes + 1);
  if (!window) return tl::unexpected(window.error());
  if (!*window) {
    LogSnapshot missing;
    missing.missing = true;
    missing.reason = "logs/" + name + " does not exist (yet): the job has not started";
    return missing;
  }
  std::string_view bytes = (*window)->bytes;
  bool starts_file = (*window)->starts_file;
  if (bytes.size() > kMaxLogBytes) {
    bytes.remove_prefix(bytes.size() - kMaxLogBytes - 1);
    starts_file = false;
  }
  LogSnapshot out = cutLog(bytes, starts_file);
  if (out.text.size() > kMaxLogBytes) {  // one line longer than the window: its end
    out.text.erase(0, out.text.size() - kMaxLogBytes);
    out.truncated = true;
  }
  out.file_bytes = (*window)->file_bytes;
  return out;
}

}  // namespace tuneplane::api
