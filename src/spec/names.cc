#include "spec/names.h"

#include <array>
#include <cstdint>

namespace tuneplane::spec {
namespace {

bool isLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool isAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

struct Unit {
  std::string_view suffix;
  std::int64_t millis;
};
// Largest first: a duration lists its parts in this order, each at most once.
constexpr std::array<Unit, 5> kUnits = {{
    {"d", 86'400'000},
    {"h", 3'600'000},
    {"m", 60'000},
    {"s", 1'000},
    {"ms", 1},
}};
constexpr std::int64_t kMaxMillis = 10LL * 366 * 86'400'000;

}  // namespace

bool isSlurmName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool isDnsLabel(std::string_view name) {
  if (name.empty() || name.size() > kMaxDnsLabel) return false;
  if (!isLowerAlnum(name.front()) || !isLowerAlnum(name.back())) return false;
  for (char c : name) {
    if (!isLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool isLabelKey(std::string_view key) {
  const std::size_t slash = key.rfind('/');
  if (slash != std::string_view::npos) {
    const std::string_view prefix = key.substr(0, slash);
    if (prefix.empty() || prefix.size() > 253) return false;
    for (char c : prefix) {
      if (!isLowerAlnum(c) && c != '-' && c != '.') return false;
    }
    key = key.substr(slash + 1);
  }
  if (key.empty() || key.size() > kMaxDnsLabel) return false;
  auto alnum = [](char c) { return isAlpha(c) || isDigit(c); };
  if (!alnum(key.front()) || !alnum(key.back())) return false;
  for (char c : key) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool isEnvName(std::string_view name) {
  if (name.empty() || !(isAlpha(name.front()) || name.front() == '_')) return false;
  for (char c : name) {
    if (!isAlpha(c) && !isDigit(c) && c != '_') return false;
  }
  return true;
}

bool isReservedEnvName(std::string_view name) {
  return name.starts_with("TUNEPLANE_") || name.starts_with("SLURM_") || name.starts_with("tp_");
}

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t total = 0;
  std::size_t next_unit = 0;  // index into kUnits: parts must come in descending order
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t number = 0;
    const std::size_t digits_start = i;
    while (i < text.size() && isDigit(text[i])) {
      number = number * 10 + (text[i] - '0');
      if (number > kMaxMillis) return std::nullopt;
      ++i;
    }
    if (i == digits_start) return std::nullopt;
    const std::size_t suffix_start = i;
    while (i < text.size() && isAlpha(text[i])) ++i;
    const std::string_view suffix = text.substr(suffix_start, i - suffix_start);
    std::size_t unit = next_unit;
    while (unit < kUnits.size() && kUnits[unit].suffix != suffix) ++unit;
    if (unit == kUnits.size()) return std::nullopt;  // unknown, repeated or out of order
    if (number > kMaxMillis / kUnits[unit].millis) return std::nullopt;
    total += number * kUnits[unit].millis;
    if (total > kMaxMillis) return std::nullopt;
    next_unit = unit + 1;
  }
  return std::chrono::milliseconds(total);
}

}  // namespace tuneplane::spec
