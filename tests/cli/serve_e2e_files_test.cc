// A job's outputs fetched end to end (e2e_fixture.h): a job run by `tuneplane-slurmsim`
// writes weights, a folder, a symbolic link to /etc/passwd and one out of output/; then
// `tuneplane cp` against the real `serve` returns the weights byte for byte (whole, from a
// kept partial file, and as a folder with -r), the job's checkpoints/ beside them, and
// refuses the links and a traversal with exit 2 — never writing what they point at; and a
// file and a folder whose names are not UTF-8 are copied byte for byte beside result.txt.
//
// And the download route's limits against slow and hostile clients, through the real `serve`
// process on loopback: a job leaves a 64 MiB file in output/; sixteen clients ask for all of
// it and never read. serve keeps answering others, its peak RSS grows by far less than one
// copy of the file (it holds one 64 KiB chunk per download: buffering the answers would cost
// 1 GiB), and after server.request_timeout without a chunk taken it lets go of every stalled
// download — its file descriptor and its connection, so the client gets a cut answer. The
// listing's and the path's named limits are refused with 400.
//
// And why a job waits, and until when: four jobs fill the simulator's CPU node; two more
// wait. `tuneplane get` and `describe` and the API say the last one waits on Priority, second
// of two pending in partition cpu, with Slurm's estimate of its start — and asking again and
// again costs at most one listing of Slurm's jobs per refresh, whatever the number of calls.
//
// Bounds here are bounds on a hang, never timing assertions. (One file for the three:
// tests/cli is compiled in unity batches of 8, and a batch that mixes e2e_fixture.h with
// cli_fixture.h does not compile; more serve_e2e_* files would move the batches' edges.)
#include <httplib.h>
#include <sys/ioctl.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "client_cli/copy_paths.h"
#include "e2e_fixture.h"
#include "support/raw_http_client.h"

namespace tuneplane::cli::testing {
namespace {

namespace fs = std::filesystem;
using pipeline::testing::readFile;
using pipeline::testing::writeFile;
using test::RawHttpConnection;

// Writes 3 MB of random weights (more than a few of the server's 64 KiB chunks), a nested
// file, a link to /etc/passwd and a link to the attempt dir.
constexpr const char* kWriteOutputs =
    "set -e; out=\"$TUNEPLANE_OUTPUT_DIR\"; mkdir -p \"$out/model/sub\"; "
    "head -c 3000000 /dev/urandom > \"$out/model/weights.bin\"; "
    "echo '{\"lr\": 0.001}' > \"$out/model/sub/config.json\"; "
    "ln -s /etc/passwd \"$out/passwd\"; ln -s .. \"$out/up\"; echo done";

class ServeE2eFilesTest : public ServeE2eTest {
 protected:
  void SetUp() override {
    ServeE2eTest::SetUp();
    id_ = submit(cpuSpec(kWriteOutputs));
    ASSERT_FALSE(id_.empty());
    const json job = waitPhase(id_, "Succeeded");
    output_ = job["attempts"][0].value("staging_dir", "") + "/output";
    local_ = scratch_ + "/local";
    fs::create_directories(local_);
  }

