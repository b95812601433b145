// `tuneplane token add` through the built binary: the token printed once and only on stdout
// authenticates as its user; the site file keeps its text (comments), its mode and owner,
// and gains the hash alone; a second user goes beside the first; a site file it cannot edit
// or read is exit 2 with nothing written and no token printed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/authenticator.h"
#include "api/server_config.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::cli {
namespace {

std::string readSiteText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr const char* kSite = R"(# The operator's site file: these comments stay.
slurm:
  url: http://127.0.0.1:9
  user: tpuser
  token_file: /etc/tuneplane/slurm.jwt
container_runtime: apptainer
staging_root: /shared/tuneplane/attempts
runtime_registry_file: runtimes.yaml
server:
  listen: "127.0.0.1:8080"  # loopback
  tokens: []  # the API's users
)";

class TokenAddTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-token-add-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    site_ = (dir_ / "site.yaml").string();
    std::ofstream(site_) << kSite;
    std::filesystem::permissions(site_, std::filesystem::perms::owner_read |
                                            std::filesystem::perms::owner_write |
                                            std::filesystem::perms::group_read);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  test::ProcessResult tokenAdd(std::vector<std::string> args) {
    args.insert(args.begin(), {(test::binaryDir() / "src/cli/tuneplane").string(), "token", "add"});
    return test::runProcess(args, {.scratch = dir_});
  }
  // The user the printed token authenticates as, through the site file's tokens.
  std::string userOf(const std::string& token) {
    auto config = api::loadServerConfig(site_);
    EXPECT_TRUE(config) << config.error().front().describe();
    if (!config) return "";
    auto who = api::Authenticator(config->tokens).authenticate("Bearer " + token);
    return who ? who->user : "";
  }

  std::filesystem::path dir_;
  std::string site_;
};

TEST_F(TokenAddTest, TheTokenIsPrintedOnceAndOnlyItsHashIsWritten) {
  const auto added = tokenAdd({"alice", "--slurm-account", "team-a", "--slurm-account", "shared",
                               "--qos", "normal", "--site", site_});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const std::string token = added.out.substr(0, added.out.find('\n'));
  EXPECT_EQ(added.out, token + "\n");  // stdout holds the token alone
  EXPECT_TRUE(token.starts_with("tp_")) << token;
  EXPECT_EQ(token.size(), 46u);
  EXPECT_NE(added.err.find("systemctl reload tuneplane"), std::string::npos) << added.err;
  const std::string text = readSiteText(site_);
  EXPECT_EQ(text.find(token), std::string::npos);  // never the token itself
  EXPECT_NE(text.find("# The operator's site file: these comments stay."), std::string::npos);
  EXPECT_NE(text.find("listen: \"127.0.0.1:8080\"  # loopback"), std::string::npos) << text;
  EXPECT_EQ(userOf(token), "alice");
  auto config = api::loadServerConfig(site_);
  ASSERT_TRUE(config);
  EXPECT_EQ(config->tokens[0].slurm_accounts, (std::vector<std::string>{"team-a", "shared"}));
  EXPECT_EQ(config->tokens[0].qos, (std::vector<std::string>{"normal"}));
  EXPECT_FALSE(config->tokens[0].admin);
  // The file keeps its mode.
  EXPECT_EQ(static_cast<int>(std::filesystem::status(site_).permissions()), 0640);

  const auto ops = tokenAdd({"ops", "--admin", "--site", site_});
  ASSERT_EQ(ops.exit_code, 0) << ops.err;
  const std::string ops_token = ops.out.substr(0, ops.out.find('\n'));
  EXPECT_NE(ops_token, token);
  EXPECT_EQ(userOf(ops_token), "ops");
  EXPECT_EQ(userOf(token), "alice");
  config = api::loadServerConfig(site_);
  ASSERT_TRUE(config);
  ASSERT_EQ(config->tokens.size(), 2u);
}

TEST_F(TokenAddTest, ASiteWithoutAServerSectionGetsOne) {
  std::ofstream(site_) << "slurm:\n  url: http://127.0.0.1:9\n  user: tpuser\n"
                          "  token_file: /etc/t.jwt\ncontainer_runtime: pyxis\n"
                          "staging_root: /shared/a\n";
  const auto added = tokenAdd({"alice", "--site", site_});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(userOf(added.out.substr(0, added.out.find('\n'))), "alice");
}

TEST_F(TokenAddTest, WhatCannotBeEditedOrReadIsExit2WithNothingWrittenOrPrinted) {
  std::ofstream(site_) << "slurm: {}\nserver:\n  tokens: not-a-list\n";
  const std::string before = readSiteText(site_);
  const auto refused = tokenAdd({"alice", "--site", site_});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(refused.out, "");
  EXPECT_EQ(readSiteText(site_), before);

  const auto missing = tokenAdd({"alice", "--site", (dir_ / "nope.yaml").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.out, "");
  EXPECT_NE(missing.err.find("tuneplane site init"), std::string::npos) << missing.err;

  const auto bad_user = tokenAdd({"Alice Smith", "--site", site_});
  EXPECT_EQ(bad_user.exit_code, 2);
  const auto bad_account = tokenAdd({"alice", "--slurm-account", "team a", "--site", site_});
  EXPECT_EQ(bad_account.exit_code, 2);
  EXPECT_EQ(readSiteText(site_), before);
}

}  // namespace
}  // namespace tuneplane::cli
