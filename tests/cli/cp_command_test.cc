// `tuneplane cp`: the source syntax and the local names from tables (copy_paths.h), and the
// command run in-process from real command lines against a fake /v1 server: a file into a
// file or a folder, through a partial file renamed into place; a resume from a kept partial
// file (Range + If-Range) and a restart when the version changed; a folder with -r (and
// without: refused), skipping what the server refuses; Ctrl-C keeping the partial file; and
// the exit code of each failure. (End to end, with the real server: serve_e2e_files_test.)
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/run_app.h"
#include "client_cli/copy_paths.h"
#include "client_cli/exit_codes.h"
#include "client_cli/server_commands.h"
#include "support/fake_api_server.h"
#include "support/fake_sleeper.h"
#include "support/test_files.h"

namespace tuneplane::cli {
namespace {

namespace fs = std::filesystem;
using tuneplane::testing::CannedReply;
using tuneplane::testing::FakeApiServer;
using tuneplane::testing::FakeSleeper;
using Json = nlohmann::ordered_json;

constexpr const char* kCpToken = "tp-cp-sentinel-token-4b2a";
constexpr const char* kCpJob = "train-1a2b3c4d";
const std::string kCpContent = std::string("/v1/jobs/") + kCpJob + "/files/content";
const std::string kCpFiles = std::string("/v1/jobs/") + kCpJob + "/files";

// ---- pure parts ----------------------------------------------------------------------------

TEST(CopyPathsTest, SourcesNameTheJobTheAreaTheAttemptAndThePath) {
  struct Case {
    const char* text;
    std::string job, area;
    std::optional<int> attempt;
    std::string path;
  };
  const Case cases[] = {
      {"train-1a2b3c4d/model/w.bin", kCpJob, "output", std::nullopt, "model/w.bin"},
      {"train-1a2b3c4d:2/model/", kCpJob, "output", 2, "model"},
      {"train-1a2b3c4d:checkpoints/checkpoint-100", kCpJob, "checkpoints", std::nullopt,
       "checkpoint-100"},
      {"train-1a2b3c4d", kCpJob, "output", std::nullopt, ""},
      {"train-1a2b3c4d:3", kCpJob, "output", 3, ""},
  };
  for (const Case& c : cases) {
    auto source = parseCopySource(c.text);
    ASSERT_TRUE(source) << c.text << ": " << source.error().describe();
    EXPECT_EQ(source->job, c.job) << c.text;
    EXPECT_EQ(source->where.area, c.area) << c.text;
    EXPECT_EQ(source->where.attempt, c.attempt) << c.text;
    EXPECT_EQ(source->where.path, c.path) << c.text;
  }
  for (const char* bad :
       {"", "/model", ":2/x", "Train-1/x", "train-1:0/x", "train-1:two/x", "train-1:/x", "../x"}) {
    auto source = parseCopySource(bad);
    ASSERT_FALSE(source) << bad;
    EXPECT_EQ(source.error().code, "cli.invalid_source") << bad;
  }
}

TEST(CopyPathsTest, LocalNamesFollowCpAndListedNamesMustBeSafe) {
  EXPECT_EQ(localTarget("out", false, "w.bin"), "out");
  EXPECT_EQ(localTarget("out", true, "w.bin"), "out/w.bin");
  EXPECT_EQ(localTarget("out/", true, "w.bin"), "out/w.bin");
  EXPECT_EQ(localTarget("/", true, "w.bin"), "/w.bin");
  EXPECT_EQ(localTarget("out", true, ""), "out");  // an area's root: into the folder
  for (const std::string& bad : {std::string(), std::string("."), std::string(".."),
                                 std::string("a/b"), std::string("a\0b", 3)}) {
    EXPECT_FALSE(isSafeEntryName(bad)) << bad;
  }
  EXPECT_TRUE(isSafeEntryName("..hidden"));
  const std::string part = partialPath("dir/" + std::string(250, 'n'));
  EXPECT_TRUE(part.starts_with("dir/.tuneplane-part-"));
  EXPECT_LE(part.size() - 4, 255u);
  EXPECT_EQ(partialPath("a/x"), partialPath("a/x"));
  EXPECT_NE(partialPath("a/x"), partialPath("a/y"));
}

// ---- the command -----------------------------------------------------------------------------

struct CpOutcome {
  int code = -1;
  std::string out;
  std::string err;
};

class CpCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-cli-cp-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    env_.home = dir_;
    env_.server = server_.url();
    env_.token = kCpToken;
  }
  void TearDown() override {
    EXPECT_EQ(everything_.find(kCpToken), std::string::npos) << everything_;
    fs::remove_all(dir_);
  }

