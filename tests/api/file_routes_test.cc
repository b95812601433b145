// GET /v1/jobs/{id}/files and /files/content through the real server on loopback: listing
// an attempt's output/ and the job's checkpoints/ with sizes, times and pages; downloads
// whole, by range (206), refused ranges (416), If-Range, HEAD; every path rule and every
// hazard a job can plant answered with its code; the owner or an admin only. Every answer is
// checked against docs/openapi.json (ApiFixture).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include "../catalog/temp_dir.h"
#include "../sim/sim_test_support.h"
#include "api/api_fixture.h"
#include "api/file_queries.h"
#include "api/listing_gate.h"
#include "common/jwt.h"
#include "support/raw_http_client.h"
#include "support/test_files.h"

namespace tuneplane::api::testing {
namespace {

namespace fs = std::filesystem;

class FileRoutesTest : public ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    id_ = submitJob();
    attempt_dir_ = root_.path() + "/jobs/" + id_ + "/attempts/1";
    fs::create_directories(attempt_dir_ + "/output");
    addRunningAttempt(id_, attempt_dir_);
  }

  std::string output(const std::string& rel = "") const {
    return attempt_dir_ + "/output" + (rel.empty() ? "" : "/" + rel);
  }
  std::string write(const std::string& rel, const std::string& content) const {
    const fs::path p = output(rel);
    fs::create_directories(p.parent_path());
    test::writeFile(p, content);
    return p.string();
  }
  std::string files(const std::string& query = "") const {
    return "/v1/jobs/" + id_ + "/files" + (query.empty() ? "" : "?" + query);
  }
  std::string content(const std::string& query) const {
    return "/v1/jobs/" + id_ + "/files/content?" + query;
  }
  httplib::Result getWith(const std::string& path, httplib::Headers headers,
                          const std::string& token = kAliceToken) {
    headers.emplace("Authorization", "Bearer " + token);
    return http_->Get(path.c_str(), headers);
  }

  tuneplane::testing::TempDir root_;
  std::string id_;
  std::string attempt_dir_;
};

TEST_F(FileRoutesTest, ListsTheLatestOutputWithSizesTimesAndTheAreas) {
  write("model/weights.bin", "0123456789");
  write("metrics.json", "{}");
  auto res = get(files());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json b = body(res);
  EXPECT_EQ(b["area"], "output");
  EXPECT_EQ(b["attempt"], 1);
  EXPECT_EQ(b["path"], "");
  EXPECT_EQ(b["continue"], "");
  ASSERT_EQ(b["items"].size(), 2u);
  json items = b["items"];  // in the directory's order
  std::sort(items.begin(), items.end(),
            [](const json& x, const json& y) { return x["name"] < y["name"]; });
  EXPECT_EQ(items[0]["name"], "metrics.json");
  EXPECT_EQ(items[0]["path_encoded"], "metrics.json");
  EXPECT_EQ(items[0]["type"], "file");
  EXPECT_EQ(items[0]["size"], 2);
  EXPECT_TRUE(items[0]["modified"].is_string());
  EXPECT_EQ(items[1]["name"], "model");
  EXPECT_EQ(items[1]["type"], "directory");
  ASSERT_EQ(b["areas"].size(), 2u);
  EXPECT_EQ(b["areas"][0], (json{{"area", "output"}, {"attempt", 1}, {"exists", true}}));
  EXPECT_EQ(b["areas"][1],
            (json{{"area", "checkpoints"}, {"attempt", nullptr}, {"exists", false}}));

  auto sub = get(files("path=model"));
  ASSERT_TRUE(sub && sub->status == 200);
  EXPECT_EQ(body(sub)["items"][0]["path"], "model/weights.bin");
  EXPECT_EQ(body(sub)["items"][0]["size"], 10);
}

