// Where the client's JWT for X-SLURM-USER-TOKEN comes from. Two mechanisms: a token file
// that an operator (or `scontrol token` in a cron job) keeps fresh, re-read whenever it
// changes; or HS256 tokens minted from the site's JWT key with a short lifespan, renewed
// well before they expire. Thread-safety: token() and invalidate() may be called from any
// thread. A token is a credential: it never goes into an Error, a log line or an exception.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "catalog/site_config.h"
#include "common/result.h"

namespace tuneplane::slurm {

// Unix seconds now. Injected so tests drive token renewal with a fake clock.
using UnixClock = std::function<int64_t()>;
UnixClock systemUnixClock();

class TokenProvider {
 public:
  virtual ~TokenProvider() = default;
  // The token to send now. Errors: "slurm.token_unavailable".
  virtual Result<std::string> token() = 0;
  // The server refused the last token: the next token() must not return a cached one.
  virtual void invalidate() = 0;
  // When the current token expires (its `exp` claim, read without verifying), if known.
  virtual std::optional<int64_t> expiresAt() = 0;
};

// Reads `path`: a JWT, optionally written as "SLURM_JWT=<token>" (what `scontrol token`
// prints), surrounding whitespace and a trailing newline ignored. Re-read when the file's
// mtime, size or inode changes, or after invalidate().
class FileTokenProvider : public TokenProvider {
 public:
  explicit FileTokenProvider(std::string path);

  // TokenProvider:
  Result<std::string> token() override;
  void invalidate() override;
  std::optional<int64_t> expiresAt() override;

 private:
  struct Identity {
    int64_t mtime_ns = 0;
    int64_t size = 0;
    uint64_t inode = 0;
    uint64_t device = 0;
    bool operator==(const Identity&) const = default;
  };
  std::string path_;
  std::mutex mu_;
  std::optional<Identity> identity_;  // of the file the cached token came from
  std::string token_;
};

// Mints HS256 tokens {sun=user, iat=now, exp=now+lifespan} with the site's key. A token is
// renewed once less than a third of its lifespan is left, so a request never leaves with a
// token about to expire in flight.
class MintingTokenProvider : public TokenProvider {
 public:
  // REQUIRES: lifespan >= 3 s; key non-empty.
  MintingTokenProvider(std::string user, std::string key, std::chrono::seconds lifespan,
                       UnixClock clock);

  // TokenProvider:
  Result<std::string> token() override;
  void invalidate() override;
  std::optional<int64_t> expiresAt() override;

  int mintCount() const;  // how many tokens were minted (for tests and metrics)

 private:
  std::string user_;
  std::string key_;
  int64_t lifespan_s_;
  UnixClock clock_;
  mutable std::mutex mu_;
  std::string token_;
  int64_t issued_at_ = 0;
  int64_t expires_at_ = 0;
  int mints_ = 0;
};

// Removes the "SLURM_JWT=" prefix and surrounding whitespace.
std::string normalizeTokenText(std::string_view text);
// The claims of a JWT as slurmrestd reads them, taken WITHOUT verifying the signature: for
// reporting (doctor: whose token, when it expires), never for trusting.
struct UnverifiedClaims {
  std::optional<std::string> user;    // "sun"
  std::optional<int64_t> issued_at;   // "iat"
  std::optional<int64_t> expires_at;  // "exp"
};
// nullopt when `token` is not header.payload.signature with a base64url JSON-object payload.
std::optional<UnverifiedClaims> unverifiedClaims(std::string_view token);
// The `exp` claim of a JWT, read without verifying its signature.
std::optional<int64_t> unverifiedExpiry(std::string_view token);

// The site's HS256 key (slurm.jwt_key_file), read now. Never logged. Errors: "slurm.config"
// when it is not set, cannot be read or is empty.
Result<std::string> readJwtKey(const catalog::SlurmSite& site);

// The provider the site asks for: token_file, else jwt_key_file (read now). Errors:
// "slurm.config" when neither is set or the key file cannot be read.
Result<std::unique_ptr<TokenProvider>> makeTokenProvider(const catalog::SlurmSite& site,
                                                         UnixClock clock = systemUnixClock());

}  // namespace tuneplane::slurm