  CpOutcome run(std::vector<std::string> args, const std::string& verb = "cp") {
    std::ostringstream out, err;
    std::istringstream in;
    CommandIo io{
        out,
        err,
        in,
        false,
        clock_,
        sleeper_,
        env_,
        client::ClientTimeouts{std::chrono::milliseconds(2000), std::chrono::milliseconds(1500)}};
    CLI::App app{"tuneplane", "tuneplane"};
    app.require_subcommand(1);
    addServerCommands(app, [&io]() -> CommandIo& { return io; });
    args.insert(args.begin(), verb);
    CpOutcome result;
    result.code = runApp(app, std::move(args), out, err);
    result.out = out.str();
    result.err = err.str();
    everything_ += result.out + result.err;
    return result;
  }

  void file(const std::string& body, const std::string& etag = "\"v1\"") {
    server_.on("GET", kCpContent,
               CannedReply{200, body, "application/octet-stream", false, {{"ETag", etag}}});
  }
  static std::string refusal(const std::string& code, const std::string& message) {
    return Json{{"errors", {{{"code", code}, {"field", "path"}, {"message", message}}}}}.dump();
  }
  static std::string listing(Json items, const std::string& next = "", int attempt = 1) {
    return Json{{"area", "output"}, {"attempt", attempt}, {"path", ""},
                {"items", items},   {"continue", next},   {"areas", Json::array()}}
        .dump();
  }
  static Json entry(const std::string& name, const std::string& type, int size = 0) {
    return {{"name", name}, {"path", name}, {"type", type}, {"size", size}, {"modified", nullptr}};
  }
  // An entry as the server lists it now: `shown` for display, `encoded` byte for byte.
  static Json exactEntry(const std::string& shown, const std::string& encoded,
                         const std::string& type) {
    Json e = entry(shown, type);
    e["path_encoded"] = encoded;
    return e;
  }
  std::vector<std::string> leftovers(const std::string& dir) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename();
      if (name.starts_with(".tuneplane-part-")) out.push_back(name);
    }
    return out;
  }

  FakeApiServer server_;
  FakeClock clock_;
  FakeSleeper sleeper_{clock_};
  client::ClientEnvironment env_;
  std::string dir_;
  std::string everything_;
};

TEST_F(CpCommandTest, AFileIsCopiedIntoAFileOrIntoAFolderAndNothingIsLeftBehind) {
  file("weights");
  auto r = run({std::string(kCpJob) + "/model/w.bin", dir_ + "/w.bin"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(test::readFile(dir_ + "/w.bin"), "weights");
  EXPECT_NE(r.err.find("copied 1 file (7 B) to " + dir_ + "/w.bin"), std::string::npos) << r.err;
  fs::create_directories(dir_ + "/into");
  r = run({std::string(kCpJob) + ":2/model/w.bin", dir_ + "/into"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(test::readFile(dir_ + "/into/w.bin"), "weights");
  EXPECT_TRUE(leftovers(dir_).empty());
  const auto sent = server_.requests("GET", kCpContent);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].param("path"), "model/w.bin");
  EXPECT_EQ(sent[0].params.count("attempt"), 0u);
  EXPECT_EQ(sent[1].param("attempt"), "2");
  EXPECT_EQ(sent[1].header("Range"), "");
}

TEST_F(CpCommandTest, AKeptPartialFileIsResumedForTheSameVersion) {
  const std::string target = dir_ + "/w.bin";
  const std::string part = partialPath(target);
  test::writeFile(part, "0123");
  test::writeFile(part + ".etag", "\"v1\"");
  server_.on("GET", kCpContent,
             CannedReply{206,
                         "456789",
                         "application/octet-stream",
                         false,
                         {{"ETag", "\"v1\""}, {"Content-Range", "bytes 4-9/10"}}});
  auto r = run({std::string(kCpJob) + "/w.bin", target});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(test::readFile(target), "0123456789");
  const auto sent = server_.requests("GET", kCpContent);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].header("Range"), "bytes=4-");
  EXPECT_EQ(sent[0].header("If-Range"), "\"v1\"");
  EXPECT_FALSE(fs::exists(part));
  EXPECT_FALSE(fs::exists(part + ".etag"));
}