TEST_F(FileRoutesTest, TheCheckpointsAreaIsListedBesideTheAttemptsWhenItExists) {
  auto missing = get(files("area=checkpoints"));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(code(missing), "files.not_found");
  const std::string checkpoints = root_.path() + "/jobs/" + id_ + "/checkpoints";
  fs::create_directories(checkpoints + "/checkpoint-200");
  test::writeFile(checkpoints + "/checkpoint-200/adapter.bin", "w");
  auto res = get(files("area=checkpoints&path=checkpoint-200"));
  ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "");
  EXPECT_EQ(body(res)["attempt"], nullptr);
  EXPECT_EQ(body(res)["items"][0]["path"], "checkpoint-200/adapter.bin");
  EXPECT_EQ(body(res)["areas"].back()["exists"], true);
  auto file = get(content("area=checkpoints&path=checkpoint-200/adapter.bin"));
  ASSERT_TRUE(file && file->status == 200);
  EXPECT_EQ(file->body, "w");
  // An attempt has no checkpoints of its own.
  auto both = get(files("area=checkpoints&attempt=1"));
  ASSERT_TRUE(both);
  EXPECT_EQ(both->status, 400);
  EXPECT_EQ(code(both), "api.invalid_parameter");
}

TEST_F(FileRoutesTest, PagesFollowTheContinueTokenAndLimitsAreNamed) {
  for (int i = 0; i < 25; ++i) write("many/f" + std::to_string(100 + i), "");
  std::vector<std::string> names;
  std::string token;
  int pages = 0;
  do {
    auto res = get(files("path=many&limit=10" + (token.empty() ? "" : "&continue=" + token)));
    ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "");
    const json b = body(res);
    EXPECT_LE(b["items"].size(), 10u);
    for (const auto& item : b["items"]) names.push_back(item["name"]);
    token = b["continue"];
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names.size(), 25u);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "a name twice";
  EXPECT_EQ(names.front(), "f100");
  EXPECT_EQ(names.back(), "f124");
  for (const char* bad :
       {"limit=0", "limit=1001", "limit=x", "continue=%%%", "attempt=0", "area=logs"}) {
    auto res = get(files(bad));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << bad;
    EXPECT_EQ(code(res), "api.invalid_parameter") << bad;
  }
}

// A continue token is checked whole before use, and never used on another folder: a forged
// or damaged one, an old name-style one, or one of another folder is a 400 naming continue.
TEST_F(FileRoutesTest, AForgedOrForeignContinueTokenIsRefused) {
  for (int i = 0; i < 5; ++i) write("one/f" + std::to_string(i), "");
  for (int i = 0; i < 5; ++i) write("two/f" + std::to_string(i), "");
  auto first = get(files("path=one&limit=2"));
  ASSERT_TRUE(first && first->status == 200) << (first ? first->body : "");
  const std::string token = body(first)["continue"];
  ASSERT_FALSE(token.empty());
  const auto b64 = [](const std::string& text) { return jwt::base64UrlEncode(text); };
  const std::string forged[] = {
      b64("f1"),                                         // a name, as tokens were before
      b64(R"({"v":1,"c":0,"d":5})"),                     // the start is no next page
      b64(R"({"v":2,"c":10,"d":5})"),                    // another version
      b64(R"({"v":1,"c":"10","d":5})"),                  // a cookie that is not a number
      b64(R"({"v":1,"c":10,"d":-5})"),                   // an inode that is not one
      b64(R"({"v":1,"c":18446744073709551615,"d":5})"),  // beyond an off_t
      b64(R"({"v":1,"c":10,"d":5,"x":1})"),              // more than a token holds
      b64(std::string(200, 'a')),                        // too long
  };
  for (const std::string& bad : forged) {
    auto res = get(files("path=one&limit=2&continue=" + bad));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << bad;
    EXPECT_EQ(code(res), "api.invalid_parameter") << bad;
    EXPECT_EQ(body(res)["errors"][0]["field"], "continue") << bad;
  }
  auto foreign = get(files("path=two&limit=2&continue=" + token));
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 400) << foreign->body;
  EXPECT_EQ(code(foreign), "api.invalid_parameter");
  EXPECT_EQ(body(foreign)["errors"][0]["field"], "continue");
  EXPECT_EQ(foreign->body.find(root_.path()), std::string::npos) << "a server path";
  auto next = get(files("path=one&limit=2&continue=" + token));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
}

