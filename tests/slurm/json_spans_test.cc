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

TEST(ArrayElements, SplitsAnArrayIntoItsValues) {
  const std::string text = R"({"jobs": [ {"a": [1,2]}, "x,y", 3 ,{"b":"]"} ], "n": []})";
  auto members = objectMembers(text);
  ASSERT_TRUE(members.has_value());
  auto elements = arrayElements(text, (*members)[0].value, "jobs");
  ASSERT_TRUE(elements.has_value()) << elements.error().describe();
  std::vector<std::string> values;
  for (const auto& span : *elements) values.push_back(at(text, span));
  EXPECT_EQ(values, (std::vector<std::string>{R"({"a": [1,2]})", R"("x,y")", "3", R"({"b":"]"})"}));
  auto empty = arrayElements(text, (*members)[1].value, "n");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST(ArrayElements, RefusesBrokenArraysNamingTheElement) {
  struct Case {
    const char* array;
    const char* field;
  };
  for (const Case& c : {
           Case{"[1 2]", "jobs[1]"},
           Case{"[1,]", "jobs[1]"},
           Case{"[,1]", "jobs[0]"},
           Case{"{}", "jobs"},
       }) {
    const std::string text = std::string(R"({"jobs": )") + c.array + "}";
    auto members = objectMembers(text);
    ASSERT_TRUE(members.has_value()) << text;
    auto elements = arrayElements(text, (*members)[0].value, "jobs");
    ASSERT_FALSE(elements.has_value()) << c.array;
    EXPECT_EQ(elements.error().field, c.field) << c.array;
  }
}

}  // namespace
}  // namespace tuneplane::slurm
