// See idempotency_key.h.
#include "common/idempotency_key.h"

#include <openssl/rand.h>

#include <array>

namespace tuneplane {
namespace {

bool isKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

}  // namespace

Status checkIdempotencyKey(std::string_view key) {
  const std::string rule = std::string("an ") + kIdempotencyKeyHeader + " is 1 to " +
                           std::to_string(kMaxIdempotencyKeyBytes) +
                           " characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'";
  if (key.empty() || key.size() > kMaxIdempotencyKeyBytes) {
    return fail("api.invalid_idempotency_key", kIdempotencyKeyHeader,
                rule + "; this one has " + std::to_string(key.size()));
  }
  for (char c : key) {
    if (!isKeyChar(c)) {
      return fail("api.invalid_idempotency_key", kIdempotencyKeyHeader,
                  rule + "; this one has another character");
    }
  }
  return ok();
}

Result<std::string> newIdempotencyKey() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return fail("common.random_failed", "", "the system's random generator failed (RAND_bytes)");
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string key;
  key.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    key.push_back(kDigits[b >> 4]);
    key.push_back(kDigits[b & 0x0f]);
  }
  return key;
}

}  // namespace tuneplane
