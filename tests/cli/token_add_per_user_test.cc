// `tuneplane token add USER --unix-user NAME` in a slurm.identity per_user site, through the
// built binary: run as root it writes server.tokens[].unix_user and makes the one-time
// per-user directory (owner slurm.user, group NAME's primary group, 02750); run as anyone
// else (nobody, through setpriv) it writes the token and prints the one `install -d …`
// command instead; a Unix user no job may run as (root, unknown, not a name) is exit 2 with
// nothing written. The job's user is "daemon", which every Debian host has.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/server_config.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::cli::token_add_per_user_test {
namespace {

constexpr const char* kJobUser = "daemon";
constexpr uid_t kNobody = 65534;

std::string readText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TokenAddPerUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the one-time step is root's (CI runs as root)";
    const passwd* pw = ::getpwnam(kJobUser);
    if (pw == nullptr) GTEST_SKIP() << "no user " << kJobUser << " on this host";
    job_gid_ = pw->pw_gid;
    char tmpl[] = "/tmp/tp-token-per-user-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
    staging_ = (dir_ / "staging").string();
    std::filesystem::create_directories(staging_);
    site_ = (dir_ / "site.yaml").string();
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // A per_user site whose serve runs as `serve`.
  void writeSite(const std::string& serve) {
    std::ofstream(site_) << "slurm:\n  url: http://127.0.0.1:9\n  user: " << serve
                         << "\n  identity: per_user\n  token_file: /etc/tuneplane/slurm.jwt\n"
                            "container_runtime: apptainer\nstaging_root: "
                         << staging_ << "\nserver:\n  tokens: []\n";
  }

  test::ProcessResult tokenAdd(std::vector<std::string> args,
                               std::vector<std::string> as = {}) const {
    std::vector<std::string> argv = std::move(as);
    argv.push_back((test::binaryDir() / "src/cli/tuneplane").string());
    argv.insert(argv.end(), {"token", "add"});
    argv.insert(argv.end(), args.begin(), args.end());
    return test::runProcess(argv, {.scratch = dir_});
  }

  std::filesystem::path dir_;
  std::string staging_;
  std::string site_;
  gid_t job_gid_ = 0;
};

TEST_F(TokenAddPerUserTest, AsRootItMapsTheUserAndMakesItsStagingDirectory) {
  writeSite("root");
  const auto added = tokenAdd({"alice", "--unix-user", kJobUser, "--site", site_});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  auto config = api::loadServerConfig(site_);
  ASSERT_TRUE(config) << config.error().front().describe();
  ASSERT_EQ(config->tokens.size(), 1u);
  EXPECT_EQ(config->tokens[0].user, "alice");
  EXPECT_EQ(config->tokens[0].unix_user, kJobUser);
  const std::string user_dir = staging_ + "/users/" + kJobUser;
  struct stat st {};
  ASSERT_EQ(::lstat(user_dir.c_str(), &st), 0) << added.err;
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_uid, 0u);  // slurm.user: root here
  EXPECT_EQ(st.st_gid, job_gid_);
  EXPECT_EQ(st.st_mode & 07777, 02750u);
  EXPECT_NE(added.err.find("made " + user_dir), std::string::npos) << added.err;
}

TEST_F(TokenAddPerUserTest, AsAnyoneElseItPrintsTheOneCommandThatDoesIt) {
  writeSite("nobody");
  // nobody may edit the site file and lock its directory, nothing more.
  ASSERT_EQ(::chown(dir_.c_str(), kNobody, kNobody), 0);
  std::ofstream(site_, std::ios::app);
  ASSERT_EQ(::chown(site_.c_str(), kNobody, kNobody), 0);
  const auto added = tokenAdd({"alice", "--unix-user", kJobUser, "--site", site_},
                              {"setpriv", "--reuid=" + std::to_string(kNobody),
                               "--regid=" + std::to_string(kNobody), "--clear-groups"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const group* gr = ::getgrgid(job_gid_);
  ASSERT_NE(gr, nullptr);
  const std::string command = "install -d -o nobody -g " + std::string(gr->gr_name) + " -m 2750 " +
                              staging_ + "/users/" + kJobUser;
  EXPECT_NE(added.err.find(command), std::string::npos) << added.err;
  EXPECT_FALSE(std::filesystem::exists(staging_ + "/users"));
  EXPECT_NE(readText(site_).find("unix_user: \"daemon\""), std::string::npos) << readText(site_);
}

TEST_F(TokenAddPerUserTest, AUnixUserNoJobMayRunAsIsExit2WithNothingWritten) {
  writeSite("root");
  const std::string before = readText(site_);
  for (const char* user : {"root", "no-such-user-here", "Not A Name"}) {
    const auto refused = tokenAdd({"alice", "--unix-user", user, "--site", site_});
    EXPECT_EQ(refused.exit_code, 2) << user << ": " << refused.err;
    EXPECT_EQ(refused.out, "") << user;  // no token printed
  }
  EXPECT_EQ(readText(site_), before);
  EXPECT_FALSE(std::filesystem::exists(staging_ + "/users"));
}

}  // namespace
}  // namespace tuneplane::cli::token_add_per_user_test
