#include "slurm/token_provider.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/jwt.h"

namespace tuneplane::slurm {
namespace {

constexpr std::string_view kJwtPrefix = "SLURM_JWT=";

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  return text;
}

Result<std::string> readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("slurm.token_unavailable", path, "cannot open the file");
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return fail("slurm.token_unavailable", path, "cannot read the file");
  return out.str();
}

}  // namespace

UnixClock systemUnixClock() {
  return [] {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
}

std::string normalizeTokenText(std::string_view text) {
  text = trim(text);
  if (text.substr(0, kJwtPrefix.size()) == kJwtPrefix) text.remove_prefix(kJwtPrefix.size());
  return std::string(trim(text));
}

std::optional<UnverifiedClaims> unverifiedClaims(std::string_view token) {
  size_t first = token.find('.');
  if (first == std::string_view::npos) return std::nullopt;
  size_t second = token.find('.', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  auto payload = jwt::base64UrlDecode(token.substr(first + 1, second - first - 1));
  if (!payload) return std::nullopt;
  auto claims = nlohmann::json::parse(*payload, nullptr, /*allow_exceptions=*/false);
  if (!claims.is_object()) return std::nullopt;
  UnverifiedClaims out;
  auto number = [&](const char* key) -> std::optional<int64_t> {
    auto it = claims.find(key);
    if (it == claims.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  out.issued_at = number("iat");
  out.expires_at = number("exp");
  if (auto sun = claims.find("sun"); sun != claims.end() && sun->is_string()) {
    out.user = sun->get<std::string>();
  }
  return out;
}

std::optional<int64_t> unverifiedExpiry(std::string_view token) {
  auto claims = unverifiedClaims(token);
  return claims ? claims->expires_at : std::nullopt;
}

FileTokenProvider::FileTokenProvider(std::string path) : path_(std::move(path)) {}

Result<std::string> FileTokenProvider::token() {
  std::lock_guard lock(mu_);
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    return fail("slurm.token_unavailable", path_, "the token file does not exist");
  }
  Identity now{static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
               static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino),
               static_cast<uint64_t>(st.st_dev)};
  if (identity_ && *identity_ == now && !token_.empty()) return token_;
  auto text = readWholeFile(path_);
  if (!text) return tl::unexpected(text.error());
  std::string token = normalizeTokenText(*text);
  if (token.empty()) return fail("slurm.token_unavailable", path_, "the token file is empty");
  token_ = std::move(token);
  identity_ = now;
  return token_;
}

void FileTokenProvider::invalidate() {
  std::lock_guard lock(mu_);
  identity_.reset();
  token_.clear();
}

std::optional<int64_t> FileTokenProvider::expiresAt() {
  auto current = token();
  if (!current) return std::nullopt;
  return unverifiedExpiry(*current);
}

MintingTokenProvider::MintingTokenProvider(std::string user, std::string key,
                                           std::chrono::seconds lifespan, UnixClock clock)
    : user_(std::move(user)),
      key_(std::move(key)),
      lifespan_s_(lifespan.count()),
      clock_(std::move(clock)) {}

Result<std::string> MintingTokenProvider::token() {
  std::lock_guard lock(mu_);
  int64_t now = clock_();
  // Renew when less than a third of the lifespan is left (or the clock went backwards).
  bool stale = token_.empty() || now < issued_at_ || (expires_at_ - now) * 3 < lifespan_s_;
  if (stale) {
    issued_at_ = now;
    expires_at_ = now + lifespan_s_;
    token_ = jwt::mintHs256(jwt::Claims{user_, issued_at_, expires_at_}, key_);
    ++mints_;
  }
  return token_;
}

void MintingTokenProvider::invalidate() {
  std::lock_guard lock(mu_);
  token_.clear();
}

std::optional<int64_t> MintingTokenProvider::expiresAt() {
  if (!token()) return std::nullopt;
  std::lock_guard lock(mu_);
  return expires_at_;
}

int MintingTokenProvider::mintCount() const {
  std::lock_guard lock(mu_);
  return mints_;
}

Result<std::string> readJwtKey(const catalog::SlurmSite& site) {
  auto key = site.jwt_key_file ? readWholeFile(*site.jwt_key_file) : Result<std::string>();
  if (!site.jwt_key_file || !key || key->empty()) {
    return fail("slurm.config", "slurm.jwt_key_file", "cannot read the JWT key file");
  }
  return key;
}

Result<std::unique_ptr<TokenProvider>> makeTokenProvider(const catalog::SlurmSite& site,
                                                         UnixClock clock) {
  if (site.token_file && !site.token_file->empty()) {
    return std::unique_ptr<TokenProvider>(std::make_unique<FileTokenProvider>(*site.token_file));
  }
  if (site.jwt_key_file && !site.jwt_key_file->empty()) {
    auto key = readJwtKey(site);
    if (!key) return fail(key.error());
    if (site.user.empty()) return fail("slurm.config", "slurm.user", "a user is required");
    if (site.token_lifespan.count() < 3) {
      return fail("slurm.config", "slurm.token_lifespan", "must be at least 3 seconds");
    }
    return std::unique_ptr<TokenProvider>(std::make_unique<MintingTokenProvider>(
        site.user, std::move(*key), site.token_lifespan, std::move(clock)));
  }
  return fail("slurm.config", "slurm.token_file",
              "set token_file or jwt_key_file to authenticate to slurmrestd");
}

}  // namespace tuneplane::slurm
