// Every user as themselves on a real cluster (issue 44): `serve` with slurm.identity per_user
// against the test cluster started with `--accounting` (users alice and bob; associations
// enforced: alice in team-a, bob in team-b). alice's and bob's jobs run as themselves (`id -un`
// on the node); bob's job cannot list, read or write alice's staged files, outputs or
// checkpoints (the OS refuses; alice's files are unchanged); bob asking for team-a is a 422
// before Slurm (Slurm's own refusal is the simulator test's: serve_e2e_per_user_test). Needs
// TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE (proxy mode) or the JWT key (minted tokens;
// TUNEPLANE_LIVE_IDENTITY_MECHANISM=minted), TUNEPLANE_LIVE_USERS naming alice and bob, and root
// (the one-time step per user makes users/<name>). Bounded.
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "live_serve_fixture.h"

namespace tuneplane::live {
namespace {

constexpr const char* kAliceToken = "live-per-user-alice-7f3e";
constexpr const char* kBobToken = "live-per-user-bob-91ac";

bool hasUser(const std::string& name) {
  return ::getpwnam(name.c_str()) != nullptr;
}

class PerUserLiveTest : public LiveServeRun {
 protected:
  void SetUp() override {
    auto config = liveConfig();
    if (!config) GTEST_SKIP() << kSkipReason;
    live_ = *config;
    const auto users = env("TUNEPLANE_LIVE_USERS").value_or("");
    if (users.find("alice") == std::string::npos || users.find("bob") == std::string::npos ||
        !hasUser("alice") || !hasUser("bob")) {
      GTEST_SKIP() << "needs TUNEPLANE_LIVE_USERS with alice and bob (up.sh makes them)";
    }
    if (::geteuid() != 0) GTEST_SKIP() << "the one-time step per user needs root";
    const bool minted = env("TUNEPLANE_LIVE_IDENTITY_MECHANISM").value_or("") == "minted";
    Live site = live_;
    site.user = "root";  // serve runs as slurm.user: here, as root, which owns users/<name>
    if (minted) {
      if (!live_.key_file) GTEST_SKIP() << "minted tokens need TUNEPLANE_LIVE_JWT_KEY_FILE";
      site.token_file.reset();
    } else {
      auto slurm_token = env("TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE");
      if (!slurm_token) GTEST_SKIP() << "proxy mode needs TUNEPLANE_LIVE_SLURMUSER_TOKEN_FILE";
      site.token_file = *slurm_token;
      site.key_file.reset();
    }
    const auto entry = [](const char* user, const char* token, const std::string& accounts) {
      return "    - {user: " + std::string(user) + ", token_sha256: " + staging::sha256Hex(token) +
             accounts + "}\n";
    };
    auto dir = makeLiveSite(site, "tp-live-per-user-", live_.url, "  identity: per_user\n",
                            "server:\n  poll_interval: 1s\n  tokens:\n" +
                                entry("alice", kAliceToken, ", slurm_account: [team-a]") +
                                entry("bob", kBobToken, ", slurm_account: [team-b]"));
    ASSERT_TRUE(dir) << "cannot make a directory in " << live_.shared_dir;
    dir_ = *dir;
    // The one-time step per user, as root: users/<name>, serve's user's, the user's group.
    for (const char* user : {"alice", "bob"}) {
      const Status made = makeUserStagingDir(dir_ + "/staging", user);
      ASSERT_TRUE(made) << user << ": " << made.error().describe();
    }
    serve_ = test::ServeProcess::start(dir_ + "/site.yaml", dir_ + "/tuneplane.db", dir_);
    ASSERT_NE(serve_, nullptr);
    alice_ = std::make_unique<test::CliRunner>(serve_->url(), kAliceToken, dir_ + "/alice");
    bob_ = std::make_unique<test::CliRunner>(serve_->url(), kBobToken, dir_ + "/bob");
  }

  std::string submit(const test::CliRunner& cli, const std::string& spec) {
    const std::string file = dir_ + "/spec-" + std::to_string(++specs_) + ".yaml";
    writeFile(file, spec);
    const test::ProcessResult r = cli.run({"submit", "-f", file, "-o", "json"});
    if (r.exit_code != 0) return "!" + r.out + r.err;
    return json::parse(r.out, nullptr, false).value("id", "");
  }
  json waitEnded(const test::CliRunner& cli, const std::string& id) {
    return cli.waitJob(
        id, [](const json& j) { return j.value("terminal", false); }, "the job's end", kLiveLimit);
  }
  std::string outputOf(const test::CliRunner& cli, const std::string& id, const std::string& name) {
    const std::string to = dir_ + "/got-" + id + "-" + name;
    const test::ProcessResult r = cli.run({"cp", id + "/" + name, to});
    return r.exit_code == 0 ? readFile(to) : "<cp failed: " + r.err + ">";
  }

