// The report: pass/fail rules, the stable JSON document and the text form.
#include "doctor/check.h"

#include <gtest/gtest.h>

namespace tuneplane::doctor {
namespace {

std::vector<CheckResult> mixed() {
  return {okCheck("slurmrestd", "answered", {{"url", "http://x"}}),
          warnCheck("staging/filesystem", "local", "share it"),
          failCheck("partition/gpu", "missing", "create it"),
          skipCheck("gpu_series/h100", "partitions unknown")};
}

TEST(CheckTest, PassingRules) {
  EXPECT_TRUE(passed({okCheck("a", "fine")}, false));
  EXPECT_TRUE(passed({okCheck("a", "fine"), warnCheck("b", "hm", "do")}, false));
  EXPECT_FALSE(passed({okCheck("a", "fine"), warnCheck("b", "hm", "do")}, /*strict=*/true));
  EXPECT_FALSE(passed({failCheck("a", "bad", "do")}, false));
  EXPECT_FALSE(passed({skipCheck("a", "why")}, false));
  EXPECT_TRUE(passed({}, true));
}

TEST(CheckTest, JsonDocumentIsStable) {
  const auto doc = reportToJson("/etc/site.yaml", mixed(), false);
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["site"], "/etc/site.yaml");
  EXPECT_EQ(doc["passed"], false);
  EXPECT_EQ(doc["strict"], false);
  EXPECT_EQ(doc["summary"], (nlohmann::json{{"ok", 1}, {"warn", 1}, {"fail", 1}, {"skip", 1}}));
  ASSERT_EQ(doc["checks"].size(), 4u);
  for (const auto& c : doc["checks"]) {
    EXPECT_EQ(c.size(), 5u) << c.dump();
    for (const char* key : {"name", "status", "message", "fix", "details"}) {
      EXPECT_TRUE(c.contains(key)) << key << " in " << c.dump();
    }
    EXPECT_TRUE(c["details"].is_object());
  }
  EXPECT_EQ(doc["checks"][0]["status"], "ok");
  EXPECT_EQ(doc["checks"][0]["details"]["url"], "http://x");
  EXPECT_EQ(doc["checks"][1]["status"], "warn");
  EXPECT_EQ(doc["checks"][2]["status"], "fail");
  EXPECT_EQ(doc["checks"][2]["fix"], "create it");
  EXPECT_EQ(doc["checks"][3]["status"], "skip");
  EXPECT_EQ(doc["checks"][3]["message"], "not checked: partitions unknown");
}

TEST(CheckTest, TextReportAlignsNamesAndShowsFixes) {
  const std::string text = reportToText("/etc/site.yaml", mixed(), false);
  EXPECT_NE(text.find("tuneplane doctor: site /etc/site.yaml\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  ok    slurmrestd          answered\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  fail  partition/gpu       missing\n"
                      "                            fix: create it\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("fix: \n"), std::string::npos) << "a skip has no fix line\n" << text;
  EXPECT_NE(text.find("4 checks: 1 ok, 1 warn, 1 fail, 1 skipped — FAILED\n"), std::string::npos)
      << text;

  EXPECT_NE(reportToText("s", {okCheck("a", "x"), warnCheck("b", "y", "z")}, false)
                .find("passed, with warnings"),
            std::string::npos);
  EXPECT_NE(reportToText("s", {okCheck("a", "x"), warnCheck("b", "y", "z")}, true)
                .find("FAILED (--strict: warnings fail)"),
            std::string::npos);
}

}  // namespace
}  // namespace tuneplane::doctor
