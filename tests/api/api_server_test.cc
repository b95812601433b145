// The guard every route goes through: authentication (401), admin routes (403), JSON errors
// for what httplib answers itself (404, 413), body checks, and the access log.
#include <filesystem>
#include <utility>

#include "api_fixture.h"
#include "support/wait.h"

namespace tuneplane::api::testing {
namespace {

class ApiServerTest : public ApiFixture {};

TEST_F(ApiServerTest, NoTokenIs401MissingToken) {
  auto res = get("/v1/whoami", "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(code(res), "auth.missing_token");
  EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer");
}

TEST_F(ApiServerTest, AWrongTokenIs401InvalidToken) {
  auto res = get("/v1/whoami", "not-a-token");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(code(res), "auth.invalid_token");
  EXPECT_EQ(res->body.find("not-a-token"), std::string::npos);
}

TEST_F(ApiServerTest, ABasicAuthHeaderIsNotABearerToken) {
  auto res = http_->Get("/v1/whoami", {{"Authorization", std::string("Basic ") + kAliceToken}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(code(res), "auth.missing_token");
}

TEST_F(ApiServerTest, WhoamiNamesTheTokensUser) {
  auto alice = get("/v1/whoami", kAliceToken);
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->status, 200);
  const json none = json::array();
  EXPECT_EQ(body(alice),
            json({{"user", "alice"}, {"admin", false}, {"slurm_accounts", none}, {"qos", none}}));
  EXPECT_EQ(body(get("/v1/whoami", kRootToken)),
            json({{"user", "root"}, {"admin", true}, {"slurm_accounts", none}, {"qos", none}}));
}

TEST_F(ApiServerTest, AnUnknownRouteIsAJson404) {
  auto res = get("/v1/nothing-here");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(code(res), "api.not_found");
}

TEST_F(ApiServerTest, ABodyOverTheLimitIs413AndNothingIsStored) {
  auto res = post("/v1/jobs", std::string(65 * 1024, 'a'));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(code(res), "api.body_too_large");
  auto page = store_->listJobs({});
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->jobs.empty());
}

TEST_F(ApiServerTest, AWrongContentTypeIs415) {
  auto res = post("/v1/jobs", cpuSpec(), kAliceToken, "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 415);
  EXPECT_EQ(code(res), "api.unsupported_media_type");
}

TEST_F(ApiServerTest, MalformedBodiesGetA400NamingTheProblem) {
  struct Case {
    std::string body;
    std::string code;
  };
  const std::vector<Case> cases = {
      {"name: \xff\xfe", "api.invalid_utf8"},
      {std::string("name: a\0b", 9), "api.nul_byte"},
      {"a: " + std::string(5000, '[') + std::string(5000, ']'), "api.too_deep"},
      {"a: " + std::string(40, '{'), "api.too_deep"},
  };
  for (const auto& c : cases) {
    auto res = post("/v1/jobs", c.body);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << c.code;
    EXPECT_EQ(code(res), c.code);
  }
  // The server is still up.
  EXPECT_EQ(get("/healthz", "")->status, 200);
}

TEST_F(ApiServerTest, AYamlAliasBombIsRefusedWithoutExpansion) {
  std::string bomb = "a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const char prev = static_cast<char>(c - 1);
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ",*" + prev + ",*" + prev + ",*" + prev +
            ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + "]\n";
  }
  auto res = post("/v1/jobs", bomb);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 422);  // refused by the spec's rules; nothing was expanded
}

TEST_F(ApiServerTest, TheAccessLogHasOneJsonLinePerRequestAndNoToken) {
  ASSERT_TRUE(get("/v1/whoami", kAliceToken));
  ASSERT_TRUE(get("/v1/whoami", "wrong-token-xyz"));
  // The logger runs after the answer is written: wait (bounded) for both lines.
  tuneplane::test::waitUntil([&] { return accessLines().size() >= 2; }, std::chrono::seconds(20),
                             std::chrono::milliseconds(2));
  const auto lines = accessLines();
  ASSERT_EQ(lines.size(), 2u);
  // Each request may be served on its own worker, so the two lines come in either order.
  json first = json::parse(lines[0]);
  json second = json::parse(lines[1]);
  if (first["status"] != 200) std::swap(first, second);
  EXPECT_EQ(first["user"], "alice");
  EXPECT_EQ(first["route"], "/v1/whoami");
  EXPECT_EQ(first["status"], 200);
  EXPECT_EQ(second["status"], 401);
  EXPECT_TRUE(second["user"].is_null());
  for (const auto& line : lines) {
    EXPECT_EQ(line.find(kAliceToken), std::string::npos);
    EXPECT_EQ(line.find("wrong-token-xyz"), std::string::npos);
  }
}

}  // namespace
}  // namespace tuneplane::api::testing

namespace tuneplane::api::testing {
namespace {

// The limits travel from the site file to the transport in one struct with named fields
// (server_config.h: HttpServerOptions): two limits of one type, set to different values, each
// refuses at its own bound and names its own setting.
class LimitsByNameTest : public ApiFixture {
 protected:
  void tune(ApiDependencies&, HttpServerOptions& options) override {
    auto config = parseServerConfig(
        "server:\n  max_body_bytes: 3000\n  max_header_bytes: 5000\n  threads: 2\n", "/srv");
    ASSERT_TRUE(config) << config.error().front().describe();
    options = config->http;
    options.listen = {"127.0.0.1", 0};
  }
};

TEST_F(LimitsByNameTest, BodyAndHeaderLimitsReachTheTransportUnswapped) {
  auto small = post("/v1/jobs", std::string(2900, 'a'));
  ASSERT_TRUE(small);
  EXPECT_NE(small->status, 413);  // under max_body_bytes: read, then judged (it is no spec)
  auto big = post("/v1/jobs", std::string(3100, 'a'));
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_NE(big->body.find("3000 bytes (server.max_body_bytes)"), std::string::npos) << big->body;

  auto headers = bearer(kAliceToken);
  headers.emplace("X-Padding", std::string(4000, 'h'));  // under 5000: served
  auto fits = http_->Get("/v1/whoami", headers);
  ASSERT_TRUE(fits);
  EXPECT_EQ(fits->status, 200);
  headers.erase("X-Padding");
  headers.emplace("X-Padding", std::string(5200, 'h'));
  auto over = http_->Get("/v1/whoami", headers);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 431);
  EXPECT_NE(over->body.find("5000 bytes (server.max_header_bytes)"), std::string::npos)
      << over->body;
}

}  // namespace
}  // namespace tuneplane::api::testing
