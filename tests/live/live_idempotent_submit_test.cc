// Live (issue 48): a `tuneplane submit` whose answer is lost between the CLI and serve, on a
// real Slurm. The fault proxy relays the POST to serve, which stores the job, then cuts the
// connection before the answer reaches the CLI; the CLI asks again under the same
// Idempotency-Key and gets the first job back. One TunePlane job, one attempt, and the job's
// own output on the node shows that it ran once. Skipped unless TUNEPLANE_LIVE_* is set.
#include "live_serve_fixture.h"
#include "support/fault_proxy.h"
#include "support/wait.h"

namespace tuneplane::live {
namespace {

TEST_F(LiveServe, ASubmitWhoseAnswerIsLostIsAskedAgainUnderItsKeyAndRunsOnce) {
  std::string error;
  auto proxy =
      test::FaultProxy::start({.upstream = test::ProxyUpstream::tcp(serve_->port())}, error);
  ASSERT_NE(proxy, nullptr) << error;
  const test::CliRunner through("http://" + proxy->address(), kToken, dir_);
  proxy->freezeAfter("POST /v1/jobs", "", kLiveLimit);
  writeFile(dir_ + "/once.yaml", cpuJobSpec("live-once", "echo ran-once"),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto submit = through.start(
      {"submit", "-f", dir_ + "/once.yaml", "--idempotency-key", "live-key-0001"}, "submit");
  ASSERT_NE(submit, nullptr);
  // serve has stored the job; its answer waits in the proxy, and is cut.
  ASSERT_TRUE(test::waitUntil(
      [&] {
        const json listed = cli_->jobs();
        return listed.is_object() && listed["items"].size() == 1;
      },
      kLiveLimit))
      << submit->err() << serve_->process().err();
  EXPECT_TRUE(proxy->struck());
  EXPECT_GE(proxy->cut(/*reset=*/true), 1);
  EXPECT_EQ(submit->waitExit(kLiveLimit), 0) << submit->out() << submit->err();
  EXPECT_NE(submit->err().find("asking again under idempotency key live-key-0001"),
            std::string::npos)
      << submit->err();

  const json listed = cli_->jobs();
  ASSERT_EQ(listed["items"].size(), 1u) << listed.dump(2);
  id_ = listed["items"][0].value("id", "");
  EXPECT_TRUE(submit->out().starts_with(id_ + " submitted (")) << submit->out();
  ASSERT_TRUE(test::waitUntil(
      [&] {
        const json job = cli_->job(id_);
        return job.is_object() && job.value("phase", "") == "Succeeded";
      },
      kLiveLimit, std::chrono::seconds(1)))
      << cli_->job(id_).dump(2) << serve_->process().err();
  const json job = cli_->job(id_);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["components"][0]["state"], json::array({"COMPLETED"}));
  // What the job itself wrote on the node: it ran once.
  const auto logs = cli_->run({"logs", id_});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "ran-once\n");
  EXPECT_EQ(cli_->jobs()["items"].size(), 1u) << "a second TunePlane job was made";
}

}  // namespace
}  // namespace tuneplane::live