TEST_F(CpCommandTest, APartialFileOfAnotherVersionIsStartedOver) {
  const std::string target = dir_ + "/w.bin";
  const std::string part = partialPath(target);
  test::writeFile(part, "OLDOLDOLDOLD-longer-than-the-new-file");
  test::writeFile(part + ".etag", "\"v0\"");
  file("new", "\"v2\"");  // the server answers the whole file: If-Range did not match
  auto r = run({std::string(kCpJob) + "/w.bin", target});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(test::readFile(target), "new");
}

TEST_F(CpCommandTest, CtrlCKeepsThePartialFileAndTheTargetUntouched) {
  file(std::string(100'000, 'z'));
  test::writeFile(dir_ + "/w.bin", "previous");
  sleeper_.interruptAt(1);
  auto r = run({std::string(kCpJob) + "/w.bin", dir_ + "/w.bin"});
  EXPECT_EQ(r.code, kExitInterrupted) << r.err;
  EXPECT_NE(r.err.find("run the same command again to resume"), std::string::npos) << r.err;
  EXPECT_EQ(test::readFile(dir_ + "/w.bin"), "previous");
  const std::string part = partialPath(dir_ + "/w.bin");
  EXPECT_TRUE(fs::exists(part));
  EXPECT_EQ(test::readFile(part + ".etag"), "\"v1\"");
}

TEST_F(CpCommandTest, AFolderNeedsRAndIsCopiedEntryByEntrySkippingWhatIsRefused) {
  server_.on("GET", kCpContent,
             CannedReply{409, refusal("files.is_directory", "output/model is a directory")});
  auto refused = run({std::string(kCpJob) + "/model", dir_ + "/model"});
  EXPECT_EQ(refused.code, kExitInvalid);
  EXPECT_NE(refused.err.find("add -r"), std::string::npos) << refused.err;
  auto root = run({std::string(kCpJob), dir_ + "/all"});
  EXPECT_EQ(root.code, kExitInvalid);

  server_.clear("GET", kCpContent);
  server_.on("GET", kCpFiles, 200,
             listing(Json::array({entry("a.txt", "file", 1), entry("link", "symlink"),
                                  entry("sub", "directory"), entry("../evil", "file")}),
                     "", 3));
  server_.on("GET", kCpFiles, 200, listing(Json::array({entry("b.txt", "file", 1)}), "", 3));
  file("A");
  file("B");
  auto r = run({"-r", std::string(kCpJob), dir_ + "/all"});
  EXPECT_EQ(r.code, kExitInvalid) << r.err;  // two entries were skipped
  EXPECT_EQ(test::readFile(dir_ + "/all/a.txt"), "A");
  EXPECT_EQ(test::readFile(dir_ + "/all/sub/b.txt"), "B");
  EXPECT_FALSE(fs::exists(dir_ + "/evil"));
  EXPECT_NE(r.err.find("skipped link: a symbolic link"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped ../evil"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 entries were not copied"), std::string::npos) << r.err;
  // The attempt the first listing chose is the one every later request names.
  const auto listed = server_.requests("GET", kCpFiles);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].param("attempt"), "3");
  EXPECT_EQ(listed[1].param("path"), "sub");
  for (const auto& sent : server_.requests("GET", kCpContent)) {
    if (sent.param("path") != "model") {
      EXPECT_EQ(sent.param("attempt"), "3") << sent.param("path");
    }
  }
}

