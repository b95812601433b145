// The /v1 client against a fake server on loopback: the requests it sends (method, path,
// query, headers, body) and how it reads answers and failures. The token must reach the
// server in the Authorization header and nowhere else, and never appear in an error.
#include "client/api_client.h"

#include <gtest/gtest.h>

#include "support/fake_api_server.h"

namespace tuneplane::client {
namespace {

using tuneplane::testing::CannedReply;
using tuneplane::testing::FakeApiServer;

constexpr const char* kToken = "tp-secret-token-0123456789";
constexpr const char* kJob = R"({"id":"hello-1a2b3c4d","name":"hello","phase":"Pending"})";

std::unique_ptr<ApiClient> clientFor(const std::string& server,
                                     std::optional<std::string> token = kToken) {
  ClientConfig config;
  config.server = server;
  config.token = std::move(token);
  auto client = ApiClient::connect(
      config, {std::chrono::milliseconds(2000), std::chrono::milliseconds(1500)});
  EXPECT_TRUE(client.has_value());
  return client ? std::move(*client) : nullptr;
}

TEST(ApiClientTest, SubmitPostsTheSpecAsWrittenWithTheBearerToken) {
  FakeApiServer server;
  server.on("POST", "/v1/jobs", 201, kJob);
  auto client = clientFor(server.url());
  const std::string spec = "apiVersion: tuneplane.io/v1\nkind: TrainingJob\n";
  auto job = client->submitJob(spec);
  ASSERT_TRUE(job.has_value()) << job.error().errors.front().message;
  EXPECT_EQ((*job)["id"], "hello-1a2b3c4d");
  const auto sent = server.requests("POST", "/v1/jobs");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].body, spec);
  EXPECT_EQ(sent[0].header("Authorization"), std::string("Bearer ") + kToken);
  EXPECT_EQ(sent[0].header("Content-Type"), "application/yaml");
  EXPECT_EQ(sent[0].header("Accept"), "application/json");
}

TEST(ApiClientTest, AJsonSpecIsSentAsJson) {
  FakeApiServer server;
  server.on("POST", "/v1/jobs", 201, kJob);
  auto client = clientFor(server.url());
  ASSERT_TRUE(client->submitJob("  {\"apiVersion\": \"tuneplane.io/v1\"}").has_value());
  EXPECT_EQ(server.requests("POST", "/v1/jobs").at(0).header("Content-Type"), "application/json");
}

TEST(ApiClientTest, NoTokenSendsNoAuthorizationHeader) {
  FakeApiServer server;
  server.on("GET", "/v1/whoami", 401,
            R"({"errors":[{"code":"auth.missing_token","field":"","message":"no token"}]})");
  auto client = clientFor(server.url(), std::nullopt);
  auto answer = client->whoami();
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().http_status, 401);
  EXPECT_EQ(answer.error().errors.at(0).code, "auth.missing_token");
  EXPECT_EQ(server.requests().at(0).header("Authorization"), "");
}

TEST(ApiClientTest, ListSendsOnlyTheFiltersThatAreSetEscaped) {
  FakeApiServer server;
  server.on("GET", "/v1/jobs", 200, R"({"items":[],"continue":""})");
  auto client = clientFor(server.url());
  ListQuery query;
  query.phase = "Running";
  query.labels = {"team=nlp", "tier=a b&c"};
  query.limit = 5;
  ASSERT_TRUE(client->listJobs(query).has_value());
  const auto sent = server.requests("GET", "/v1/jobs").at(0);
  EXPECT_EQ(sent.param("phase"), "Running");
  EXPECT_EQ(sent.param("limit"), "5");
  EXPECT_EQ(sent.params.count("name"), 0u);
  EXPECT_EQ(sent.params.count("continue"), 0u);
  std::vector<std::string> labels;
  for (auto [it, end] = sent.params.equal_range("label"); it != end; ++it) {
    labels.push_back(it->second);
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"team=nlp", "tier=a b&c"}));
}

TEST(ApiClientTest, RoutesAndBodiesOfEveryVerb) {
  FakeApiServer server;
  for (const char* path :
       {"/v1/jobs/a-1", "/v1/jobs/a-1/events", "/v1/jobs/a-1/logs", "/v1/whoami"}) {
    server.on("GET", path, 200, kJob);
  }
  server.on("POST", "/v1/jobs/a-1/cancel", 202, kJob);
  server.on("POST", "/v1/jobs/a-1/attempts/2/abandon", 202, kJob);
  auto client = clientFor(server.url());
  ASSERT_TRUE(client->getJob("a-1"));
  ASSERT_TRUE(client->jobEvents("a-1"));
  ASSERT_TRUE(client->jobLogs("a-1", LogsQuery{3, "gpu", true}));
  ASSERT_TRUE(client->cancelJob("a-1"));
  ASSERT_TRUE(client->abandonAttempt("a-1", 2, "receipt lost \"for good\""));
  ASSERT_TRUE(client->whoami());

  const auto logs = server.requests("GET", "/v1/jobs/a-1/logs").at(0);
  EXPECT_EQ(logs.param("attempt"), "3");
  EXPECT_EQ(logs.param("component"), "gpu");
  EXPECT_EQ(logs.param("stream"), "stderr");
  const auto abandon = server.requests("POST", "/v1/jobs/a-1/attempts/2/abandon").at(0);
  EXPECT_EQ(nlohmann::json::parse(abandon.body),
            nlohmann::json({{"reason", "receipt lost \"for good\""}}));
  EXPECT_EQ(abandon.header("Content-Type"), "application/json");
  EXPECT_EQ(server.requests("POST", "/v1/jobs/a-1/cancel").size(), 1u);
  for (const auto& r : server.requests()) {
    EXPECT_EQ(r.header("Authorization"), std::string("Bearer ") + kToken) << r.path;
  }
}

