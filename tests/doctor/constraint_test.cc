// Slurm constraint expressions: which feature lists satisfy them, and what is refused.
#include "doctor/constraint.h"

#include <gtest/gtest.h>

namespace tuneplane::doctor {
namespace {

struct MatchRow {
  const char* expression;
  std::vector<std::string> features;
  bool matches;
};

TEST(ConstraintTest, MatchesFeatureListsLikeSlurm) {
  const MatchRow rows[] = {
      {"h100", {"h100"}, true},
      {"h100", {"a100"}, false},
      {"h100", {}, false},
      {"h100", {"h100x"}, false},  // whole names, not prefixes
      {"a100&ib", {"a100", "ib"}, true},
      {"a100&ib", {"a100"}, false},
      {"a100,ib", {"ib", "a100"}, true},  // ',' is AND, as in the simulator
      {"a100,ib", {"ib"}, false},
      {"a100|h100", {"h100"}, true},
      {"a100|h100", {"a100"}, true},
      {"a100|h100", {"l40s"}, false},
      {"a|b&c", {"a"}, true},  // & binds tighter: a|(b&c)
      {"a|b&c", {"b"}, false},
      {"a|b&c", {"b", "c"}, true},
      {"(a|b)&c", {"a"}, false},
      {"(a|b)&c", {"a", "c"}, true},
      {"[rack1|rack2]", {"rack2"}, true},  // matching OR: for one node, a group
      {"[rack1|rack2]&ib", {"rack1"}, false},
      {"((h100))", {"h100"}, true},
      {"fat*4", {"fat"}, true},  // counts ignored per node
      {"gpu_h100-80gb.v2", {"gpu_h100-80gb.v2"}, true},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.expression);
    auto c = Constraint::parse(row.expression);
    ASSERT_TRUE(c.has_value()) << c.error().message;
    EXPECT_EQ(c->matches(row.features), row.matches);
  }
}

TEST(ConstraintTest, ListsEveryFeatureOnceAndNotesCounts) {
  auto c = Constraint::parse("[fat*4&thin*12]|(fat&ib)");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->features(), (std::set<std::string>{"fat", "ib", "thin"}));
  EXPECT_TRUE(c->usesCounts());
  auto plain = Constraint::parse("a100&ib");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->usesCounts());
}

TEST(ConstraintTest, RefusesWhatItCannotReadWithThePosition) {
  struct Row {
    const char* expression;
    const char* says;
  };
  const Row rows[] = {
      {"", "expected a feature"},
      {"a&", "expected a feature"},
      {"&a", "expected a feature before '&'"},
      {"a||b", "expected a feature before '|'"},
      {"(a|b", "expected ')'"},
      {"[a|b)", "expected ']'"},
      {"a)", "unexpected ')'"},
      {"!a", "'!' (NOT)"},
      {"a b", "unexpected"},
      {"a*", "node count"},
      {"a*x", "node count"},
      {"h100 ", "unexpected"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.expression);
    auto c = Constraint::parse(row.expression);
    ASSERT_FALSE(c.has_value());
    EXPECT_EQ(c.error().code, "doctor.constraint_syntax");
    EXPECT_NE(c.error().message.find(row.says), std::string::npos) << c.error().message;
    EXPECT_NE(c.error().message.find("at position"), std::string::npos) << c.error().message;
  }
}

TEST(ConstraintTest, DeepNestingIsRefusedNotRecursedInto) {
  const std::string deep = std::string(10000, '(') + "a" + std::string(10000, ')');
  auto c = Constraint::parse(deep);
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().message.find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace tuneplane::doctor
