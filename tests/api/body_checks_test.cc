// Body checks before any parser: content types, UTF-8, NUL bytes and nesting depth.
#include "api/body_checks.h"

#include <gtest/gtest.h>
#include "common/text_checks.h"

namespace tuneplane::api {
namespace {

TEST(BodyChecksTest, ContentTypeTable) {
  struct Case {
    std::string type;
    BodyKind kind;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"application/yaml", BodyKind::kSpec, true},
      {"application/x-yaml", BodyKind::kSpec, true},
      {"text/yaml; charset=utf-8", BodyKind::kSpec, true},
      {"Application/JSON", BodyKind::kSpec, true},
      {"text/plain", BodyKind::kSpec, true},
      {"application/octet-stream", BodyKind::kSpec, false},
      {"", BodyKind::kSpec, false},
      {"application/json; charset=utf-8", BodyKind::kJson, true},
      {"application/yaml", BodyKind::kJson, false},
  };
  for (const auto& c : cases) {
    auto checked = checkContentType(c.type, c.kind);
    EXPECT_EQ(checked.has_value(), c.ok) << c.type;
    if (!checked) {
      EXPECT_EQ(checked.error().code, "api.unsupported_media_type");
    }
  }
}

TEST(BodyChecksTest, Utf8Table) {
  struct Case {
    std::string text;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"plain ascii", true},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", true},
      {"\xc3", false},              // truncated
      {"\xc0\xaf", false},          // overlong '/'
      {"\xe0\x80\xaf", false},      // overlong
      {"\xed\xa0\x80", false},      // a surrogate
      {"\xf4\x90\x80\x80", false},  // above U+10FFFF
      {"\xff", false},
      {"a\x80", false},  // a lone continuation byte
  };
  for (const auto& c : cases) EXPECT_EQ(isUtf8(c.text), c.ok) << c.text;
}

std::string repeated(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

TEST(BodyChecksTest, BodyTextTable) {
  struct Case {
    std::string name;
    std::string body;
    std::string code;  // "" when accepted
  };
  const std::vector<Case> cases = {
      {"a spec", "a:\n  b: [1, {c: 2}]\n", ""},
      {"brackets in quotes", "a: \"" + std::string(100, '[') + "\"\n", ""},
      {"brackets in a comment", "a: 1 # " + std::string(100, '{') + "\n", ""},
      {"deep flow", "a: " + std::string(33, '['), "api.too_deep"},
      {"deep after an apostrophe", "a: it's\nb: " + std::string(33, '['), "api.too_deep"},
      {"deep after a '#' inside a word", "a: [x#" + std::string(33, '['), "api.too_deep"},
      {"deep indentation", "a:\n" + std::string(300, ' ') + "b: 1\n", "api.too_deep"},
      {"block sequences nested on one line", repeated("- ", 200) + "x\n", "api.too_deep"},
      {"complex keys nested on one line", repeated("? ", 200) + "x\n", "api.too_deep"},
      {"a sequence of maps", "a:\n  - b: 1\n    c: [x, y]\n  - - y\n", ""},
      {"NUL", std::string("a\0", 2), "api.nul_byte"},
      {"not UTF-8", "a: \xfe", "api.invalid_utf8"},
  };
  for (const auto& c : cases) {
    auto checked = checkBodyText(c.body);
    if (c.code.empty()) {
      EXPECT_TRUE(checked) << c.name << ": " << checked.error().describe();
    } else {
      ASSERT_FALSE(checked) << c.name;
      EXPECT_EQ(checked.error().code, c.code) << c.name;
    }
  }
}

}  // namespace
}  // namespace tuneplane::api
