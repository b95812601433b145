// `tuneplane submit` whose answer is lost, end to end (issue 48): the CLI talks to the real
// `tuneplane serve` (on the simulator) through the fault proxy, which relays the POST, lets
// serve create the job, and then drops the connection before the answer reaches the CLI.
// The CLI asks again under the same Idempotency-Key and gets the first job back: one job.
// The same key with another spec is refused (exit 2, 409), and re-running the command the
// CLI prints with --idempotency-key returns the same job.
#include <string>

#include "e2e_fixture.h"
#include "support/fault_proxy.h"

namespace tuneplane::cli::testing {
namespace {

using ServeE2eIdempotentSubmitTest = ServeE2eTest;

TEST_F(ServeE2eIdempotentSubmitTest, ADroppedAnswerIsRetriedUnderTheSameKeyAndMakesOneJob) {
  std::string error;
  auto proxy =
      test::FaultProxy::start({.upstream = test::ProxyUpstream::tcp(serve_->port())}, error);
  ASSERT_NE(proxy, nullptr) << error;
  const test::CliRunner through("http://" + proxy->address(), kAliceToken, site_->dir());
  // The POST is relayed, then its connection frozen: serve stores the job, and its answer
  // waits in the proxy until the test cuts the connection, so it never reaches the CLI.
  proxy->freezeAfter("POST /v1/jobs", "", kJobLimit);
  const std::string spec = site_->specFile("once.yaml", cpuSpec("echo once"));
  auto submit = through.start({"submit", spec, "--idempotency-key", "e2e-key-0001"}, "submit");
  ASSERT_NE(submit, nullptr);
  ASSERT_FALSE(waitForJobs(1).empty()) << submit->err();
  EXPECT_TRUE(proxy->struck());
  EXPECT_GE(proxy->cut(/*reset=*/true), 1);
  EXPECT_EQ(submit->waitExit(kJobLimit), 0) << submit->out() << submit->err();
  EXPECT_NE(submit->err().find("asking again under idempotency key e2e-key-0001"),
            std::string::npos)
      << submit->err();
  const json listed = alice_->jobs();
  ASSERT_TRUE(listed.is_object());
  ASSERT_EQ(listed["items"].size(), 1u) << listed.dump(2);
  const std::string id = listed["items"][0].value("id", "");
  EXPECT_TRUE(submit->out().starts_with(id + " submitted (")) << submit->out();

  // The command a lost submit tells the user to run again: the same job, no second one.
  const auto again =
      alice_->run({"submit", spec, "--idempotency-key", "e2e-key-0001", "-o", "json"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json::parse(again.out, nullptr, false).value("id", ""), id);
  // Another spec under the same key: refused, naming the rule.
  const auto other = alice_->run({"submit", site_->specFile("other.yaml", cpuSpec("echo other")),
                                  "--idempotency-key", "e2e-key-0001"});
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("[control.idempotency_key_reused]"), std::string::npos) << other.err;
  // bob's equal key is bob's own.
  const auto bobs = as(kBobToken).run({"submit", spec, "--idempotency-key", "e2e-key-0001"});
  EXPECT_EQ(bobs.exit_code, 0) << bobs.err;
  EXPECT_EQ(alice_->jobs()["items"].size(), 1u);
}

TEST_F(ServeE2eIdempotentSubmitTest, EverySubmitSendsAKeyOfItsOwn) {
  const std::string spec = site_->specFile("twice.yaml", cpuSpec("echo twice"));
  EXPECT_EQ(alice_->run({"submit", spec}).exit_code, 0);
  EXPECT_EQ(alice_->run({"submit", spec}).exit_code, 0);
  EXPECT_EQ(alice_->jobs()["items"].size(), 2u) << "two submits are two jobs";
  const auto bad = alice_->run({"submit", spec, "--idempotency-key", "no spaces"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--idempotency-key"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace tuneplane::cli::testing
