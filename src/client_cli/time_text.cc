#include "client_cli/time_text.h"

#include <ctime>

#include "common/human.h"

namespace tuneplane::cli {
namespace {

bool digits(std::string_view text, size_t at, size_t count, int& out) {
  if (at + count > text.size()) return false;
  out = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    out = out * 10 + (text[i] - '0');
  }
  return true;
}

}  // namespace

std::optional<int64_t> parseRfc3339Ms(std::string_view text) {
  int year, month, day, hour, minute, second;
  if (!digits(text, 0, 4, year) || text.size() < 19 || text[4] != '-' ||
      !digits(text, 5, 2, month) || text[7] != '-' || !digits(text, 8, 2, day) ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !digits(text, 11, 2, hour) ||
      text[13] != ':' || !digits(text, 14, 2, minute) || text[16] != ':' ||
      !digits(text, 17, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  size_t at = 19;
  int64_t millis = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    int64_t scale = 100;
    const size_t start = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      millis += (text[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == start) return std::nullopt;
  }
  int64_t offset_s = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    int oh, om;
    if (!digits(text, at + 1, 2, oh) || at + 3 >= text.size() || text[at + 3] != ':' ||
        !digits(text, at + 4, 2, om)) {
      return std::nullopt;
    }
    offset_s = (oh * 3600 + om * 60) * (text[at] == '+' ? 1 : -1);
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const int64_t seconds = static_cast<int64_t>(::timegm(&tm)) - offset_s;
  return seconds * 1000 + millis;
}

std::string formatAge(int64_t now_ms, int64_t then_ms) {
  const int64_t diff = now_ms - then_ms;
  if (diff > -1000 && diff < 1000) return "just now";
  if (diff < 0) return "in " + formatDuration(-diff / 1000);
  return formatDuration(diff / 1000) + " ago";
}

std::string showTime(const std::optional<std::string>& time, int64_t now_ms, bool relative) {
  if (!time || time->empty()) return "-";
  if (!relative) return *time;
  const auto ms = parseRfc3339Ms(*time);
  return ms ? formatAge(now_ms, *ms) : *time;
}

}  // namespace tuneplane::cli