// Issue 45: a name that is not UTF-8 is shown with U+FFFD in `name` and `path`, which name
// no file; `path_encoded` names it byte for byte, and the download route takes it as is.
TEST_F(FileRoutesTest, ANameThatIsNotUtf8IsListedWithAPathThatFetchesIt) {
  write("d\xfe ir/bad\xff name.txt", "odd bytes");
  auto root = get(files());
  ASSERT_TRUE(root && root->status == 200) << (root ? root->body : "");
  ASSERT_EQ(body(root)["items"].size(), 1u);
  const json dir = body(root)["items"][0];
  EXPECT_EQ(dir["name"], "d\xEF\xBF\xBD ir");  // U+FFFD, for display
  EXPECT_EQ(dir["path_encoded"], "d%FE%20ir");
  auto listed = get(files("path=" + dir["path_encoded"].get<std::string>()));
  ASSERT_TRUE(listed && listed->status == 200) << (listed ? listed->body : "");
  const json file = body(listed)["items"][0];
  EXPECT_EQ(file["path"], "d\xEF\xBF\xBD ir/bad\xEF\xBF\xBD name.txt");
  EXPECT_EQ(file["path_encoded"], "d%FE%20ir/bad%FF%20name.txt");
  auto shown = get(content("path=" + percentEncodePath(file["path"].get<std::string>())));
  ASSERT_TRUE(shown);
  EXPECT_EQ(shown->status, 404);  // the displayed form names nothing
  auto exact = get(content("path=" + file["path_encoded"].get<std::string>()));
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->status, 200) << exact->body;
  EXPECT_EQ(exact->body, "odd bytes");
  EXPECT_EQ(percentEncodePath("a/b c~-._\x01\x80"), "a/b%20c~-._%01%80");
}

TEST_F(FileRoutesTest, ADownloadIsTheFileByteForByteWithItsHeaders) {
  std::string data;
  for (int i = 0; i < 300'000; ++i) data += static_cast<char>(i * 7 % 251);  // over 4 chunks
  write("model/weights.bin", data);
  auto res = get(content("path=model/weights.bin"));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->body, data);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/octet-stream");
  EXPECT_EQ(res->get_header_value("Content-Length"), std::to_string(data.size()));
  EXPECT_EQ(res->get_header_value("Accept-Ranges"), "bytes");
  EXPECT_EQ(res->get_header_value("Content-Disposition"),
            "attachment; filename=\"weights.bin\"; filename*=UTF-8''weights.bin");
  EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_FALSE(res->get_header_value("ETag").empty());
  EXPECT_TRUE(res->get_header_value("Last-Modified").ends_with(" GMT"));
  // The access log counts the bytes streamed.
  bool logged = false;
  for (const auto& line : accessLines()) {
    const json entry = json::parse(line);
    if (entry["route"] == "/v1/jobs/{id}/files/content") {
      logged = true;
      EXPECT_EQ(entry["bytes"], data.size());
    }
  }
  EXPECT_TRUE(logged);
}

