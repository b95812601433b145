// Attempt identities: job ids and submit tokens from injected randomness.
#include "launch/attempt_identity.h"

#include <array>
#include <climits>

#include <openssl/rand.h>

#include "spec/names.h"

namespace tuneplane::launch {
namespace {

bool isLowerHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

std::string toHex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0x0f]);
  }
  return out;
}

}  // namespace

Status OpenSslRandomSource::fill(std::span<std::uint8_t> out) {
  if (out.size() > static_cast<std::size_t>(INT_MAX) ||
      RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) {
    return fail("launch.random_failed", "", "the system's random generator failed (RAND_bytes)");
  }
  return ok();
}

bool isValidJobId(std::string_view job_id) {
  if (!spec::isDnsLabel(job_id) || job_id.size() < kJobIdSuffixHex + 2) return false;
  const std::string_view suffix = job_id.substr(job_id.size() - kJobIdSuffixHex);
  if (job_id[job_id.size() - kJobIdSuffixHex - 1] != '-') return false;
  for (char c : suffix) {
    if (!isLowerHex(c)) return false;
  }
  return true;
}

std::string fenceDirFor(std::string_view attempt_dir) {
  std::string_view job_dir = attempt_dir;
  for (int up = 0; up < 2; ++up) {  // <n>, then attempts/
    const std::size_t slash = job_dir.rfind('/');
    job_dir = slash == std::string_view::npos ? std::string_view() : job_dir.substr(0, slash);
  }
  return std::string(job_dir) + "/fence";
}

bool isValidSubmitToken(std::string_view token) {
  if (!token.starts_with(kSubmitTokenPrefix)) return false;
  const std::string_view hex = token.substr(kSubmitTokenPrefix.size());
  if (hex.size() != kSubmitTokenBytes * 2) return false;
  for (char c : hex) {
    if (!isLowerHex(c)) return false;
  }
  return true;
}

Result<AttemptIdentity> newAttemptIdentity(std::string_view job_name, int attempt,
                                           RandomSource& random) {
  if (!spec::isDnsLabel(job_name)) {
    return fail("launch.invalid_job_name", "metadata.name",
                "job name must be a DNS label ([a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 "
                "characters)");
  }
  if (attempt < 1) {
    return fail("launch.invalid_attempt", "attempt", "attempt numbers start at 1");
  }
  std::array<std::uint8_t, kJobIdSuffixHex / 2> id_bytes{};
  std::array<std::uint8_t, kSubmitTokenBytes> token_bytes{};
  if (auto filled = random.fill(id_bytes); !filled) return fail(filled.error());
  if (auto filled = random.fill(token_bytes); !filled) return fail(filled.error());

  // Keep the id a DNS label: room for "-" + 8 hex, and a truncated name must not end in
  // "-" (the label would then contain "--" before the suffix, legal, but ugly and confusing).
  std::string name(job_name.substr(0, kMaxJobIdLength - kJobIdSuffixHex - 1));
  while (!name.empty() && name.back() == '-') name.pop_back();

  AttemptIdentity identity;
  identity.job_id = name + "-" + toHex(id_bytes);
  identity.attempt = attempt;
  identity.submit_token = std::string(kSubmitTokenPrefix) + toHex(token_bytes);
  return identity;
}

}  // namespace tuneplane::launch
