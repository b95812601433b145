// Percent-encoding (common/percent_encoding.h) and the Unix user name rule
// (common/text_checks.h), from cases.
#include "common/percent_encoding.h"

#include <gtest/gtest.h>

#include "common/text_checks.h"

namespace tuneplane {
namespace {

TEST(PercentEncoding, OnlyUnreservedBytesStayAndSlashOnlyWhenKept) {
  EXPECT_EQ(percentEncode("sAbc-1._~"), "sAbc-1._~");
  EXPECT_EQ(percentEncode("a b/c"), "a%20b%2Fc");
  EXPECT_EQ(percentEncode("a b/c", /*keep_slash=*/true), "a%20b/c");
  EXPECT_EQ(percentEncode(std::string("bad\xff\0z", 6)), "bad%FF%00z");
  EXPECT_EQ(percentEncode("ü"), "%C3%BC");
  EXPECT_EQ(percentEncode(""), "");
}

TEST(PercentEncoding, DecodingGivesTheExactBytes) {
  EXPECT_EQ(percentDecode("bad%FF.txt"), "bad\xff.txt");
  EXPECT_EQ(percentDecode("d%fe/in%20x+y"), "d\xfe/in x+y");
  EXPECT_EQ(percentDecode("in%20x+y", /*plus_is_space=*/true), "in x y");
  EXPECT_EQ(percentDecode("a%2Bb", /*plus_is_space=*/true), "a+b");
  EXPECT_EQ(percentDecode(""), "");
  for (const char* bad : {"%", "%F", "%GG", "a%2", "%%41"}) EXPECT_FALSE(percentDecode(bad)) << bad;
  const std::string every = [] {
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    return all;
  }();
  EXPECT_EQ(percentDecode(percentEncode(every)), every);
}

TEST(TextChecks, AUnixUserNameIsPortable) {
  for (const char* good : {"alice", "_svc", "a1-b_c", "x"})
    EXPECT_TRUE(isUnixUserName(good)) << good;
  for (const char* bad : {"", "Alice", "1abc", "-a", "a b", "a/b", "a.b", "a$"}) {
    EXPECT_FALSE(isUnixUserName(bad)) << bad;
  }
  EXPECT_TRUE(isUnixUserName(std::string(32, 'a')));
  EXPECT_FALSE(isUnixUserName(std::string(33, 'a')));
}

}  // namespace
}  // namespace tuneplane
