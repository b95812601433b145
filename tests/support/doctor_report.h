// Reading a `tuneplane doctor -o json` document in tests: the checks of a site that should
// pass. Header-only; thread-safe (pure over its argument).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tuneplane::test {

// Expects every check of `doc` to be ok, except staging/filesystem, which may warn: a
// staging root under /tmp or on a one-host cluster is on a local disk, which doctor rightly
// flags. Returns the checks' names in the report's order.
inline std::vector<std::string> expectEveryCheckOk(const nlohmann::json& doc) {
  std::vector<std::string> names;
  for (const auto& c : doc.value("checks", nlohmann::json::array())) {
    names.push_back(c.value("name", ""));
    if (names.back() == "staging/filesystem") {
      EXPECT_NE(c.value("status", ""), "fail") << c.dump(2);
    } else {
      EXPECT_EQ(c.value("status", ""), "ok") << c.dump(2);
    }
  }
  return names;
}

}  // namespace tuneplane::test