TEST(ApiClientTest, AnIdIsOnePathSegment) {
  FakeApiServer server;
  auto client = clientFor(server.url());
  auto answer = client->getJob("../whoami");
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().http_status, 404);
  // Escaped: the server sees one segment, not a route above /v1/jobs/.
  EXPECT_EQ(server.requests().at(0).path, "/v1/jobs/../whoami");
  EXPECT_TRUE(server.requests("GET", "/v1/whoami").empty());
}

TEST(ApiClientTest, TheServersErrorsAreReadWithTheirFields) {
  FakeApiServer server;
  server.on(
      "POST", "/v1/jobs", 422,
      R"({"errors":[{"code":"spec.required","field":"spec.pools[0].image","message":"required"},)"
      R"({"code":"spec.invalid","field":"metadata.name","message":"bad name"}]})");
  auto client = clientFor(server.url());
  auto answer = client->submitJob("kind: TrainingJob\n");
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().kind, FailureKind::kHttp);
  EXPECT_EQ(answer.error().http_status, 422);
  ASSERT_EQ(answer.error().errors.size(), 2u);
  EXPECT_EQ(answer.error().errors[0].field, "spec.pools[0].image");
  EXPECT_EQ(answer.error().errors[1].code, "spec.invalid");
  EXPECT_FALSE(answer.error().transient());
}

TEST(ApiClientTest, AnErrorThatEchoesTheTokenIsRedacted) {
  FakeApiServer server;
  server.on("GET", "/v1/jobs/x", 401,
            std::string(R"({"errors":[{"code":"auth.invalid_token","field":"","message":"token )") +
                kToken + R"( is unknown"}]})");
  server.on("GET", "/v1/jobs/y", 500, std::string("<html>oops ") + kToken + "</html>");
  auto client = clientFor(server.url());
  for (const char* id : {"x", "y"}) {
    auto answer = client->getJob(id);
    ASSERT_FALSE(answer.has_value());
    for (const Error& e : answer.error().errors) {
      EXPECT_EQ(e.message.find(kToken), std::string::npos) << e.message;
      EXPECT_EQ(e.field.find(kToken), std::string::npos) << e.field;
    }
  }
}

TEST(ApiClientTest, AnErrorWithoutErrorsListKeepsTheStatusAndAnExcerpt) {
  FakeApiServer server;
  server.on("GET", "/v1/jobs/x", CannedReply{503, "try later", "text/plain"});
  auto client = clientFor(server.url());
  auto answer = client->getJob("x");
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().http_status, 503);
  EXPECT_EQ(answer.error().errors.at(0).code, kErrHttp);
  EXPECT_NE(answer.error().errors.at(0).message.find("try later"), std::string::npos);
  EXPECT_TRUE(answer.error().transient());
}

TEST(ApiClientTest, ASuccessThatIsNotJsonIsABadResponse) {
  FakeApiServer server;
  server.on("GET", "/v1/jobs/x", CannedReply{200, "<html>a proxy</html>", "text/html"});
  auto client = clientFor(server.url());
  auto answer = client->getJob("x");
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().kind, FailureKind::kBadResponse);
  EXPECT_EQ(answer.error().errors.at(0).code, kErrBadResponse);
}

TEST(ApiClientTest, NobodyListeningIsNotSent) {
  int port = 0;
  {
    FakeApiServer gone;  // a port that was free a moment ago and is closed now
    port = gone.port();
  }
  auto client = clientFor("http://127.0.0.1:" + std::to_string(port));
  auto answer = client->getJob("x");
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().kind, FailureKind::kNotSent);
  EXPECT_EQ(answer.error().errors.at(0).code, kErrUnreachable);
  EXPECT_TRUE(answer.error().transient());
}

TEST(ApiClientTest, AnAnswerThatNeverComesIsNoAnswer) {
  FakeApiServer server;
  server.on("POST", "/v1/jobs/x/cancel", CannedReply{202, kJob, "application/json", true});
  auto client = clientFor(server.url());
  auto answer = client->cancelJob("x");  // the request timeout (1.5 s) ends it
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().kind, FailureKind::kNoAnswer);
  EXPECT_EQ(answer.error().errors.at(0).code, kErrNoAnswer);
}

}  // namespace
}  // namespace tuneplane::client
