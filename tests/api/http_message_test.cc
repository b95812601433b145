// The API's own request plumbing: route templates matched without a regular expression,
// targets decoded into a path and query parameters, header names without case.
#include "api/http_message.h"

#include <gtest/gtest.h>

#include "api/route_templates.h"

namespace tuneplane::api {
namespace {

using Captures = std::vector<std::string>;

Captures matched(std::string_view route, std::string_view path) {
  Captures captures{"stale"};
  if (!matchRoute(route, path, captures)) return {"<no match>"};
  return captures;
}

TEST(RouteMatchTest, LiteralTemplatesMatchOnlyThemselves) {
  EXPECT_EQ(matched("/v1/jobs", "/v1/jobs"), Captures{});
  for (const char* other : {"/v1/jobs/", "/v1/job", "/v1/jobsx", "", "/V1/jobs", "/v1//jobs"}) {
    EXPECT_EQ(matched("/v1/jobs", other), Captures{"<no match>"}) << other;
  }
  EXPECT_EQ(matched("/ui/", "/ui/"), Captures{});
  EXPECT_EQ(matched("/ui/", "/ui"), Captures{"<no match>"});
}

TEST(RouteMatchTest, ASegmentIsOneNonEmptyPartWithoutSlash) {
  EXPECT_EQ(matched("/v1/jobs/{id}", "/v1/jobs/j-1a"), Captures{"j-1a"});
  EXPECT_EQ(matched("/v1/jobs/{id}/events", "/v1/jobs/a b/events"), Captures{"a b"});
  for (const char* other : {"/v1/jobs/", "/v1/jobs/a/b", "/v1/jobs//events", "/v1/jobs/a/"}) {
    EXPECT_EQ(matched("/v1/jobs/{id}", other), Captures{"<no match>"}) << other;
  }
  EXPECT_EQ(matched("/v1/jobs/{id}/events", "/v1/jobs//events"), Captures{"<no match>"});
}

TEST(RouteMatchTest, AnAttemptNumberIsDigitsAndTheConsolePathIsTheRest) {
  const std::string_view abandon = "/v1/jobs/{id}/attempts/{n}/abandon";
  EXPECT_EQ(matched(abandon, "/v1/jobs/j1/attempts/12/abandon"), (Captures{"j1", "12"}));
  for (const char* other : {"/v1/jobs/j1/attempts/1a/abandon", "/v1/jobs/j1/attempts/-1/abandon",
                            "/v1/jobs/j1/attempts//abandon"}) {
    EXPECT_EQ(matched(abandon, other), Captures{"<no match>"}) << other;
  }
  EXPECT_EQ(matched("/ui/{path}", "/ui/js/app.js"), Captures{"js/app.js"});
  EXPECT_EQ(matched("/ui/{path}", "/ui/"), Captures{"<no match>"});
}

TEST(RouteMatchTest, EveryTemplateOfTheTableMatchesItsOwnExample) {
  for (const auto& route : routeTable()) {
    std::string example(route.path);
    for (auto open = example.find('{'); open != std::string::npos; open = example.find('{')) {
      const auto close = example.find('}', open);
      const bool number = example.substr(open, close - open + 1) == "{n}";
      example.replace(open, close - open + 1, number ? "7" : "x");
    }
    Captures captures;
    EXPECT_TRUE(matchRoute(route.path, example, captures)) << route.path << " " << example;
  }
}

TEST(RequestTargetTest, PathAndQueryAreDecoded) {
  std::string path;
  QueryParams params;
  ASSERT_TRUE(parseTarget("/v1/jobs/a%20b?phase=Running&label=k%3Dv+w&label=x&flag&=dropped", path,
                          params));
  EXPECT_EQ(path, "/v1/jobs/a b");
  EXPECT_EQ(params.count("phase"), 1u);
  EXPECT_EQ(params.find("phase")->second, "Running");
  ASSERT_EQ(params.count("label"), 2u);
  auto [first, last] = params.equal_range("label");
  EXPECT_EQ(first->second, "k=v w");  // split at the first '=', '+' a space
  EXPECT_EQ(std::next(first)->second, "x");
  EXPECT_EQ(params.find("flag")->second, "");
  EXPECT_EQ(params.size(), 4u);  // the pair without a name is dropped
}

TEST(RequestTargetTest, APlusInThePathIsItselfAndABadEscapeIsRefusedByPart) {
  std::string path;
  QueryParams params;
  ASSERT_TRUE(parseTarget("/ui/a+b.js", path, params));
  EXPECT_EQ(path, "/ui/a+b.js");
  const auto bad_path = parseTarget("/v1/jobs/%zz", path, params);
  ASSERT_FALSE(bad_path);
  EXPECT_EQ(bad_path.error().field, "path");
  const auto bad_value = parseTarget("/v1/jobs?name=50%", path, params);
  ASSERT_FALSE(bad_value);
  EXPECT_EQ(bad_value.error().code, "api.invalid_parameter");
  EXPECT_EQ(bad_value.error().field, "name");
  const auto bad_name = parseTarget("/v1/jobs?na%me=1", path, params);
  ASSERT_FALSE(bad_name);
  EXPECT_EQ(bad_name.error().field, "query");
}

TEST(HttpMessageTest, HeaderNamesIgnoreCaseAndKeepEveryValue) {
  HttpRequest req;
  req.headers.emplace("authorization", "Bearer a");
  req.headers.emplace("AUTHORIZATION", "Bearer b");
  req.headers.emplace("Content-Type", "application/json");
  EXPECT_EQ(req.header("Authorization"), "Bearer a");
  EXPECT_EQ(req.headerCount("Authorization"), 2u);
  EXPECT_TRUE(req.hasHeader("content-type"));
  EXPECT_EQ(req.header("X-Missing"), "");

  HttpResponse res;
  res.setHeader("content-type", "text/plain");
  res.setBody("{}", "application/json");
  EXPECT_EQ(res.headers.count("Content-Type"), 1u);
  EXPECT_EQ(res.headers.find("CONTENT-TYPE")->second, "application/json");
  EXPECT_EQ(res.body, "{}");
}

}  // namespace
}  // namespace tuneplane::api
