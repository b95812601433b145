#include "sim/sluid.h"

#include <algorithm>

namespace tuneplane::sim {
namespace {

constexpr std::string_view kCrockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr int kDigits = 13;

int digitValue(char c) {
  if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  const auto pos = kCrockford.find(c);
  return pos == std::string_view::npos ? -1 : static_cast<int>(pos);
}

}  // namespace

std::string formatSluid(uint64_t value) {
  std::string out(kDigits + 1, '0');
  out[0] = 's';
  for (int i = kDigits; i >= 1; --i) {
    out[static_cast<size_t>(i)] = kCrockford[value & 31];
    value >>= 5;
  }
  return out;
}

bool looksLikeSluid(std::string_view text) {
  return !text.empty() && (text[0] == 's' || text[0] == 'S');
}

std::optional<uint64_t> parseSluid(std::string_view text) {
  if (text.size() != kDigits + 1 || !looksLikeSluid(text)) return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 1; i < text.size(); ++i) {
    const int digit = digitValue(text[i]);
    if (digit < 0) return std::nullopt;
    // 13 digits hold 65 bits: the first digit may only use its low 4.
    if (i == 1 && digit > 15) return std::nullopt;
    value = (value << 5) | static_cast<uint64_t>(digit);
  }
  if (value == 0) return std::nullopt;
  return value;
}

uint64_t SluidGenerator::next(int64_t now_unix_ms) {
  if (now_unix_ms > last_ms_) {
    last_ms_ = now_unix_ms;
    sequence_ = 0;
  } else if (++sequence_ > 1023) {
    ++last_ms_;
    sequence_ = 0;
  }
  const uint64_t ms = static_cast<uint64_t>(last_ms_) & ((uint64_t{1} << 42) - 1);
  return (static_cast<uint64_t>(cluster_id_) << 52) | (ms << 10) | sequence_;
}

}  // namespace tuneplane::sim
