// Authenticator: who is calling, from `Authorization: Bearer <token>` (the scheme in any
// case, as RFC 9110 has it; the token exactly). The site file holds
// only each token's SHA-256, so the server never stores a token; the presented token is
// hashed and compared with every entry in constant time (CRYPTO_memcmp, and no early exit),
// so neither the comparison nor the position of the match leaks through timing. Errors never
// contain the token. Thread-safety: immutable after construction; authenticate() is const.
// A reload (SIGHUP) builds a new Authenticator and swaps it in whole (ApiServer::replaceTokens).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/server_config.h"
#include "common/result.h"

namespace tuneplane::api {

struct Principal {
  std::string user = {};
  bool admin = false;
  // What this user's jobs may be charged to in Slurm (server.tokens[].slurm_account, .qos),
  // the first of each the default; empty: the site's default, no choice (job_charge.h).
  std::vector<std::string> slurm_accounts = {};
  std::vector<std::string> qos = {};
  // The Unix user this user's jobs run as under slurm.identity: per_user
  // (server.tokens[].unix_user, else the same name as `user`).
  std::string unix_user = {};
};

class Authenticator {
 public:
  explicit Authenticator(std::vector<ApiToken> tokens);

  // `authorization` is the header's value ("" when absent).
  // Errors: "auth.missing_token" (no header, or not "Bearer <token>"), "auth.invalid_token".
  Result<Principal> authenticate(std::string_view authorization) const;

  // Longer headers are refused before hashing (a token is short; this bounds the work).
  static constexpr std::size_t kMaxTokenBytes = 4096;

 private:
  struct Entry {
    unsigned char digest[32];
    Principal principal;
  };
  std::vector<Entry> entries_;
};

}  // namespace tuneplane::api
