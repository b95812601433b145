// The structural walk that cuts a large answer into records (json_spans.h), from tables.
#include "slurm/json_spans.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tuneplane::slurm {
namespace {

std::string at(std::string_view text, JsonSpan span) {
  return std::string(text.substr(span.begin, span.end - span.begin));
}

TEST(ObjectMembers, FindsEveryKeyAndTheExactBytesOfItsValue) {
  struct Case {
    std::string text;
    std::vector<std::pair<std::string, std::string>> members;
  };
  const std::vector<Case> cases = {
      {"{}", {}},
      {" \n{ } \n", {}},
      {R"({"a":1})", {{"a", "1"}}},
      {R"({ "a" : -1.5e3 , "b":true,"c" :null })", {{"a", "-1.5e3"}, {"b", "true"}, {"c", "null"}}},
      {R"({"s": "x}\"]{[", "t": "\\"})", {{"s", R"("x}\"]{[")"}, {"t", R"("\\")"}}},
      {R"({"o": {"k": [1, {"z": "}"}]}, "e": []})",
       {{"o", R"({"k": [1, {"z": "}"}]})"}, {"e", "[]"}}},
      {R"({"k\"ey": 1, "k": 2, "k": 3})", {{R"(k\"ey)", "1"}, {"k", "2"}, {"k", "3"}}},
  };
  for (const auto& c : cases) {
    auto members = objectMembers(c.text);
    ASSERT_TRUE(members.has_value()) << c.text << ": " << members.error().describe();
    ASSERT_EQ(members->size(), c.members.size()) << c.text;
    for (size_t i = 0; i < c.members.size(); ++i) {
      EXPECT_EQ((*members)[i].key, c.members[i].first) << c.text;
      EXPECT_EQ(at(c.text, (*members)[i].value), c.members[i].second) << c.text;
    }
  }
}

TEST(ObjectMembers, RefusesBrokenPunctuationNamingTheMember) {
  struct Case {
    const char* text;
    const char* field;
  };
  for (const Case& c : {
           Case{"", ""},
           Case{"[1]", ""},
           Case{R"({"a" 1})", "a"},
           Case{R"({"a": 1 "b": 2})", "a"},
           Case{R"({"a": 1,})", "a"},
           Case{R"({"a": })", "a"},
           Case{R"({"a": [1, 2})", "a"},
           Case{R"({"a": "open})", "a"},
           Case{R"({"a": 1} x)", "a"},
           Case{R"({"a": 1}})", "a"},
           Case{R"({a: 1})", ""},
           Case{R"({"a)", ""},
       }) {
    auto members = objectMembers(c.text);
    ASSERT_FALSE(members.has_value()) << c.text;
    EXPECT_EQ(members.error().code, "slurm.bad_response");
    EXPECT_EQ(members.error().field, c.field) << c.text;
    EXPECT_NE(members.error().message.find("malformed JSON at byte"), std::string::npos);
  }
}

TEST(ObjectMembers, HandsTheNamedArrayOverAndGoesOnWhereTheReaderSays) {
  const std::string text = R"({"jobs": [ {"a": "]"}, 2 ], "n": [], "jobs": 5, "x": 1})";
  std::vector<size_t> handed;
  auto members = objectMembers(text, "jobs", [&](size_t begin) -> Result<size_t> {
    handed.push_back(begin);
    return text.find("],") + 1;  // where this reader says the array ends
  });
  ASSERT_TRUE(members.has_value()) << members.error().describe();
  EXPECT_EQ(handed, std::vector<size_t>{9});  // the array only, not the later scalar "jobs"
  ASSERT_EQ(members->size(), 4u);
  EXPECT_EQ(at(text, (*members)[0].value), R"([ {"a": "]"}, 2 ])");
  EXPECT_EQ(at(text, (*members)[2].value), "5");
  auto refused = objectMembers(text, "jobs", [](size_t) -> Result<size_t> {
    return fail("slurm.bad_response", "jobs[1]", "no");
  });
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().field, "jobs[1]");
}

TEST(ObjectMembers, StringsMayNotHoldControlCharactersAndNoBackslashStandsOutsideThem) {
  EXPECT_FALSE(objectMembers("{\"a\": \"x\ty\"}").has_value());
  EXPECT_FALSE(objectMembers("{\"a\": \"x\\\ny\"}").has_value());
  EXPECT_TRUE(objectMembers(R"({"a": "x\ty"})").has_value());
  EXPECT_TRUE(objectMembers(R"({"a": ["x\\", "\""], "b": "\\"})").has_value());
  // A backslash outside a string is never JSON, however many there are (an even run once
  // balanced the brackets here while the whole-answer pass refused the answer: the fuzz
  // regression input slurm_answers/backslashes-between-values).
  EXPECT_FALSE(objectMembers(R"({"a": [\"]"]})").has_value());
  EXPECT_FALSE(objectMembers(R"({"a": [{"s": "x"\\}], "b": 1})").has_value());
  EXPECT_FALSE(objectMembers(R"({"a": tr\\ue, "b": 1})").has_value());
}

}  // namespace
}  // namespace tuneplane::slurm