TEST_F(FileRoutesTest, OneRangeIs206AndARangeBeyondTheEndIs416) {
  write("f.bin", "0123456789");
  const auto ranged = [&](const std::string& range, httplib::Headers more = {}) {
    more.emplace("Range", range);
    return getWith(content("path=f.bin"), more);
  };
  auto middle = ranged("bytes=2-5");
  ASSERT_TRUE(middle);
  EXPECT_EQ(middle->status, 206);
  EXPECT_EQ(middle->body, "2345");
  EXPECT_EQ(middle->get_header_value("Content-Range"), "bytes 2-5/10");
  auto open_end = ranged("bytes=7-");
  ASSERT_TRUE(open_end);
  EXPECT_EQ(open_end->status, 206);
  EXPECT_EQ(open_end->body, "789");
  auto suffix = ranged("bytes=-3");
  ASSERT_TRUE(suffix);
  EXPECT_EQ(suffix->body, "789");
  auto past = ranged("bytes=5-1000");
  ASSERT_TRUE(past);
  EXPECT_EQ(past->status, 206);
  EXPECT_EQ(past->get_header_value("Content-Range"), "bytes 5-9/10");
  auto beyond = ranged("bytes=10-");
  ASSERT_TRUE(beyond);
  EXPECT_EQ(beyond->status, 416);
  EXPECT_EQ(code(beyond), "files.range_not_satisfiable");
  EXPECT_EQ(beyond->get_header_value("Content-Range"), "bytes */10");
  auto several = ranged("bytes=0-1,4-5");  // several ranges: the whole file
  ASSERT_TRUE(several);
  EXPECT_EQ(several->status, 200);
  EXPECT_EQ(several->body, "0123456789");

  // If-Range: honoured for the file's ETag, the whole file for another version.
  const std::string etag = middle->get_header_value("ETag");
  auto same = ranged("bytes=8-", {{"If-Range", etag}});
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 206);
  EXPECT_EQ(same->body, "89");
  auto changed = ranged("bytes=8-", {{"If-Range", "\"0-0-0\""}});
  ASSERT_TRUE(changed);
  EXPECT_EQ(changed->status, 200);
  EXPECT_EQ(changed->body, "0123456789");

  auto head = http_->Head(content("path=f.bin").c_str(), bearer(kAliceToken));
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->get_header_value("Content-Length"), "10");
  EXPECT_EQ(head->body, "");
}

