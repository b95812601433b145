#include "catalog/artifact_verifier.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "temp_dir.h"

namespace tuneplane::catalog {
namespace {

using tuneplane::testing::TempDir;

constexpr const char* kAbcSha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

// Moves the file's mtime to a fixed point in the past: a "touch" that changes no byte.
void setMtime(const std::string& path, time_t seconds) {
  const struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

TEST(ArtifactVerifier, KnownDigestAndAnyCase) {
  TempDir dir;
  const std::string path = dir.write("abc", "abc");
  ArtifactVerifier verifier;
  EXPECT_EQ(verifier.sha256Of(path).value(), kAbcSha);
  std::string upper = kAbcSha;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_TRUE(verifier.verify(path, upper, "f").has_value());
}

TEST(ArtifactVerifier, StreamsFilesLargerThanOneChunk) {
  TempDir dir;
  std::string content(3 * (1 << 20) + 7, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 131 % 251);
  const std::string path = dir.write("big", content);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(content.data()), content.size(), digest);
  std::string expected;
  char buf[3];
  for (unsigned char b : digest) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    expected += buf;
  }
  ArtifactVerifier verifier;
  EXPECT_EQ(verifier.sha256Of(path).value(), expected);
}

TEST(ArtifactVerifier, ReportsProgressWhileReadingButNotOnACacheHit) {
  TempDir dir;
  const std::string content(5 * (1 << 20) / 2, 'p');  // two and a half 1 MiB chunks
  const std::string path = dir.write("big", content);
  ArtifactVerifier verifier;
  const std::string sha = verifier.sha256Of(path).value();
  ArtifactVerifier fresh;
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  auto progress = [&](uint64_t done, uint64_t total) { seen.emplace_back(done, total); };
  ASSERT_TRUE(fresh.verify(path, sha, "f", progress).has_value());
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], std::make_pair(uint64_t{1} << 20, uint64_t{content.size()}));
  EXPECT_EQ(seen[2], std::make_pair(uint64_t{content.size()}, uint64_t{content.size()}));
  seen.clear();
  ASSERT_TRUE(fresh.verify(path, sha, "f", progress).has_value());
  EXPECT_TRUE(seen.empty());  // the cache answered; nothing was read
}

TEST(ArtifactVerifier, RepeatCheckOfAnUnchangedFileDoesNotReRead) {
  TempDir dir;
  const std::string path = dir.write("abc", "abc");
  ArtifactVerifier verifier;
  ASSERT_TRUE(verifier.verify(path, kAbcSha).has_value());
  EXPECT_EQ(verifier.fullReads(), 1);
  ASSERT_TRUE(verifier.verify(path, kAbcSha).has_value());
  ASSERT_TRUE(verifier.sha256Of(path).has_value());
  EXPECT_EQ(verifier.fullReads(), 1);
}

TEST(ArtifactVerifier, TouchingTheFileCausesAReRead) {
  TempDir dir;
  const std::string path = dir.write("abc", "abc");
  ArtifactVerifier verifier;
  ASSERT_TRUE(verifier.verify(path, kAbcSha).has_value());
  setMtime(path, 1'000'000'000);
  ASSERT_TRUE(verifier.verify(path, kAbcSha).has_value());
  EXPECT_EQ(verifier.fullReads(), 2);
}

TEST(ArtifactVerifier, ModifiedContentIsCaughtEvenAtTheSameSizeAndMtime) {
  TempDir dir;
  const std::string path = dir.write("abc", "abc");
  setMtime(path, 1'000'000'000);
  ArtifactVerifier verifier;
  ASSERT_TRUE(verifier.verify(path, kAbcSha).has_value());
  dir.write("abc", "abd");        // same size
  setMtime(path, 1'000'000'000);  // and the old mtime put back: ctime still moves
  const Status again = verifier.verify(path, kAbcSha, "spec.framework.runtime_id");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, "artifact.sha256_mismatch");
  EXPECT_EQ(again.error().field, "spec.framework.runtime_id");
  EXPECT_EQ(verifier.fullReads(), 2);
}

TEST(ArtifactVerifier, ReplacedFileIsReRead) {
  TempDir dir;
  const std::string path = dir.write("abc", "abc");
  ArtifactVerifier verifier;
  ASSERT_TRUE(verifier.verify(path, kAbcSha).has_value());
  const std::string other = dir.write("other", "xyz");
  std::filesystem::rename(other, path);
  EXPECT_FALSE(verifier.verify(path, kAbcSha).has_value());
  EXPECT_EQ(verifier.fullReads(), 2);
}

TEST(ArtifactVerifier, MismatchMissingAndNotARegularFile) {
  TempDir dir;
  const std::string path = dir.write("abc", "abc");
  ArtifactVerifier verifier;
  const Status mismatch = verifier.verify(path, std::string(64, '0'), "f");
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_EQ(mismatch.error().code, "artifact.sha256_mismatch");
  // A failed check is not cached as good, and a good digest is still cached.
  EXPECT_TRUE(verifier.verify(path, kAbcSha).has_value());
  EXPECT_EQ(verifier.fullReads(), 1);

  const Status missing = verifier.verify(dir.file("nope.sqsh"), kAbcSha, "f");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, "artifact.missing");
  EXPECT_EQ(missing.error().field, "f");

  const Status directory = verifier.verify(dir.path(), kAbcSha, "f");
  ASSERT_FALSE(directory.has_value());
  EXPECT_EQ(directory.error().code, "artifact.not_regular_file");
}

TEST(ArtifactVerifier, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  TempDir dir;
  const std::string path = dir.write("abc", "abc");
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  ArtifactVerifier verifier;
  const Status s = verifier.verify(path, kAbcSha);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, "artifact.unreadable");
}

TEST(ArtifactVerifier, ConcurrentChecksAgree) {
  TempDir dir;
  const std::string a = dir.write("a", "abc");
  const std::string b = dir.write("b", std::string(2 << 20, 'b'));
  ArtifactVerifier verifier;
  const std::string b_sha = verifier.sha256Of(b).value();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const bool ok = (t % 2 == 0) ? verifier.verify(a, kAbcSha).has_value()
                                     : verifier.verify(b, b_sha).has_value();
        if (!ok) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  // b was read once before the threads; a at least once, at most once per thread.
  EXPECT_GE(verifier.fullReads(), 2);
  EXPECT_LE(verifier.fullReads(), 1 + 4);
}

}  // namespace
}  // namespace tuneplane::catalog