  std::string id_;
  std::string output_;
  std::string local_;
};

TEST_F(ServeE2eFilesTest, CpReturnsTheWeightsByteForByteWholeResumedAndAsAFolder) {
  const std::string weights = readFile(output_ + "/model/weights.bin");
  ASSERT_EQ(weights.size(), 3'000'000u);

  auto r = alice_->run({"cp", id_ + "/model/weights.bin", local_ + "/w.bin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(readFile(local_ + "/w.bin") == weights) << "not the job's bytes";
  // Into a folder, naming the attempt.
  r = alice_->run({"cp", id_ + ":1/model/weights.bin", local_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(readFile(local_ + "/weights.bin") == weights);

  // A partial file kept from an interrupted copy, with the version the server gave it: the
  // same command asks for the rest only (206), and the result is whole.
  httplib::Client http(serve_->url());
  auto probe =
      http.Get("/v1/jobs/" + id_ + "/files/content?path=model/weights.bin",
               {{"Authorization", std::string("Bearer ") + kAliceToken}, {"Range", "bytes=0-0"}});
  ASSERT_TRUE(probe && probe->status == 206);
  const std::string target = local_ + "/resumed.bin";
  writeFile(partialPath(target), weights.substr(0, 1'234'567));
  writeFile(partialPath(target) + ".etag", probe->get_header_value("ETag"));
  r = alice_->run({"cp", id_ + "/model/weights.bin", target});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(readFile(target) == weights);
  EXPECT_FALSE(fs::exists(partialPath(target)));
  bool ranged = false;
  std::istringstream access(readFile(site_->dir() + "/serve.out"));
  for (std::string line; std::getline(access, line);) {
    const json entry = json::parse(line, nullptr, false);
    if (entry.is_object() && entry.value("route", "") == "/v1/jobs/{id}/files/content" &&
        entry.value("status", 0) == 206 && entry.value("bytes", 0) == 3'000'000 - 1'234'567) {
      ranged = true;
    }
  }
  EXPECT_TRUE(ranged) << "no 206 answer of the rest in serve's access log";

  // A folder with -r: every file, the same bytes.
  r = alice_->run({"cp", "-r", id_ + "/model", local_ + "/model-copy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(readFile(local_ + "/model-copy/weights.bin") == weights);
  EXPECT_EQ(readFile(local_ + "/model-copy/sub/config.json"), "{\"lr\": 0.001}\n");
}

TEST_F(ServeE2eFilesTest, LinksAndATraversalAreRefusedAndNothingTheyPointAtIsWritten) {
  const std::string passwd = readFile("/etc/passwd");
  auto link = alice_->run({"cp", id_ + "/passwd", local_ + "/passwd"});
  EXPECT_EQ(link.exit_code, 2) << link.err;
  EXPECT_NE(link.err.find("symbolic link"), std::string::npos) << link.err;
  EXPECT_FALSE(fs::exists(local_ + "/passwd"));

  auto through = alice_->run({"cp", id_ + "/up/output/model/weights.bin", local_ + "/x"});
  EXPECT_EQ(through.exit_code, 2) << through.err;
  EXPECT_NE(through.err.find("files.symlink"), std::string::npos) << through.err;

  auto traversal = alice_->run({"cp", id_ + "/../../../../../../etc/passwd", local_ + "/t"});
  EXPECT_EQ(traversal.exit_code, 2) << traversal.err;
  EXPECT_NE(traversal.err.find("'..' is not allowed"), std::string::npos) << traversal.err;
  EXPECT_FALSE(fs::exists(local_ + "/t"));

  // The whole output with -r: the files come, the links are named and skipped (exit 2).
  auto all = alice_->run({"cp", "-r", id_, local_ + "/all"});
  EXPECT_EQ(all.exit_code, 2) << all.err;
  EXPECT_NE(all.err.find("skipped passwd: a symbolic link"), std::string::npos) << all.err;
  EXPECT_NE(all.err.find("skipped up: a symbolic link"), std::string::npos) << all.err;
  EXPECT_TRUE(readFile(local_ + "/all/model/weights.bin") ==
              readFile(output_ + "/model/weights.bin"));
  EXPECT_FALSE(fs::exists(local_ + "/all/passwd"));
  EXPECT_FALSE(fs::exists(local_ + "/all/up"));
  for (const auto& entry : fs::recursive_directory_iterator(local_)) {
    if (entry.is_regular_file()) {
      EXPECT_NE(readFile(entry.path()), passwd) << entry.path() << " holds /etc/passwd";
    }
  }

  // Another user's job is not found; an admin may copy it.
  auto bob = as(kBobToken).run({"cp", id_ + "/model/weights.bin", local_ + "/bob.bin"});
  EXPECT_EQ(bob.exit_code, 3) << bob.err;
  auto ops = as(kOpsToken).run({"cp", id_ + "/model/sub/config.json", local_ + "/ops.json"});
  EXPECT_EQ(ops.exit_code, 0) << ops.err;
}

TEST_F(ServeE2eFilesTest, TheJobsCheckpointsAreCopiedFromBesideItsAttempts) {
  // The job's checkpoint folder: <staging_root>/jobs/<id>/checkpoints, beside attempts/.
  const fs::path checkpoints =
      fs::path(output_).parent_path().parent_path().parent_path() / "checkpoints";
  fs::create_directories(checkpoints / "checkpoint-20");
  writeFile((checkpoints / "checkpoint-20" / "adapter.bin").string(), "adapter bytes");
  auto listed = alice_->run({"cp", "-r", id_ + ":checkpoints", local_ + "/ckpt"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(readFile(local_ + "/ckpt/checkpoint-20/adapter.bin"), "adapter bytes");
}

// Issue 45: names that are not UTF-8 — a file and a folder — that the listing can only show
// with U+FFFD. `cp -r` fetches each by its exact bytes (the listing's path_encoded) and writes
// it under the same bytes, so one odd name neither 404s nor stops the copy before result.txt.
constexpr const char* kWriteOddNames =
    "set -e; out=\"$TUNEPLANE_OUTPUT_DIR\"; ff=$(printf '\\377'); fe=$(printf '\\376'); "
    "printf 'odd bytes' > \"$out/bad${ff}.txt\"; mkdir \"$out/dir${fe}\"; "
    "printf 'inner' > \"$out/dir${fe}/inner.txt\"; echo 42 > \"$out/result.txt\"; echo done";

TEST_F(ServeE2eFilesTest, NamesThatAreNotUtf8AreCopiedByteForByteWithTheRest) {
  const std::string id = submit(cpuSpec(kWriteOddNames));
  ASSERT_FALSE(id.empty());
  const json job = waitPhase(id, "Succeeded");
  const std::string output = job["attempts"][0].value("staging_dir", "") + "/output";
  ASSERT_EQ(readFile(output + "/bad\xff.txt"), "odd bytes") << "the job did not write the name";

  auto r = alice_->run({"cp", "-r", id, local_ + "/odd"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(readFile(local_ + "/odd/result.txt"), "42\n");
  EXPECT_EQ(readFile(local_ + "/odd/bad\xff.txt"), "odd bytes");
  EXPECT_EQ(readFile(local_ + "/odd/dir\xfe/inner.txt"), "inner");
}

// ---- the download route's limits -----------------------------------------------------------

constexpr std::size_t kBigFileBytes = std::size_t{64} << 20;
constexpr int kStalledClients = 16;
// How much serve's peak RSS may grow while the stalled downloads are open (ASan's overhead
// allowed for, as in serve_hostile_clients_test); buffering them would take 1 GiB.
constexpr long kPeakRssGrowthLimitKiB = 128 * 1024;
constexpr auto kBound = 60s;  // on a hang

class ServeE2eFilesLimitsTest : public ServeE2eTest {
 protected:
  // A short deadline, so that the stalled downloads are dropped within the test.
  std::string serverExtra() const override { return "  request_timeout: 2s\n"; }

  long peakRssKiB() { return statusField("VmHWM:"); }
  long statusField(const std::string& name) {
    std::ifstream status("/proc/" + std::to_string(serve_->process().pid()) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with(name)) return std::stol(line.substr(name.size()));
    }
    return -1;
  }
  // serve's open descriptors of files named `name`.
  int openFilesNamed(const std::string& name) {
    int n = 0;
    const std::string dir = "/proc/" + std::to_string(serve_->process().pid()) + "/fd";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const auto target = std::filesystem::read_symlink(entry.path(), ec);
      if (!ec && target.filename() == name) ++n;
    }
    return n;
  }
  void expectServeAnswers(const std::string& when) {
    httplib::Client http(serve_->url());
    http.set_read_timeout(static_cast<time_t>(kBound.count()), 0);
    auto who = http.Get("/v1/whoami", {{"Authorization", std::string("Bearer ") + kAliceToken}});
    ASSERT_TRUE(who) << when << ": /v1/whoami did not answer";
    EXPECT_EQ(who->status, 200) << when;
  }
};

TEST_F(ServeE2eFilesLimitsTest, StalledDownloadsHoldOneChunkEachAndAreDroppedAtTheDeadline) {
  const std::string id = submit(cpuSpec("truncate -s " + std::to_string(kBigFileBytes) +
                                        " \"$TUNEPLANE_OUTPUT_DIR/big.bin\"; echo ok"));
  ASSERT_FALSE(id.empty());
  waitPhase(id, "Succeeded");
  expectServeAnswers("before the downloads");
  const long baseline = peakRssKiB();
  ASSERT_GT(baseline, 0);

  const std::string request = "GET /v1/jobs/" + id +
                              "/files/content?path=big.bin HTTP/1.1\r\nHost: t\r\n"
                              "Authorization: Bearer " +
                              kAliceToken + "\r\n\r\n";
  std::vector<std::unique_ptr<RawHttpConnection>> stalled;
  for (int i = 0; i < kStalledClients; ++i) {
    auto c = std::make_unique<RawHttpConnection>(
        std::stoi(serve_->url().substr(serve_->url().rfind(':') + 1)));
    ASSERT_TRUE(c->ok());
    ASSERT_TRUE(c->send(request));
    stalled.push_back(std::move(c));
  }
  // Every download has started (the answer's head and the first bytes are waiting unread)
  // and none is read: serve is blocked on each client's full socket.
  for (auto& c : stalled) {
    EXPECT_TRUE(test::waitUntil(
        [&] {
          int pending = 0;
          return ::ioctl(c->fd(), FIONREAD, &pending) == 0 && pending > 0;
        },
        kBound));
  }
  expectServeAnswers("with the stalled downloads open");
  const long peak = peakRssKiB();
  std::printf("serve's peak RSS: %ld KiB (before the downloads: %ld KiB)\n", peak, baseline);
  EXPECT_LT(peak - baseline, kPeakRssGrowthLimitKiB) << "growth of serve's peak RSS in KiB";

  // After request_timeout without a chunk taken, serve closes each stalled download and
  // its file.
  EXPECT_TRUE(test::waitUntil([&] { return openFilesNamed("big.bin") == 0; }, kBound))
      << "serve still holds " << openFilesNamed("big.bin") << " descriptors of big.bin";
  for (auto& c : stalled) {
    c->readUntil([](const std::string&) { return false; }, kBound);
    EXPECT_TRUE(c->closedByPeer());
    EXPECT_EQ(RawHttpConnection::firstStatus(c->received()), 200);
    EXPECT_LT(c->received().size(), kBigFileBytes) << "a stalled download was not cut";
  }
  expectServeAnswers("after the stalled downloads");
}

TEST_F(ServeE2eFilesLimitsTest, TheListingAndPathLimitsAreNamed400s) {
  const std::string id = submit(cpuSpec("echo ok"));
  waitPhase(id, "Succeeded");
  httplib::Client http(serve_->url());
  const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kAliceToken}};
  auto page = http.Get("/v1/jobs/" + id + "/files?limit=1001", auth);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 400);
  EXPECT_NE(page->body.find("must be an integer 1..1000"), std::string::npos) << page->body;
  std::string long_path;
  while (long_path.size() <= 4096) long_path += "aaaaaaaa/";
  auto path = http.Get("/v1/jobs/" + id + "/files?path=" + long_path, auth);
  ASSERT_TRUE(path);
  EXPECT_EQ(path->status, 400);
  EXPECT_NE(path->body.find("longer than 4096 bytes"), std::string::npos) << path->body;
}

// ---- why a job waits ------------------------------------------------------------------

class ServeE2eWaitingTest : public ServeE2eTest {};

// The value of `line` in serve's /metrics (0 when absent).
double metric(const std::string& url, const std::string& line) {
  return test::metricValue(url, line).value_or(0);
}

TEST_F(ServeE2eWaitingTest, AQueuedJobSaysItsReasonPlaceAndEstimateInGetDescribeAndTheApi) {
  // The simulator's cpu1 has 4 CPUs: four one-CPU jobs fill it until the test lets them end.
  std::vector<std::string> running;
  for (int i = 0; i < 4; ++i) running.push_back(submit(cpuSpec(gatedScript())));
  for (const std::string& id : running) waitAttemptRunning(id, 1);
  const std::string first = submit(cpuSpec("echo first"));
  const std::string second = submit(cpuSpec("echo second"));
  const auto queued = [&](const std::string& id) {
    return alice_->waitJob(
        id,
        [](const json& job) {
          return job.value("phase", "") == "Queued" && job["waiting"].is_object() &&
                 job["waiting"]["components"][0]["position"].is_number();
        },
        "waiting with a place", kJobLimit);
  };
  queued(first);
  const json job = queued(second);
  const json c = job["waiting"]["components"][0];
  EXPECT_EQ(c["pool"], "main");
  EXPECT_EQ(c["partition"], "cpu");
  EXPECT_EQ(c["reason"], "Priority");
  EXPECT_EQ(c["position"], 2);
  EXPECT_EQ(c["pending_in_partition"], 2);
  ASSERT_TRUE(c["estimated_start"].is_string()) << job["waiting"].dump(2);
  EXPECT_TRUE(job["waiting"]["as_of"].is_string());
  const json head = alice_->job(first)["waiting"]["components"][0];
  EXPECT_EQ(head["reason"], "Resources");
  EXPECT_EQ(head["position"], 1);

  const auto listed = alice_->run({"get"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(second + "\thello\talice\tQueued\t1\t"), std::string::npos)
      << listed.out;
  EXPECT_NE(listed.out.find("Priority: #2 of 2 in cpu, est. start "), std::string::npos)
      << listed.out;
  const auto described = alice_->run({"describe", second});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  for (const std::string part :
       {"Waiting:       attempt 1 in Slurm's queue (the queue as read ",
        "    Reason:        Priority (jobs of higher priority are ahead of it",
        "    Queue place:   #2 of 2 in cpu", ", Slurm's estimate\n"}) {
    EXPECT_NE(described.out.find(part), std::string::npos) << part << "\n" << described.out;
  }

  // Cost: twenty more reads of the waiting jobs within the refresh interval read Slurm's
  // queue at most once more.
  const std::string listings =
      "tuneplane_slurm_requests_total{operation=\"list_jobs\",outcome=\"ok\"}";
  const double before = metric(serve_->url(), listings);
  for (int i = 0; i < 10; ++i) {
    alice_->job(second);
    alice_->run({"get", "-o", "json"});
  }
  EXPECT_LE(metric(serve_->url(), listings) - before, 1.0);

  for (const std::string& id : running) openGate(alice_->job(id)["attempts"][0]);
  const json done = waitPhase(second, "Succeeded");
  EXPECT_EQ(done["waiting"], nullptr);
}

}  // namespace
}  // namespace tuneplane::cli::testing
