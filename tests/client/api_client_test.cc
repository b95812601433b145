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

namespace tuneplane::client {
namespace {

TEST(ApiClientFilesTest, AListingSendsTheAreaAttemptPathAndPage) {
  FakeApiServer server;
  server.on("GET", "/v1/jobs/j-1a2b3c4d/files", 200, R"({"items":[],"continue":""})");
  auto client = clientFor(server.url());
  ASSERT_TRUE(client->listFiles("j-1a2b3c4d", {"output", 2, "a b/c"}, {50, "tok"}));
  ASSERT_TRUE(client->listFiles("j-1a2b3c4d", {"checkpoints", std::nullopt, ""}));
  const auto sent = server.requests("GET", "/v1/jobs/j-1a2b3c4d/files");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].param("area"), "output");
  EXPECT_EQ(sent[0].param("attempt"), "2");
  EXPECT_EQ(sent[0].param("path"), "a b/c");
  EXPECT_EQ(sent[0].param("limit"), "50");
  EXPECT_EQ(sent[0].param("continue"), "tok");
  EXPECT_EQ(sent[1].param("area"), "checkpoints");
  EXPECT_EQ(sent[1].params.count("attempt"), 0u);
  EXPECT_EQ(sent[1].params.count("path"), 0u);
}

TEST(ApiClientFilesTest, ADownloadStreamsTheBodyToTheSinkWithItsHead) {
  FakeApiServer server;
  const std::string data(200'000, 'x');
  server.on("GET", "/v1/jobs/j-1a2b3c4d/files/content",
            CannedReply{200, data, "application/octet-stream", false, {{"ETag", "\"abc\""}}});
  auto client = clientFor(server.url());
  std::string got;
  int calls = 0;
  auto head = client->downloadFile("j-1a2b3c4d", {"output", std::nullopt, "m.bin"}, 0, "",
                                   [&](const DownloadHead& h, std::string_view chunk) {
                                     ++calls;
                                     EXPECT_EQ(h.status, 200);
                                     EXPECT_EQ(h.total, data.size());
                                     EXPECT_EQ(h.etag, "\"abc\"");
                                     got.append(chunk);
                                     return true;
                                   });
  ASSERT_TRUE(head) << head.error().errors.front().message;
  EXPECT_EQ(got, data);
  EXPECT_GE(calls, 1);
  const auto sent = server.requests("GET", "/v1/jobs/j-1a2b3c4d/files/content");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].param("path"), "m.bin");
  EXPECT_EQ(sent[0].header("Range"), "");  // from the start: no range
  EXPECT_EQ(sent[0].header("Authorization"), std::string("Bearer ") + kToken);
}

TEST(ApiClientFilesTest, AResumeAsksForTheRestOfTheSameVersion) {
  FakeApiServer server;
  server.on("GET", "/v1/jobs/j-1a2b3c4d/files/content",
            CannedReply{206,
                        "6789",
                        "application/octet-stream",
                        false,
                        {{"ETag", "\"v1\""}, {"Content-Range", "bytes 6-9/10"}}});
  // The version changed: the whole file, from its start.
  server.on(
      "GET", "/v1/jobs/j-1a2b3c4d/files/content",
      CannedReply{200, "0123456789", "application/octet-stream", false, {{"ETag", "\"v2\""}}});
  auto client = clientFor(server.url());
  std::string got;
  DownloadHead seen;
  const auto sink = [&](const DownloadHead& h, std::string_view chunk) {
    seen = h;
    got.append(chunk);
    return true;
  };
  auto rest = client->downloadFile("j-1a2b3c4d", {"output", 1, "f"}, 6, "\"v1\"", sink);
  ASSERT_TRUE(rest) << rest.error().errors.front().message;
  EXPECT_EQ(got, "6789");
  EXPECT_EQ(seen.status, 206);
  EXPECT_EQ(seen.offset, 6u);
  EXPECT_EQ(seen.total, 10u);
  got.clear();
  auto whole = client->downloadFile("j-1a2b3c4d", {"output", 1, "f"}, 6, "\"v1\"", sink);
  ASSERT_TRUE(whole);
  EXPECT_EQ(seen.status, 200);
  EXPECT_EQ(seen.offset, 0u);
  EXPECT_EQ(seen.total, 10u);
  EXPECT_EQ(seen.etag, "\"v2\"");
  EXPECT_EQ(got, "0123456789");
  const auto sent = server.requests("GET", "/v1/jobs/j-1a2b3c4d/files/content");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].header("Range"), "bytes=6-");
  EXPECT_EQ(sent[0].header("If-Range"), "\"v1\"");
}

TEST(ApiClientFilesTest, ARefusedDownloadIsTheServersErrorAndTheSinkSeesNothing) {
  FakeApiServer server;
  server.on(
      "GET", "/v1/jobs/j-1a2b3c4d/files/content", 409,
      R"({"errors":[{"code":"files.symlink","field":"path","message":"output/x is a symbolic link"}]})");
  auto client = clientFor(server.url());
  bool called = false;
  auto head = client->downloadFile("j-1a2b3c4d", {"output", std::nullopt, "x"}, 0, "",
                                   [&](const DownloadHead&, std::string_view) {
                                     called = true;
                                     return true;
                                   });
  ASSERT_FALSE(head);
  EXPECT_FALSE(called);
  EXPECT_EQ(head.error().http_status, 409);
  EXPECT_EQ(head.error().errors.at(0).code, "files.symlink");
}

TEST(ApiClientFilesTest, ASinkThatStopsEndsTheDownload) {
  FakeApiServer server;
  server.on("GET", "/v1/jobs/j-1a2b3c4d/files/content",
            CannedReply{200, std::string(1 << 20, 'y'), "application/octet-stream"});
  auto client = clientFor(server.url());
  auto head = client->downloadFile("j-1a2b3c4d", {"output", std::nullopt, "big"}, 0, "",
                                   [](const DownloadHead&, std::string_view) { return false; });
  ASSERT_FALSE(head);
  EXPECT_EQ(head.error().kind, FailureKind::kNoAnswer);
}

}  // namespace
}  // namespace tuneplane::client
