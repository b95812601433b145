#include "common/name_suggestion.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tuneplane {
namespace {

TEST(NameSuggestion, EditDistanceCountsEachInsertDeleteReplaceAndSwapOnce) {
  EXPECT_EQ(editDistance("h100", "h100"), 0u);
  EXPECT_EQ(editDistance("h10", "h100"), 1u);                 // insert
  EXPECT_EQ(editDistance("h1000", "h100"), 1u);               // delete
  EXPECT_EQ(editDistance("a100", "h100"), 1u);                // replace
  EXPECT_EQ(editDistance("custom-dmeo", "custom-demo"), 1u);  // swap of neighbours
  EXPECT_EQ(editDistance("H100", "h100"), 0u);                // case is ignored
  EXPECT_EQ(editDistance("", "gpu"), 3u);
  EXPECT_EQ(editDistance("gpu", "batch"), 5u);
}

struct SuggestionCase {
  const char* name;
  std::vector<std::string> names;
  std::optional<std::string> expected;
};

TEST(NameSuggestion, SuggestsOnlyANameCloseEnoughToBeASlip) {
  const std::vector<SuggestionCase> cases = {
      {"h10", {"a100", "h100"}, "h100"},
      {"custom-dmeo", {"custom-torch", "custom-demo"}, "custom-demo"},
      {"gpu-larg", {"cpu", "gpu", "gpu-large"}, "gpu-large"},
      {"H100", {"h100"}, "h100"},
      {"x", {"y"}, std::nullopt},  // every character differs: another name
      {"batch", {"gpu", "cpu"}, std::nullopt},
      {"llamafactory-v2", {"custom-demo"}, std::nullopt},
      {"a", {}, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(closestName(c.name, c.names), c.expected);
  }
}

TEST(NameSuggestion, TheMessageListsWhatExistsAndTheClosest) {
  EXPECT_EQ(withSuggestion("'h10' is not a GPU series of this site", "h10", {"a100", "h100"}),
            "'h10' is not a GPU series of this site; this site has: a100, h100; did you mean "
            "'h100'?");
  EXPECT_EQ(withSuggestion("'zzz' is unknown", "zzz", {"gpu", "cpu"}),
            "'zzz' is unknown; this site has: gpu, cpu");
  EXPECT_EQ(withSuggestion("'h100' is unknown", "h100", {}),
            "'h100' is unknown; this site has none");
  std::vector<std::string> many;
  for (int i = 0; i < 25; ++i) many.push_back("p" + std::to_string(i));
  const std::string long_list = withSuggestion("'q' is unknown", "q", many);
  EXPECT_NE(long_list.find("p19 and 5 more"), std::string::npos) << long_list;
  EXPECT_EQ(long_list.find("p20"), std::string::npos) << long_list;
}

}  // namespace
}  // namespace tuneplane