// Issue 45, item 7: a Last-Modified date is no strong validator (RFC 9110 §8.8.2.2, §13.1.5):
// a file rewritten within the same second with the same size has the same date, so a resume
// keyed on the date would splice the new bytes onto the old. Only the ETag resumes.
TEST_F(FileRoutesTest, IfRangeWithADateGetsTheWholeFileEvenWithinTheSameSecond) {
  const std::string path = write("same-second.bin", "0123456789");
  struct timespec first[2] = {{0, UTIME_OMIT}, {1'700'000'000, 100'000'000}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), first, 0), 0);
  auto before = getWith(content("path=same-second.bin"), {});
  ASSERT_TRUE(before);
  const std::string date = before->get_header_value("Last-Modified");
  ASSERT_FALSE(date.empty());
  // Rewritten in place (the same inode: the same size, the same second, new bytes).
  {
    std::ofstream out(path, std::ios::binary | std::ios::in | std::ios::out);
    out << "abcdefghij";
  }
  struct timespec second[2] = {{0, UTIME_OMIT}, {1'700'000'000, 900'000'000}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), second, 0), 0);
  auto resumed =
      getWith(content("path=same-second.bin"), {{"Range", "bytes=8-"}, {"If-Range", date}});
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->get_header_value("Last-Modified"), date);  // the date cannot tell them apart
  EXPECT_EQ(resumed->status, 200);
  EXPECT_EQ(resumed->body, "abcdefghij");
  // The ETag can: the old one gets the whole new file, the new one its range.
  auto old_tag = getWith(content("path=same-second.bin"),
                         {{"Range", "bytes=8-"}, {"If-Range", before->get_header_value("ETag")}});
  ASSERT_TRUE(old_tag);
  EXPECT_EQ(old_tag->status, 200);
  auto now = getWith(content("path=same-second.bin"), {});
  auto new_tag = getWith(content("path=same-second.bin"),
                         {{"Range", "bytes=8-"}, {"If-Range", now->get_header_value("ETag")}});
  ASSERT_TRUE(new_tag);
  EXPECT_EQ(new_tag->status, 206);
  EXPECT_EQ(new_tag->body, "ij");
}

TEST_F(FileRoutesTest, EveryPathRuleIsA400NamingTheRule) {
  write("ok.txt", "x");
  const std::pair<const char*, const char*> cases[] = {
      {"path=../../../../etc/passwd", "'..' is not allowed"},
      {"path=a/../ok.txt", "'..' is not allowed"},
      {"path=%2Fetc%2Fpasswd", "no leading '/'"},
      {"path=ok.txt%00.png", "NUL"},
      {"path=a//b", "empty component"},
      {"path=./ok.txt", "'.' is not allowed"},
  };
  for (const auto& [query, rule] : cases) {
    for (const std::string& route : {files(query), content(query)}) {
      auto res = get(route);
      ASSERT_TRUE(res) << route;
      EXPECT_EQ(res->status, 400) << route;
      EXPECT_EQ(code(res), "files.invalid_path") << route;
      EXPECT_NE(res->body.find(rule), std::string::npos) << route << ": " << res->body;
    }
  }
  auto no_path = get(content("path="));
  ASSERT_TRUE(no_path);
  EXPECT_EQ(no_path->status, 400);
  EXPECT_EQ(code(no_path), "api.invalid_parameter");
}

TEST_F(FileRoutesTest, LinksSpecialFilesAndFoldersAreRefusedWith409) {
  write("real/secret.txt", "secret");
  const std::string elsewhere = root_.path() + "/site-secret.key";
  test::writeFile(elsewhere, "KEY");
  ASSERT_EQ(::symlink(elsewhere.c_str(), output("key").c_str()), 0);
  ASSERT_EQ(::symlink("real", output("alias").c_str()), 0);
  ASSERT_EQ(::link(elsewhere.c_str(), output("hard").c_str()), 0);
  ASSERT_EQ(::mkfifo(output("pipe").c_str(), 0600), 0);
  const std::pair<const char*, const char*> cases[] = {
      {"path=key", "files.symlink"},       {"path=alias/secret.txt", "files.symlink"},
      {"path=hard", "files.hard_link"},    {"path=pipe", "files.not_regular_file"},
      {"path=real", "files.is_directory"}, {"path=real/secret.txt/x", "files.not_a_directory"},
  };
  for (const auto& [query, expected] : cases) {
    auto res = get(content(query));
    ASSERT_TRUE(res) << query;
    EXPECT_EQ(res->status, 409) << query;
    EXPECT_EQ(code(res), expected) << query;
    EXPECT_EQ(res->body.find("KEY"), std::string::npos);
    EXPECT_EQ(res->body.find(root_.path()), std::string::npos) << "a server path: " << res->body;
  }
  auto listed = get(files("path=alias"));
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 409);
  EXPECT_EQ(code(listed), "files.symlink");
  auto missing = get(content("path=nope"));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(code(missing), "files.not_found");
}

TEST_F(FileRoutesTest, OnlyTheOwnerOrAnAdminSeesTheFiles) {
  write("f", "mine");
  auto bob = get(content("path=f"), kBobToken);
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->status, 404);
  EXPECT_EQ(code(bob), "api.not_found");
  auto bob_list = get(files(), kBobToken);
  ASSERT_TRUE(bob_list);
  EXPECT_EQ(bob_list->status, 404);
  auto root = get(content("path=f"), kRootToken);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 200);
  EXPECT_EQ(root->body, "mine");
  auto anonymous = get(content("path=f"), "");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
}

TEST_F(FileRoutesTest, AnAttemptIsChosenByNumberAndAJobWithoutOneHasNoFiles) {
  auto none = get(files("attempt=2"));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
  EXPECT_EQ(code(none), "api.not_found");
  const std::string other = submitJob(kAliceToken, "fresh");
  auto fresh = get("/v1/jobs/" + other + "/files");
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->status, 404);
  EXPECT_NE(fresh->body.find("no attempt yet"), std::string::npos);
}

// ---- listings in flight (issue 45) ---------------------------------------------------------

