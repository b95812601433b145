// The API against hostile and careless clients (issue 16), through the real server on
// loopback: the issue's YAML alias specs are 422s naming the field, with nothing stored or
// staged; requests with random 2 KB methods and random paths add no series to /metrics; a
// log the job replaced by a symlink or a FIFO is a 409 whose message names the log file,
// never the server's path.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <sstream>
#include <vector>

#include "api_fixture.h"
#include "prometheus_text.h"

namespace tuneplane::api::testing {
namespace {

namespace fs = std::filesystem;

class HostileInputTest : public ApiFixture {
 protected:
  // The API's default body limit, so the issue's specs reach the parser.
  void tune(ApiDependencies&, HttpServerOptions& options) override {
    options.max_body_bytes = 1024 * 1024;
  }
};

// Issue 16's specs: args[0] anchors a string of `bytes`, then `aliases` aliases repeat it.
std::string aliasSpec(std::size_t bytes, std::size_t aliases) {
  std::string spec = cpuSpec("echo hi", "", "bomb");
  std::string args = "    args: [&a " + std::string(bytes, 'x');
  for (std::size_t i = 0; i < aliases; ++i) args += ", *a";
  args += "]\n";
  const auto at = spec.find("  resources:");
  EXPECT_NE(at, std::string::npos) << "test bug: cpuSpec has no resources";
  return spec.insert(at, args);
}

TEST_F(HostileInputTest, TheIssuesAliasSpecsAre422NamingTheFieldAndNothingIsStaged) {
  struct Case {
    std::size_t bytes, aliases;
    const char* field;
  };
  for (const Case& c : {Case{100000, 1000, "spec.framework.args[10]"},    // 104 KB
                        Case{400000, 1000, "spec.framework.args[2]"},     // 406 KB
                        Case{100000, 250, "spec.framework.args[10]"}}) {  // 101 KB
    SCOPED_TRACE(c.field);
    const std::string spec = aliasSpec(c.bytes, c.aliases);
    for (const char* route : {"/v1/jobs", "/v1/validate"}) {
      SCOPED_TRACE(route);
      auto res = post(route, spec);
      ASSERT_TRUE(res);
      ASSERT_EQ(res->status, 422) << res->body.substr(0, 300);
      const json errors = body(res)["errors"];
      ASSERT_EQ(errors.size(), 1u) << errors.dump().substr(0, 300);
      EXPECT_EQ(errors[0]["code"], "spec.document_too_large");
      EXPECT_EQ(errors[0]["field"], c.field);
      EXPECT_LT(res->body.size(), 1000u);  // the answer quotes no value
    }
  }
  auto page = store_->listJobs({});
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->jobs.empty());
  EXPECT_TRUE(fs::is_empty(site_.stagingRoot()));
  EXPECT_EQ(wakes_.load(), 0);
}

std::string randomText(std::mt19937& random, std::size_t size, std::string_view alphabet) {
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string out;
  for (std::size_t i = 0; i < size; ++i) out += alphabet[pick(random)];
  return out;
}

// The requests /metrics has counted so far: the sum of tuneplane_http_requests_total.
double requestsCounted(const std::string& exposition) {
  std::istringstream in(exposition);
  std::string line;
  double sum = 0;
  while (std::getline(in, line)) {
    if (line.rfind("tuneplane_http_requests_total{", 0) == 0) {
      sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return sum;
}

TEST_F(HostileInputTest, RandomMethodsAndPathsAddNoSeriesToMetrics) {
  std::mt19937 random(16);        // fixed: a failure replays
  std::vector<std::string> sent;  // methods and paths, none of which may become a label
  int requests = 0;               // every request made, scrapes included
  const auto hostile = [&] {
    httplib::Request req;
    req.method = randomText(random, 2048, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
    req.path = "/" + randomText(random, 40, "abcdefghijklmnopqrstuvwxyz0123456789-_") + "/" +
               randomText(random, 8, "abcdefghijklmnopqrstuvwxyz");
    sent.push_back(req.method.substr(0, 32));
    sent.push_back(req.path);
    ++requests;
    http_->send(req);  // whatever the server answers, or if it drops the connection
  };
  // A known method on an unknown path: the route is "unmatched", never the path.
  const auto unknownPath = [&] {
    sent.push_back("/" + randomText(random, 30, "abcdefghijklmnopqrstuvwxyz"));
    ++requests;
    get(sent.back(), "");
  };
  // A scrape that counts every request made before it. The access logger counts a request
  // after its answer is written, so the client may be ahead of it: scrape again until it has
  // caught up (bounded: 2,000 scrapes).
  const auto scrape = [&] {
    std::string text;
    for (int i = 0; i < 2000; ++i) {
      const int before = requests++;
      auto res = get("/metrics", "");
      if (!res || res->status != 200) break;
      text = res->body;
      if (requestsCounted(text) >= before) break;
    }
    return text;
  };
  hostile();
  unknownPath();
  get("/metrics", "");  // the scrapes' own series
  ++requests;
  const std::string before = scrape();
  for (int i = 0; i < 32; ++i) hostile();
  for (int i = 0; i < 8; ++i) unknownPath();
  const std::string after = scrape();
  EXPECT_EQ(requestsCounted(after), requests - 1);  // all of them, the last scrape aside
  EXPECT_EQ(seriesCount(after), seriesCount(before)) << after;
  // Every method label is a known method or "other"; no path became a label.
  for (std::size_t at = after.find("method=\""); at != std::string::npos;
       at = after.find("method=\"", at + 1)) {
    const std::string value = after.substr(at + 8, after.find('"', at + 8) - at - 8);
    EXPECT_TRUE(value == "GET" || value == "other") << value;
  }
  for (const std::string& value : sent) EXPECT_EQ(after.find(value), std::string::npos) << value;
  EXPECT_NE(after.find("method=\"other\""), std::string::npos) << after;
}

class LogRefusalTest : public ApiFixture {
 protected:
  // A job with one attempt whose directory is real, as staging leaves it: logs/ inside.
  std::string withRealAttempt() {
    const std::string id = submitJob();
    attempt_dir_ = site_.stagingRoot() + "/jobs/" + id + "/attempts/1";
    fs::create_directories(attempt_dir_ + "/logs");
    addRunningAttempt(id, attempt_dir_);
    return id;
  }
  std::string attempt_dir_;
};

TEST_F(LogRefusalTest, ALogReplacedByASymlinkOrAFifoIs409WithoutTheServersPath) {
  const std::string id = withRealAttempt();
  const std::string secret = site_.stagingRoot() + "/secret";
  { std::ofstream(secret) << "SECRET\n"; }
  ASSERT_EQ(::symlink(secret.c_str(), (attempt_dir_ + "/logs/main.out").c_str()), 0);
  ASSERT_EQ(::mkfifo((attempt_dir_ + "/logs/main.err").c_str(), 0600), 0);
  struct Case {
    const char* query;
    const char* code;
    const char* file;
  };
  for (const Case& c : {Case{"", "logs.symlink", "logs/main.out"},
                        Case{"?stream=stderr", "logs.not_regular_file", "logs/main.err"}}) {
    SCOPED_TRACE(c.code);
    auto res = get("/v1/jobs/" + id + "/logs" + c.query);
    ASSERT_TRUE(res);
    // 409: the log's current state (the job replaced it) conflicts with reading it; the
    // request and the caller's credentials are fine, so neither 4xx of those fits.
    EXPECT_EQ(res->status, 409) << res->body;
    EXPECT_EQ(code(res), c.code);
    const std::string message = body(res)["errors"][0]["message"];
    EXPECT_NE(message.find(c.file), std::string::npos) << message;
    EXPECT_EQ(res->body.find(site_.stagingRoot()), std::string::npos) << res->body;
    EXPECT_EQ(res->body.find("SECRET"), std::string::npos) << res->body;
  }
  // The same attempt's logs/ replaced by a symlink: refused the same way.
  fs::remove_all(attempt_dir_ + "/logs");
  ASSERT_EQ(::symlink(site_.stagingRoot().c_str(), (attempt_dir_ + "/logs").c_str()), 0);
  auto res = get("/v1/jobs/" + id + "/logs");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409) << res->body;
  EXPECT_EQ(res->body.find(site_.stagingRoot()), std::string::npos) << res->body;
}

TEST_F(LogRefusalTest, AMissingLogsReasonHoldsNoServerPath) {
  const std::string id = withRealAttempt();
  fs::remove_all(attempt_dir_);
  auto res = get("/v1/jobs/" + id + "/logs");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const std::string reason = body(res)["missing_reason"];
  EXPECT_NE(reason.find("does not exist"), std::string::npos) << reason;
  EXPECT_EQ(res->body.find(site_.stagingRoot()), std::string::npos) << res->body;
}

}  // namespace
}  // namespace tuneplane::api::testing
