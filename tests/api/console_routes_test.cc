// The web console's routes (console_routes.cc) and the files they serve: every embedded file
// with its content type, the security headers and an ETag; conditional GETs; no token needed;
// nothing outside the table. And rules over the files themselves (the embedded bytes): no
// inline script or style (the CSP would block them), and no way for the JavaScript to turn
// a value into markup. Plus GET /v1/doctor's guard and answers with an injected doctor.
#include <algorithm>
#include <regex>

#include "api/console_assets.h"
#include "api_fixture.h"

namespace tuneplane::api::testing {
namespace {

// The policy the issue asks for, spelled out here so a change to it is a visible test change.
constexpr const char* kExpectedCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class ConsoleRoutesTest : public ApiFixture {};

TEST_F(ConsoleRoutesTest, RootIsTheJobsPageAndNeedsNoToken) {
  auto res = get("/", "");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(res->body.find(R"(<script type="module" src="/ui/js/jobs_page.js">)"),
            std::string::npos);
  EXPECT_EQ(get("/ui/", "")->body, res->body);
  auto head = http_->Head("/");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->get_header_value("Content-Security-Policy"), kExpectedCsp);
  EXPECT_TRUE(head->body.empty());
}

TEST_F(ConsoleRoutesTest, EveryEmbeddedFileIsServedWithItsTypeAndTheSecurityHeaders) {
  ASSERT_FALSE(consoleAssets().empty());
  for (const ConsoleAsset& asset : consoleAssets()) {
    const std::string path = "/ui/" + std::string(asset.path);
    auto res = get(path, "");
    ASSERT_TRUE(res) << path;
    ASSERT_EQ(res->status, 200) << path;
    EXPECT_EQ(res->body, asset.body) << path;
    EXPECT_EQ(res->get_header_value("Content-Type"), asset.content_type) << path;
    EXPECT_EQ(res->get_header_value("Content-Security-Policy"), kExpectedCsp) << path;
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(res->get_header_value("Referrer-Policy"), "no-referrer") << path;
    EXPECT_EQ(res->get_header_value("Cache-Control"), "no-cache") << path;
    EXPECT_EQ(res->get_header_value("ETag"), asset.etag) << path;
  }
}

TEST_F(ConsoleRoutesTest, TheTableHoldsThePagesSortedWithTheirTypes) {
  const auto assets = consoleAssets();
  EXPECT_TRUE(std::is_sorted(assets.begin(), assets.end(),
                             [](const auto& a, const auto& b) { return a.path < b.path; }));
  for (const char* page : {"index.html", "job.html", "submit.html", "site.html", "console.css",
                           "js/api.js", "js/dom.js"}) {
    EXPECT_NE(findConsoleAsset(page), nullptr) << page;
  }
  EXPECT_EQ(findConsoleAsset("nope.html"), nullptr);
  EXPECT_EQ(findConsoleAsset("js/api.js")->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(findConsoleAsset("console.css")->content_type, "text/css; charset=utf-8");
  for (const ConsoleAsset& asset : assets) {
    EXPECT_TRUE(std::regex_match(std::string(asset.etag), std::regex(R"("[0-9a-f]{32}")")))
        << asset.path << ": " << asset.etag;
  }
}

TEST_F(ConsoleRoutesTest, AConditionalGetWithTheCurrentEtagIs304) {
  const std::string etag(findConsoleAsset("js/api.js")->etag);
  struct Case {
    std::string if_none_match;
    int status;
  };
  for (const Case& c : std::vector<Case>{{etag, 304},
                                         {"W/" + etag, 304},
                                         {R"("0000", )" + etag, 304},
                                         {"*", 304},
                                         {R"("0000")", 200},
                                         {"", 200}}) {
    httplib::Headers headers;
    if (!c.if_none_match.empty()) headers.emplace("If-None-Match", c.if_none_match);
    auto res = http_->Get("/ui/js/api.js", headers);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, c.status) << c.if_none_match;
    EXPECT_EQ(res->get_header_value("ETag"), etag);
    if (c.status == 304) {
      EXPECT_TRUE(res->body.empty());
    }
  }
}

TEST_F(ConsoleRoutesTest, AnythingOutsideTheTableIsAJson404) {
  for (const std::string path : {"/ui/nope.js", "/ui/js/../index.html", "/ui/../CMakeLists.txt",
                                 "/ui/%2e%2e/index.html", "/ui//index.html", "/index.html"}) {
    auto res = get(path, "");
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_EQ(code(res), "api.not_found") << path;
  }
}

// The rules the console's files keep, checked on the bytes the binary serves.
TEST_F(ConsoleRoutesTest, NoFileHoldsInlineScriptInlineStyleOrAnHtmlSink) {
  const std::regex inline_script(R"(<script(?![^>]*\bsrc=)[^>]*>)", std::regex::icase);
  const std::regex handler_attribute(R"(<[^>]+\son[a-z]+\s*=)", std::regex::icase);
  const std::regex html_sink(
      R"(innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|localStorage|\.cookie\b)");
  for (const ConsoleAsset& asset : consoleAssets()) {
    const std::string body(asset.body);
    if (endsWith(asset.path, ".html")) {
      EXPECT_FALSE(std::regex_search(body, inline_script)) << asset.path;
      EXPECT_FALSE(std::regex_search(body, handler_attribute)) << asset.path;
      EXPECT_EQ(body.find("<style"), std::string::npos) << asset.path;
      EXPECT_EQ(body.find("style="), std::string::npos) << asset.path;
    }
    if (endsWith(asset.path, ".js")) {
      // dom.js names the sinks only in its comment; strip comments before looking.
      const std::string code = std::regex_replace(body, std::regex(R"((^|\n)\s*//[^\n]*)"), "$1");
      EXPECT_FALSE(std::regex_search(code, html_sink)) << asset.path;
      EXPECT_EQ(code.find(".style"), std::string::npos) << asset.path;
    }
  }
}

class DoctorRouteTest : public ApiFixture {
 protected:
  void tune(ApiDependencies& deps, HttpServerOptions&) override {
    deps.doctor = [this]() -> Result<nlohmann::json> {
      if (busy_) return fail("api.busy", "", "doctor's checks are running already");
      // The shape of doctor::reportToJson (docs/openapi.json's DoctorReport).
      return json{{"version", 1},
                  {"site", "site.yaml"},
                  {"passed", true},
                  {"strict", false},
                  {"summary", {{"ok", 0}, {"warn", 0}, {"fail", 0}, {"skip", 0}}},
                  {"checks", json::array()}};
    };
  }
  std::atomic<bool> busy_{false};
};

TEST_F(DoctorRouteTest, OnlyAnAdminRunsTheChecks) {
  EXPECT_EQ(get("/v1/doctor", "")->status, 401);
  auto user = get("/v1/doctor", kAliceToken);
  EXPECT_EQ(user->status, 403);
  EXPECT_EQ(code(user), "auth.forbidden");
  auto admin = get("/v1/doctor", kRootToken);
  ASSERT_EQ(admin->status, 200) << admin->body;
  EXPECT_EQ(body(admin)["passed"], true);
}

TEST_F(DoctorRouteTest, ASecondRunWhileOneIsUnderWayIs429) {
  busy_ = true;
  auto res = get("/v1/doctor", kRootToken);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(code(res), "api.busy");
}

TEST_F(ConsoleRoutesTest, WithoutADoctorTheRouteIs501) {
  auto res = get("/v1/doctor", kRootToken);
  EXPECT_EQ(res->status, 501);
  EXPECT_EQ(code(res), "api.not_available");
}

}  // namespace
}  // namespace tuneplane::api::testing