using namespace std::chrono_literals;

constexpr auto kListingHangLimit = 20s;  // a bound on a hang, never a timing assertion
constexpr int kListingsInFlight = 16;

// Every listing waits in hold() until release(); counts those waiting.
class HeldListings {
 public:
  Result<attempt::ListPage> hold() {
    std::unique_lock<std::mutex> lock(mu_);
    ++inside_;
    changed_.wait(lock, [this] { return released_; });
    --inside_;
    return attempt::ListPage{};
  }
  int inside() {
    std::lock_guard<std::mutex> lock(mu_);
    return inside_;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int inside_ = 0;
  bool released_ = false;
};

// Listings held inside the lister (ApiDependencies::list_files) until the test lets them go:
// no big folder, no timing.
class FileListingsInFlightTest : public FileRoutesTest {
 protected:
  void tune(ApiDependencies& deps, HttpServerOptions& options) override {
    options.threads = 4;
    deps.list_files = [this](const auto&...) { return held_.hold(); };
  }
  void TearDown() override {
    held_.release();  // whatever failed: the workers are let go before the server stops
    FileRoutesTest::TearDown();
  }

  HeldListings held_;
};

// Sixteen listings in flight, each on its own connection, leave the workers an unrelated
// GET /v1/jobs/{id} needs: at most listingCapacity(threads) run, the rest are refused at once
// with 503 and Retry-After (files.busy), and the held ones finish once let go.
TEST_F(FileListingsInFlightTest, CannotTakeEveryWorkerAndTheExcessIsA503WithRetryAfter) {
  const std::string listing = "GET " + files() + " HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " +
                              kAliceToken + "\r\n\r\n";
  std::vector<std::unique_ptr<test::RawHttpConnection>> listings;
  for (int i = 0; i < kListingsInFlight; ++i) {
    listings.push_back(std::make_unique<test::RawHttpConnection>(server_->port()));
    ASSERT_TRUE(listings.back()->ok());
    ASSERT_TRUE(listings.back()->send(listing));
  }
  const auto answered = [&] {
    int n = 0;
    for (auto& c : listings) {
      c->readUntil(
          [](const std::string& text) { return test::RawHttpConnection::countAnswers(text) > 0; },
          10ms);  // what has arrived (a shorter bound would not wait at all)
      n += test::RawHttpConnection::countAnswers(c->received()) > 0 ? 1 : 0;
    }
    return n;
  };
  // Every listing is held in the lister or answered.
  EXPECT_TRUE(tuneplane::test::waitUntil(
      [&] { return held_.inside() > 0 && held_.inside() + answered() == kListingsInFlight; },
      kListingHangLimit))
      << held_.inside() << " listings held, " << answered()
      << " answered: the rest are waiting for a worker";

  // An unrelated request is served while they are in flight.
  auto client = checkedClient(server_->port());
  client->set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(kListingHangLimit));
  auto job = client->Get("/v1/jobs/" + id_, bearer(kAliceToken));
  ASSERT_TRUE(job) << "GET /v1/jobs/{id} was not answered while listings were in flight";
  EXPECT_EQ(job->status, 200);

  EXPECT_EQ(held_.inside(), listingCapacity(4));
  for (auto& c : listings) {
    if (test::RawHttpConnection::countAnswers(c->received()) == 0) continue;  // held
    EXPECT_EQ(test::RawHttpConnection::firstStatus(c->received()), 503) << c->received();
    EXPECT_NE(c->received().find("\r\nRetry-After: 1\r\n"), std::string::npos) << c->received();
    EXPECT_NE(c->received().find("files.busy"), std::string::npos) << c->received();
  }
  held_.release();
  for (auto& c : listings) {
    EXPECT_EQ(c->readAnswers(1, kListingHangLimit), 1);
  }
  EXPECT_EQ(get(files())->status, 200);  // the slots are given back
}

}  // namespace
}  // namespace tuneplane::api::testing
