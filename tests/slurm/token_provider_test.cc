// Token providers: the token file (re-read on change) and minted HS256 tokens renewed before
// they expire, driven by a fake clock.
#include "slurm/token_provider.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/jwt.h"
#include "support/test_files.h"

namespace tuneplane::slurm {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tp-token-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

using test::writeFile;  // support/test_files.h

TEST(NormalizeTokenText, AcceptsPrefixAndTrailingNewline) {
  EXPECT_EQ(normalizeTokenText("SLURM_JWT=abc.def.ghi\n"), "abc.def.ghi");
  EXPECT_EQ(normalizeTokenText("  abc.def.ghi \r\n"), "abc.def.ghi");
  EXPECT_EQ(normalizeTokenText("\n"), "");
}

TEST(FileTokenProvider, ReadsAndRereadsWhenTheFileChanges) {
  TempDir dir;
  std::string path = dir.file("token");
  writeFile(path, "SLURM_JWT=first-token\n");
  FileTokenProvider provider(path);
  ASSERT_EQ(provider.token().value_or(""), "first-token");
  // A new file in its place (new inode, different size): picked up without invalidate().
  std::string next = dir.file("token.new");
  writeFile(next, "second-token-longer\n");
  fs::rename(next, path);
  EXPECT_EQ(provider.token().value_or(""), "second-token-longer");
}

TEST(FileTokenProvider, InvalidateForcesAReread) {
  TempDir dir;
  std::string path = dir.file("token");
  writeFile(path, "aaaa");
  FileTokenProvider provider(path);
  ASSERT_EQ(provider.token().value_or(""), "aaaa");
  // Same size, and the mtime may not tick within the filesystem's granularity: only
  // invalidate() guarantees the re-read.
  auto mtime = fs::last_write_time(path);
  writeFile(path, "bbbb");
  fs::last_write_time(path, mtime);
  provider.invalidate();
  EXPECT_EQ(provider.token().value_or(""), "bbbb");
}

TEST(FileTokenProvider, MissingOrEmptyFileIsTokenUnavailable) {
  TempDir dir;
  FileTokenProvider missing(dir.file("absent"));
  auto result = missing.token();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, "slurm.token_unavailable");
  writeFile(dir.file("empty"), "SLURM_JWT=\n");
  FileTokenProvider empty(dir.file("empty"));
  EXPECT_FALSE(empty.token().has_value());
}

TEST(FileTokenProvider, ExpiresAtReadsTheExpClaim) {
  TempDir dir;
  std::string token = jwt::mintHs256({"tpuser", 1000, 2800}, "key");
  writeFile(dir.file("token"), token + "\n");
  FileTokenProvider provider(dir.file("token"));
  EXPECT_EQ(provider.expiresAt(), 2800);
}

TEST(UnverifiedClaims, ReadsSunIatAndExpWithoutTheKey) {
  auto claims = unverifiedClaims(jwt::mintHs256({"tpuser", 1000, 2800}, "any key"));
  ASSERT_TRUE(claims.has_value());
  EXPECT_EQ(claims->user, "tpuser");
  EXPECT_EQ(claims->issued_at, 1000);
  EXPECT_EQ(claims->expires_at, 2800);
  // Not a JWT, a payload that is not base64url JSON, or a JSON array: nothing to report.
  for (const char* text : {"", "abc", "a.b", "a.!!!.c", "a.WzFd.c"}) {
    EXPECT_FALSE(unverifiedClaims(text).has_value()) << text;
  }
  // A JSON object without the claims: decoded, each claim absent.
  auto empty = unverifiedClaims("a." + jwt::base64UrlEncode("{\"exp\":\"soon\"}") + ".c");
  ASSERT_TRUE(empty.has_value());
  EXPECT_FALSE(empty->user.has_value());
  EXPECT_FALSE(empty->expires_at.has_value());
}

TEST(MintingTokenProvider, RenewalKeepsEveryTokenValidAcrossFiftyLifespans) {
  const std::string key = "0123456789abcdef0123456789abcdef";
  const int64_t lifespan = 60;
  int64_t now = 1'800'000'000;
  MintingTokenProvider provider("tpuser", key, std::chrono::seconds(lifespan),
                                [&now] { return now; });
  int64_t end = now + 50 * lifespan;
  int uses = 0;
  while (now < end) {
    auto token = provider.token();
    ASSERT_TRUE(token.has_value());
    // Valid at its use, and still valid a third of a lifespan later (in flight).
    auto claims = jwt::verifyHs256(*token, key, now);
    ASSERT_TRUE(claims.has_value()) << "at t+" << now;
    EXPECT_EQ(claims->user, "tpuser");
    EXPECT_GE(claims->expires_at - now, lifespan / 3);
    ASSERT_TRUE(jwt::verifyHs256(*token, key, now + lifespan / 3 - 1).has_value());
    now += 7;  // uses at an interval that does not divide the lifespan
    ++uses;
  }
  EXPECT_GT(uses, 400);
  // Renewed roughly every 2/3 lifespan: about 75 tokens over 50 lifespans, not one per use.
  EXPECT_GE(provider.mintCount(), 70);
  EXPECT_LE(provider.mintCount(), 80);
}

TEST(MintingTokenProvider, CachesUntilRenewalAndInvalidateMintsAnew) {
  int64_t now = 1000;
  MintingTokenProvider provider("u", "k", std::chrono::seconds(300), [&now] { return now; });
  auto first = provider.token().value();
  now += 100;  // 200 s of 300 left: more than a third
  EXPECT_EQ(provider.token().value(), first);
  EXPECT_EQ(provider.mintCount(), 1);
  provider.invalidate();
  now += 1;
  EXPECT_NE(provider.token().value(), first);
  EXPECT_EQ(provider.mintCount(), 2);
  EXPECT_EQ(provider.expiresAt(), 1101 + 300);
}

TEST(MakeTokenProvider, PrefersTokenFileThenKeyAndRejectsNeither) {
  TempDir dir;
  writeFile(dir.file("key"), "secret-key");
  catalog::SlurmSite site;
  site.user = "tpuser";
  site.jwt_key_file = dir.file("key");
  auto minting = makeTokenProvider(site, [] { return int64_t{5000}; });
  ASSERT_TRUE(minting.has_value());
  auto token = (*minting)->token();
  ASSERT_TRUE(token.has_value());
  EXPECT_TRUE(jwt::verifyHs256(*token, "secret-key", 5000).has_value());
  site.token_file = dir.file("token");
  writeFile(dir.file("token"), "from-file");
  auto file = makeTokenProvider(site);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ((*file)->token().value_or(""), "from-file");
  catalog::SlurmSite none;
  auto error = makeTokenProvider(none);
  ASSERT_FALSE(error.has_value());
  EXPECT_EQ(error.error().code, "slurm.config");
}

}  // namespace
}  // namespace tuneplane::slurm
