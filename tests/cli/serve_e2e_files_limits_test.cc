// The download route's limits against slow and hostile clients, through the real `serve`
// process on loopback (e2e_fixture.h): a job leaves a 64 MiB file in output/; sixteen
// clients ask for all of it and never read. serve keeps answering others, its peak RSS grows
// by far less than one copy of the file (it holds one 64 KiB chunk per download: buffering
// the answers would cost 1 GiB), and after server.request_timeout without a chunk taken it
// lets go of every stalled download — its file descriptor and its connection, so the client
// gets a cut answer. The listing's and the path's named limits are refused with 400. Bounds here
// are bounds on a hang, never timing assertions.
#include <httplib.h>
#include <sys/ioctl.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "e2e_fixture.h"
#include "support/raw_http_client.h"

namespace tuneplane::cli::testing {
namespace {

using test::RawHttpConnection;

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
    EXPECT_TRUE(test::pollUntil(
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
  EXPECT_TRUE(test::pollUntil([&] { return openFilesNamed("big.bin") == 0; }, kBound))
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

}  // namespace
}  // namespace tuneplane::cli::testing