// Issue 45: a folder's copy fetches each entry by the exact bytes of its path_encoded and
// writes it under them (a name that is not UTF-8 included); an entry whose copy fails is
// named and the rest copied; the exit code is then the first failure's (3: gone). A listing
// the server is too busy for (503 files.busy) is asked again after a pause.
TEST_F(CpCommandTest, AFolderCopyFetchesExactNamesAndGoesOnPastAFailedEntry) {
  server_.on("GET", kCpFiles,
             CannedReply{503,
                         refusal("files.busy", "2 listings are under way"),
                         "application/json",
                         false,
                         {{"Retry-After", "1"}}});
  server_.on("GET", kCpFiles, 200,
             listing(Json::array({exactEntry("bad\xEF\xBF\xBD.txt", "bad%FF.txt", "file"),
                                  exactEntry("gone.txt", "gone.txt", "file"),
                                  exactEntry("d\xEF\xBF\xBD", "d%FE", "directory"),
                                  exactEntry("evil", "..%2F..%2Fevil", "file"),  // not here
                                  exactEntry("result.txt", "result.txt", "file")})));
  server_.on("GET", kCpFiles, 200, listing(Json::array({exactEntry("in", "d%FE/in", "file")})));
  file("odd bytes");
  server_.on("GET", kCpContent,
             CannedReply{404, refusal("files.not_found", "output/gone.txt does not exist")});
  file("42");
  file("inner");
  auto r = run({"-r", std::string(kCpJob), dir_ + "/all"});
  EXPECT_EQ(r.code, kExitNotFound) << r.err;  // the first failure's code
  EXPECT_EQ(test::readFile(dir_ + "/all/bad\xff.txt"), "odd bytes");
  EXPECT_EQ(test::readFile(dir_ + "/all/result.txt"), "42");
  EXPECT_EQ(test::readFile(dir_ + "/all/d\xfe/in"), "inner");
  EXPECT_FALSE(fs::exists(dir_ + "/all/gone.txt"));
  EXPECT_FALSE(fs::exists(dir_ + "/evil"));
  EXPECT_TRUE(leftovers(dir_ + "/all").empty());
  EXPECT_NE(r.err.find("not copied gone.txt: output/gone.txt does not exist"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("skipped evil: the listing's path_encoded is not in this folder"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("2 entries were not copied"), std::string::npos) << r.err;
  // Each request named the exact bytes.
  const auto fetched = server_.requests("GET", kCpContent);
  ASSERT_EQ(fetched.size(), 4u);
  EXPECT_EQ(fetched[0].param("path"), "bad\xff.txt");
  EXPECT_EQ(fetched[2].param("path"), "result.txt");
  EXPECT_EQ(fetched[3].param("path"), "d\xfe/in");
  const auto listed = server_.requests("GET", kCpFiles);
  ASSERT_EQ(listed.size(), 3u);  // the busy one asked again, then the sub-folder
  EXPECT_EQ(listed[2].param("path"), "d\xfe");
  EXPECT_EQ(std::count(sleeper_.sleeps().begin(), sleeper_.sleeps().end(),
                       std::chrono::milliseconds(1000)),
            1);
}

// ls asks a busy listing again as cp does (busy_listing.h), and Ctrl-C during the pause ends
// it with 130 and a note, not with the server's 503.
TEST_F(CpCommandTest, LsAsksABusyListingAgainAndCtrlCEndsTheWait) {
  const CannedReply busy{503,
                         refusal("files.busy", "2 listings are under way"),
                         "application/json",
                         false,
                         {{"Retry-After", "1"}}};
  server_.on("GET", kCpFiles, busy);
  server_.on("GET", kCpFiles, busy);
  server_.on("GET", kCpFiles, 200, listing(Json::array({entry("result.txt", "file", 2)})));
  auto r = run({std::string(kCpJob)}, "ls");
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("result.txt"), std::string::npos) << r.out;
  EXPECT_EQ(server_.requests("GET", kCpFiles).size(), 3u);
  EXPECT_EQ(std::count(sleeper_.sleeps().begin(), sleeper_.sleeps().end(),
                       std::chrono::milliseconds(1000)),
            2);

  server_.clear("GET", kCpFiles);
  server_.on("GET", kCpFiles, busy);
  sleeper_.interruptAt(3);  // the first pause of this run
  auto interrupted = run({std::string(kCpJob)}, "ls");
  EXPECT_EQ(interrupted.code, kExitInterrupted) << interrupted.err;
  EXPECT_NE(interrupted.err.find("interrupted while the server was busy"), std::string::npos)
      << interrupted.err;
}

TEST_F(CpCommandTest, ALocalWriteThatFailsWithinAFolderIsNamedAndTheRestCopied) {
  server_.on("GET", kCpFiles, 200,
             listing(Json::array({entry("blocked", "file"), entry("ok.txt", "file")})));
  file("B");  // "blocked" never asks: its partial file cannot be made
  // The partial file's name for "blocked" is taken by a folder: its copy cannot be written.
  fs::create_directories(partialPath(dir_ + "/all/blocked"));
  auto r = run({"-o", "json", "-r", std::string(kCpJob), dir_ + "/all"});
  EXPECT_EQ(r.code, kExitFailure) << r.err;
  EXPECT_EQ(test::readFile(dir_ + "/all/ok.txt"), "B");
  const Json doc = Json::parse(r.out.substr(0, r.out.find("\n}\n") + 2));
  ASSERT_EQ(doc["files"].size(), 1u);
  ASSERT_EQ(doc["skipped"].size(), 1u);
  EXPECT_EQ(doc["skipped"][0]["path"], "blocked");
  EXPECT_NE(doc["skipped"][0]["reason"].get<std::string>().find("cannot create"),
            std::string::npos);
}

TEST_F(CpCommandTest, RefusalsAndMissingFilesEarnTheirExitCodes) {
  server_.on("GET", kCpContent,
             CannedReply{409, refusal("files.symlink", "output/key is a symbolic link")});
  auto link = run({std::string(kCpJob) + "/key", dir_ + "/key"});
  EXPECT_EQ(link.code, kExitInvalid);
  EXPECT_NE(link.err.find("symbolic link"), std::string::npos) << link.err;
  EXPECT_FALSE(fs::exists(dir_ + "/key"));
  EXPECT_TRUE(leftovers(dir_).empty());
  server_.clear("GET", kCpContent);
  auto missing = run({std::string(kCpJob) + "/nope", dir_ + "/nope"});
  EXPECT_EQ(missing.code, kExitNotFound);
  auto bad = run({"Not A Job/x", dir_ + "/x"});
  EXPECT_EQ(bad.code, kExitInvalid);
  EXPECT_NE(bad.err.find("cli.invalid_source"), std::string::npos) << bad.err;
  auto no_folder = run({std::string(kCpJob) + "/x", dir_ + "/missing/"});
  EXPECT_EQ(no_folder.code, kExitInvalid);
  file("x");
  auto unwritable = run({std::string(kCpJob) + "/x", dir_ + "/no/such/dir/x"});
  EXPECT_EQ(unwritable.code, kExitFailure) << unwritable.err;
  EXPECT_NE(unwritable.err.find("cli.local_io"), std::string::npos) << unwritable.err;
}

TEST_F(CpCommandTest, JsonOutputListsWhatWasCopied) {
  file("abc");
  auto r = run({"-o", "json", std::string(kCpJob) + "/m.bin", dir_ + "/m.bin"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["destination"], dir_ + "/m.bin");
  ASSERT_EQ(doc["files"].size(), 1u);
  EXPECT_EQ(doc["files"][0]["path"], "m.bin");
  EXPECT_EQ(doc["files"][0]["bytes"], 3);
  EXPECT_TRUE(doc["skipped"].empty());
}

}  // namespace
}  // namespace tuneplane::cli