  std::unique_ptr<test::CliRunner> alice_, bob_;
  int specs_ = 0;
};

TEST_F(PerUserLiveTest, EachUsersJobRunsAsThemAndCannotReachAnothersFiles) {
  const std::string alice_job =
      submit(*alice_,
             cpuJobSpec("alice-own",
                        "cd $TUNEPLANE_OUTPUT_DIR && id -un > who.txt && echo secret > mine.txt && "
                        "echo ckpt > $TUNEPLANE_CHECKPOINT_DIR/c.txt"));
  ASSERT_EQ(alice_job.find('!'), std::string::npos) << alice_job;
  json alice_done = waitEnded(*alice_, alice_job);
  ASSERT_EQ(alice_done.value("phase", ""), "Succeeded") << alice_done.dump();
  EXPECT_EQ(alice_done["run_as"], "alice");
  EXPECT_EQ(outputOf(*alice_, alice_job, "who.txt"), "alice\n");
  const std::string attempt_dir = alice_done["attempts"][0]["staging_dir"];
  const std::string job_dir = std::filesystem::path(attempt_dir).parent_path().parent_path();
  const std::string users_alice = std::filesystem::path(job_dir).parent_path().parent_path();

  // bob's job tries each way in; each line says what the OS answered.
  const std::string probe =
      "cd $TUNEPLANE_OUTPUT_DIR && id -un > who.txt; "
      "for p in " +
      users_alice + " " + attempt_dir + "/job.sh " + attempt_dir + "/output/mine.txt " + job_dir +
      "/checkpoints/c.txt; do "
      "if cat $p >/dev/null 2>&1 || ls $p >/dev/null 2>&1; then echo LEAK $p; "
      "else echo denied $p; fi; done > tries.txt; "
      "if echo x > " +
      job_dir +
      "/checkpoints/c.txt 2>/dev/null; then echo LEAK write; "
      "else echo denied write; fi >> tries.txt";
  const std::string bob_job = submit(*bob_, cpuJobSpec("bob-probe", probe));
  ASSERT_EQ(bob_job.find('!'), std::string::npos) << bob_job;
  json bob_done = waitEnded(*bob_, bob_job);
  ASSERT_EQ(bob_done.value("phase", ""), "Succeeded")
      << bob_->run({"logs", bob_job, "--stream", "stderr"}).out << bob_done.dump();
  EXPECT_EQ(outputOf(*bob_, bob_job, "who.txt"), "bob\n");
  const std::string tries = outputOf(*bob_, bob_job, "tries.txt");
  EXPECT_EQ(tries.find("LEAK"), std::string::npos) << tries;
  EXPECT_NE(tries.find("denied write"), std::string::npos) << tries;
  // alice's files are as she left them.
  EXPECT_EQ(outputOf(*alice_, alice_job, "mine.txt"), "secret\n");
  EXPECT_EQ(readFile(job_dir + "/checkpoints/c.txt"), "ckpt\n");
}

// `tuneplane usage` agrees with sacct (CPUTimeRAW of every run, clipped to the same window)
// within 1 % for alice's runs: Slurm's own accounting, read through slurmdbd.
TEST_F(PerUserLiveTest, UsageAgreesWithSacctForTheSameWindow) {
  if (env("TUNEPLANE_LIVE_ACCOUNTING").value_or("0") != "1") {
    GTEST_SKIP() << "needs the cluster's slurmdbd (up.sh --accounting)";
  }
  const std::string conf = liveSlurmConf(live_);
  if (conf.empty()) GTEST_SKIP() << "no slurm.conf for sacct (TUNEPLANE_LIVE_SLURM_CONF)";
  const int64_t since = static_cast<int64_t>(::time(nullptr)) - 2;
  const std::string id = submit(*alice_, cpuJobSpec("alice-usage", "sleep 4"));
  ASSERT_EQ(id.find('!'), std::string::npos) << id;
  ASSERT_EQ(waitEnded(*alice_, id).value("phase", ""), "Succeeded");
  const int64_t until = static_cast<int64_t>(::time(nullptr)) + 2;
  // slurmdbd takes the end record a moment after slurmctld: asked until the run is there.
  json report;
  ASSERT_TRUE(test::waitUntil(
      [&] {
        const test::ProcessResult r = alice_->run({"usage", "--since", std::to_string(since),
                                                   "--until", std::to_string(until), "-o", "json"});
        report = json::parse(r.out, nullptr, false);
        return r.exit_code == 0 && report.is_object() && report["total"].value("runs", 0) >= 1 &&
               report["total"].value("cpu_seconds", 0.0) > 0;
      },
      kLiveLimit))
      << report.dump();
  const double ours = report["total"].value("cpu_seconds", 0.0);
  const auto stamp = [](int64_t t) {
    char text[32];
    std::tm tm{};
    const std::time_t tt = static_cast<std::time_t>(t);
    ::localtime_r(&tt, &tm);
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    return std::string(text);
  };
  const test::ProcessResult sacct =
      runSlurmCommand(live_, conf,
                      {"sacct", "-X", "-n", "-P", "--duplicates", "--truncate", "-u", "alice", "-S",
                       stamp(since), "-E", stamp(until), "-o", "CPUTimeRAW"},
                      dir_);
  ASSERT_EQ(sacct.exit_code, 0) << sacct.err;
  double theirs = 0;
  std::istringstream lines(sacct.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) theirs += std::stod(line);
  }
  ASSERT_GT(theirs, 0) << sacct.out;
  EXPECT_LE(std::abs(ours - theirs), 0.01 * theirs)
      << "tuneplane usage " << ours << " CPU-seconds, sacct " << theirs << "\n"
      << report.dump(2);
}

TEST_F(PerUserLiveTest, AnAccountTheUserMayNotUseIsRefusedBeforeSlurm) {
  const std::string team_a =
      cpuJobSpec("bob-team-a", "true") + "  scheduling:\n    account: team-a\n";
  const std::string refused = submit(*bob_, team_a);
  ASSERT_EQ(refused.front(), '!') << refused;
  EXPECT_NE(refused.find("api.account_not_allowed"), std::string::npos) << refused;
}

}  // namespace
}  // namespace tuneplane::live
