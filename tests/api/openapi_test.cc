// The OpenAPI document of /v1 (docs/openapi.json) against the server: the same routes, the same
// methods, served byte for byte at GET /v1/openapi.json without a token, and only keywords the
// tests' validator checks. (Every answer of ApiFixture's client is validated against it too:
// api_fixture.h.)
#include <fstream>
#include <set>
#include <sstream>

#include "api/api_fixture.h"
#include "api/openapi_document.h"
#include "api/route_templates.h"
#include "support/openapi_validator.h"
#include "support/test_paths.h"

namespace tuneplane::api::testing {
namespace {

// The server's routes. The ONE place this test depends on how the server lists them.
std::set<std::string> serverRoutes() {
  return {kRouteTemplates.begin(), kRouteTemplates.end()};
}

std::set<std::string> documentedPaths() {
  std::set<std::string> paths;
  for (const auto& [path, item] :
       test::OpenApiValidator::repository().document()["paths"].items()) {
    paths.insert(path);
  }
  return paths;
}

// A concrete path for a template: {id} a job id, {n} an attempt, {path} a console file.
std::string concrete(std::string tmpl) {
  for (const auto& [param, value] : {std::pair{"{id}", "job-0123456789"}, std::pair{"{n}", "1"},
                                     std::pair{"{path}", "index.html"}}) {
    const auto at = tmpl.find(param);
    if (at != std::string::npos) tmpl.replace(at, std::string(param).size(), value);
  }
  return tmpl;
}

std::string sorted(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += " " + i;
  return out;
}

class OpenApiTest : public ApiFixture {};

TEST_F(OpenApiTest, DocumentUsesOnlyWhatTheValidatorChecks) {
  const auto problems = test::OpenApiValidator::repository().documentProblems();
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

TEST_F(OpenApiTest, EveryServerRouteIsDocumentedAndEveryDocumentedPathIsARoute) {
  const std::set<std::string> server = serverRoutes();
  const std::set<std::string> documented = documentedPaths();
  std::set<std::string> undocumented;
  std::set<std::string> unserved;
  for (const auto& r : server) {
    if (!documented.contains(r)) undocumented.insert(r);
  }
  for (const auto& p : documented) {
    if (!server.contains(p)) unserved.insert(p);
  }
  EXPECT_TRUE(undocumented.empty())
      << "routes missing from docs/openapi.json:" << sorted(undocumented);
  EXPECT_TRUE(unserved.empty()) << "docs/openapi.json paths the server lacks:" << sorted(unserved);
}

// For every route and method: the server answers 405 exactly when the document has no such
// operation (a documented method the server lacks, or a served one the document lacks, fails).
TEST_F(OpenApiTest, EveryRouteAnswersExactlyTheDocumentedMethods) {
  const auto operations = test::OpenApiValidator::repository().operations();
  const std::set<std::string> documented(operations.begin(), operations.end());
  for (const auto& route : serverRoutes()) {
    const std::string path = concrete(route);
    for (const std::string method : {"GET", "POST"}) {
      httplib::Request req;
      req.method = method;
      req.path = path;
      req.headers = bearer(kRootToken);
      if (method == "POST") req.set_header("Content-Type", "application/json");
      req.body = method == "POST" ? "{}" : "";
      auto res = http_->send(req);
      ASSERT_TRUE(res) << method << " " << path;
      const bool in_document = documented.contains(method + " " + route);
      EXPECT_EQ(res->status != 405, in_document)
          << method << " " << route << " answered " << res->status
          << (in_document ? " but the document has it" : " but the document lacks it");
    }
  }
}

TEST_F(OpenApiTest, ServedWithoutATokenByteForByteAsTheRepositoryKeepsIt) {
  std::ifstream in(test::sourceDir() / "docs" / "openapi.json");
  std::stringstream file;
  file << in.rdbuf();
  ASSERT_FALSE(file.str().empty());
  EXPECT_EQ(openApiDocument(), file.str());
  auto res = get("/v1/openapi.json", /*token=*/"");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(res->body, file.str());
  EXPECT_EQ(res->get_header_value("Cache-Control"), "no-store");
}

TEST_F(OpenApiTest, DocumentsTheBearerSchemeAndEveryUnauthenticatedAnswer) {
  const auto& doc = test::OpenApiValidator::repository().document();
  EXPECT_EQ(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
  // Every route that needs a token answers 401 without one, and documents that answer.
  for (const auto& route : serverRoutes()) {
    for (const auto& [method, op] : doc["paths"][route].items()) {
      const bool is_public = op.contains("security") && op["security"].empty();
      EXPECT_EQ(op["responses"].contains("401"), !is_public) << method << " " << route;
      if (is_public || method != "get") continue;
      auto res = get(concrete(route), /*token=*/"");
      ASSERT_TRUE(res);
      EXPECT_EQ(res->status, 401) << route;
    }
  }
}

}  // namespace
}  // namespace tuneplane::api::testing
