// The documented exit codes of the server verbs (commands.h; docs/users.md "Exit codes of
// `tuneplane`") from the real binary against a real `tuneplane serve` (e2e_fixture.h): what
// a script sees. The fake-server tests (server_commands_test.cc) cover each code's every
// path; these prove the real server's answers map onto them. Code 6 (sent, no answer) needs
// a server that swallows a request and is left to the fake-server tests.
#include <signal.h>

#include <filesystem>

#include "e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

using ServeE2eExitCodeTest = ServeE2eTest;

TEST_F(ServeE2eExitCodeTest, WaitExitsOneForAFailedJobAndTwoForARefusedSpec) {
  const std::string failing = site_->specFile("fails.yaml", cpuSpec("echo bad input >&2; exit 3"));
  const auto failed = alice_->run({"submit", failing, "--wait", "--poll-interval", "200ms"});
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_NE(failed.out.find(": Failed"), std::string::npos) << failed.out;

  // A GPU series the site does not have: 422 with the field, nothing staged or sent.
  std::string refused = cpuSpec("echo never");
  refused.replace(refused.find("        gpus_per_node: 0\n"), 0, "        gpu_series: h200\n");
  const auto bad = alice_->run({"submit", site_->specFile("refused.yaml", refused)});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("spec.resources.pools[0]"), std::string::npos) << bad.err;
  EXPECT_EQ(alice_->run({"get", "-o", "json"}).out.find("\"never\""), std::string::npos);

  // A finished job cannot be cancelled (409): a refusal too.
  const std::string id = failed.out.substr(0, failed.out.find(':'));
  const auto late = alice_->run({"cancel", id});
  EXPECT_EQ(late.exit_code, 2) << late.err;
  EXPECT_NE(late.err.find("[store.already_terminal]"), std::string::npos) << late.err;
  // A usage error is 2 as well, and sends nothing.
  EXPECT_EQ(alice_->run({"get", "-o", "xml"}).exit_code, 2);
}

TEST_F(ServeE2eExitCodeTest, NotFoundAuthAndAnUnreachableServer) {
  const std::string id = submit(cpuSpec("echo mine"));
  ASSERT_FALSE(id.empty());
  // 3: no such job; another user's job reads as not found; an attempt that does not exist.
  EXPECT_EQ(alice_->run({"get", "nosuch-00000000"}).exit_code, 3);
  EXPECT_EQ(as(kBobToken).run({"describe", id}).exit_code, 3);
  EXPECT_EQ(as(kBobToken).run({"cancel", id}).exit_code, 3);
  EXPECT_EQ(as(kOpsToken).run({"attempt", "abandon", id, "9", "--reason", "x"}).exit_code, 3);
  // 4: a token the server does not know (401); a non-admin on an admin route (403).
  const auto unknown = as("not-a-token").run({"get", id});
  EXPECT_EQ(unknown.exit_code, 4) << unknown.err;
  EXPECT_EQ(unknown.err.find("not-a-token"), std::string::npos) << unknown.err;
  EXPECT_EQ(alice_->run({"attempt", "abandon", id, "1", "--reason", "x"}).exit_code, 4);
  // 0: the admin sees alice's job.
  EXPECT_EQ(as(kOpsToken).run({"get", id}).exit_code, 0);
  // 5: serve is gone.
  ASSERT_EQ(serve_->stop(), 0) << serve_->process().err();
  serve_.reset();
  const auto gone = alice_->run({"get", id});
  EXPECT_EQ(gone.exit_code, 5) << gone.err;
  EXPECT_NE(gone.err.find("[client.unreachable]"), std::string::npos) << gone.err;
}

TEST_F(ServeE2eExitCodeTest, TimeoutAndCtrlCStopWaitingAndNeverCancel) {
  const std::string spec = site_->specFile("long.yaml", cpuSpec(gatedScript()));
  // 7: --timeout passes while the job runs on.
  const auto timed_out =
      alice_->run({"submit", spec, "--wait", "--timeout", "1s", "--poll-interval", "200ms"});
  EXPECT_EQ(timed_out.exit_code, 7) << timed_out.err;
  const std::string first_id = waitForJobs(1);

  // 130: Ctrl-C (SIGINT) while waiting.
  auto waiting =
      alice_->start({"submit", spec, "--wait", "--poll-interval", "200ms"}, "interrupted");
  ASSERT_NE(waiting, nullptr);
  const std::string second_id = waitForJobs(2);  // the newest
  ASSERT_FALSE(second_id.empty()) << waiting->err();
  waitAttemptRunning(second_id, 1);
  waiting->signal(SIGINT);
  EXPECT_EQ(waiting->waitExit(kJobLimit), 130) << waiting->err();
  EXPECT_NE(waiting->err().find("tuneplane cancel " + second_id), std::string::npos)
      << waiting->err();

  // Neither job was cancelled: both run on, and finish when let.
  for (const std::string& id : {first_id, second_id}) {
    const json job = waitAttemptRunning(id, 1);
    EXPECT_EQ(job["cancel_requested"], false) << id;
    openGate(job["attempts"][0]);
    waitPhase(id, "Succeeded");
  }
}

}  // namespace
}  // namespace tuneplane::cli::testing
