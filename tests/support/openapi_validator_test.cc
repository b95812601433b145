// The tests' OpenAPI validator (openapi_validator.h): each keyword of its subset accepts what
// it should and refuses what it should, answers are matched to operations, and a document
// using a keyword it does not check is reported.
#include "support/openapi_validator.h"

#include <gtest/gtest.h>

namespace tuneplane::test {
namespace {

using nlohmann::json;

const json kDoc = json::parse(R"({
  "openapi": "3.1.0",
  "paths": {
    "/v1/things/{id}": {"get": {"responses": {
      "200": {"description": "x", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
      "304": {"description": "not modified"},
      "4XX": {"$ref": "#/components/responses/NotFound"}}}},
    "/ui/{path}": {"get": {"responses": {"200": {"description": "x", "content": {"*/*": {"schema": {"type": "string"}}}}}}},
    "/metrics": {"get": {"responses": {"200": {"description": "x", "content": {"text/plain": {"schema": {"type": "string"}}}}}}}
  },
  "components": {
    "schemas": {
      "Thing": {"type": "object", "required": ["id", "size"], "additionalProperties": false,
                "properties": {"id": {"type": "string"}, "size": {"type": "integer", "minimum": 0, "maximum": 9},
                               "kind": {"type": "string", "enum": ["a", "b"]},
                               "owner": {"type": ["string", "null"]},
                               "tags": {"type": "array", "items": {"type": "string"}},
                               "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                               "parent": {"anyOf": [{"$ref": "#/components/schemas/Thing"}, {"type": "null"}]}}},
      "ErrorList": {"type": "object", "required": ["errors"], "properties": {"errors": {"type": "array"}}}
    },
    "responses": {"NotFound": {"description": "x", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorList"}}}}}
  }
})");

const json& thing() {
  static const json schema = {{"$ref", "#/components/schemas/Thing"}};
  return schema;
}

TEST(OpenApiValidator, AcceptsWhatMatches) {
  const OpenApiValidator v(kDoc);
  EXPECT_EQ(v.validate(json::parse(R"({"id": "x", "size": 3, "kind": "a", "owner": null,
      "tags": ["t"], "labels": {"k": "v"}, "parent": {"id": "p", "size": 0}})"),
                       thing()),
            "");
  EXPECT_TRUE(v.documentProblems().empty()) << ::testing::PrintToString(v.documentProblems());
}

TEST(OpenApiValidator, RefusesEachKindOfMismatchNamingWhere) {
  const OpenApiValidator v(kDoc);
  const auto check = [&](const char* value, const char* expected) {
    const std::string problem = v.validate(json::parse(value), thing());
    EXPECT_NE(problem.find(expected), std::string::npos) << value << " → " << problem;
  };
  check(R"({"size": 1})", "no 'id'");                                    // required
  check(R"({"id": 1, "size": 1})", "$.id: integer");                     // type
  check(R"({"id": "x", "size": 1, "kind": "c"})", "not one of");         // enum
  check(R"({"id": "x", "size": 10})", "above the maximum");              // maximum
  check(R"({"id": "x", "size": -1})", "below the minimum");              // minimum
  check(R"({"id": "x", "size": 1, "extra": 1})", "$.extra: a member");   // additionalProperties
  check(R"({"id": "x", "size": 1, "tags": [1]})", "$.tags[0]");          // items
  check(R"({"id": "x", "size": 1, "labels": {"k": 1}})", "$.labels.k");  // schema for the rest
  check(R"({"id": "x", "size": 1, "parent": 3})", "none of anyOf");      // anyOf
  check(R"({"id": "x", "size": 1, "parent": {"id": "p"}})", "none of anyOf");  // $ref inside
}

TEST(OpenApiValidator, ChecksAnswersByRouteStatusAndMediaType) {
  const OpenApiValidator v(kDoc);
  EXPECT_EQ(
      v.checkAnswer("GET", "/v1/things/7?x=1", 200, "application/json", R"({"id":"7","size":1})"),
      "");
  EXPECT_NE(v.checkAnswer("GET", "/v1/things/7", 200, "application/json", R"({"id":7})"), "");
  EXPECT_NE(v.checkAnswer("GET", "/v1/things/7", 200, "application/json", "not json"), "");
  EXPECT_NE(v.checkAnswer("GET", "/v1/things/7", 200, "text/html", "<p>"), "");
  EXPECT_EQ(v.checkAnswer("HEAD", "/v1/things/7", 200, "application/json", ""), "");
  EXPECT_EQ(v.checkAnswer("GET", "/v1/things/7", 404, "application/json", R"({"errors":[]})"),
            "");  // 4XX
  EXPECT_NE(v.checkAnswer("GET", "/v1/things/7", 500, "application/json", R"({"errors":[]})"), "");
  EXPECT_EQ(v.checkAnswer("GET", "/v1/things/7", 304, "", ""), "");
  EXPECT_NE(v.checkAnswer("GET", "/v1/things/7", 304, "text/plain", "body"), "");
  EXPECT_EQ(v.checkAnswer("GET", "/ui/js/app.js", 200, "text/javascript", "x"), "");  // */*
  EXPECT_EQ(v.checkAnswer("GET", "/metrics", 200, "text/plain; version=0.0.4", "x"), "");
  // No operation: only the router's refusals, in the error shape.
  EXPECT_EQ(v.checkAnswer("POST", "/metrics", 405, "application/json", R"({"errors":[]})"), "");
  EXPECT_NE(v.checkAnswer("POST", "/metrics", 200, "application/json", "{}"), "");
  EXPECT_NE(v.checkAnswer("GET", "/nowhere", 200, "text/plain", "x"), "");
  EXPECT_EQ(v.matchPath("/v1/things/7/extra"), "");
  EXPECT_EQ(v.operations(),
            (std::vector<std::string>{"GET /metrics", "GET /ui/{path}", "GET /v1/things/{id}"}));
}

TEST(OpenApiValidator, ReportsKeywordsItDoesNotCheckAndDanglingRefs) {
  json doc = kDoc;
  doc["components"]["schemas"]["Thing"]["properties"]["id"]["pattern"] = "^x";
  doc["components"]["schemas"]["Other"] = {{"$ref", "#/components/schemas/Nope"}};
  const auto problems = OpenApiValidator(doc).documentProblems();
  ASSERT_EQ(problems.size(), 2u) << ::testing::PrintToString(problems);
  EXPECT_NE(problems[0].find("resolves to nothing"), std::string::npos);
  EXPECT_NE(problems[1].find("'pattern'"), std::string::npos);
  EXPECT_EQ(OpenApiValidator(json()).documentProblems().size(), 1u);
}

TEST(OpenApiValidator, TheRepositoryDocumentIsCheckable) {
  const auto problems = OpenApiValidator::repository().documentProblems();
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

}  // namespace
}  // namespace tuneplane::test
