// Where the CLI finds its server and token: flags over the environment over the config
// file, each resolved on its own; the config file's permission rules (a file holding a
// token must be 0600-private, a config others can write is refused); and that no error
// ever carries the token.
#include "client/client_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace tuneplane::client {
namespace {

constexpr const char* kFileToken = "tok-from-file-5f2a9c";

class ClientConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tp-client-config-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    home_ = tmpl;
    std::filesystem::create_directories(home_ + "/.config/tuneplane");
    env_.home = home_;
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  std::string configPath() const { return home_ + "/.config/tuneplane/config.yaml"; }
  void writeConfig(const std::string& text, mode_t mode = 0600) { write(configPath(), text, mode); }
  static void write(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path, std::ios::trunc) << text;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
  }
  static std::string allMessages(const Errors& errors) {
    std::string out;
    for (const Error& e : errors) out += e.code + " " + e.field + " " + e.message + "\n";
    return out;
  }

  std::string home_;
  ClientEnvironment env_;
};

TEST_F(ClientConfigTest, TheConfigFileSuppliesServerAndToken) {
  writeConfig(std::string("server: http://tp.example:8080/\ntoken: ") + kFileToken + "\n");
  auto config = resolveClientConfig({}, env_);
  ASSERT_TRUE(config.has_value()) << allMessages(config.error());
  EXPECT_EQ(config->server, "http://tp.example:8080");  // the trailing slash dropped
  EXPECT_EQ(config->token, kFileToken);
  EXPECT_EQ(config->server_source, configPath());
  EXPECT_EQ(config->token_source, configPath());
  EXPECT_EQ(config->config_file, configPath());
}

TEST_F(ClientConfigTest, FlagsOverrideTheEnvironmentWhichOverridesTheFile) {
  writeConfig(std::string("server: http://file:1\ntoken: ") + kFileToken + "\n");
  env_.server = "http://env:2";
  env_.token = "env-token";
  auto from_env = resolveClientConfig({}, env_);
  ASSERT_TRUE(from_env.has_value());
  EXPECT_EQ(from_env->server, "http://env:2");
  EXPECT_EQ(from_env->token, "env-token");
  EXPECT_EQ(from_env->token_source, kTokenEnv);

  auto from_flags = resolveClientConfig({"http://flag:3", "flag-token"}, env_);
  ASSERT_TRUE(from_flags.has_value());
  EXPECT_EQ(from_flags->server, "http://flag:3");
  EXPECT_EQ(from_flags->server_source, "--server");
  EXPECT_EQ(from_flags->token, "flag-token");
  EXPECT_EQ(from_flags->token_source, "--token");
}

TEST_F(ClientConfigTest, TheCaFileComesFromTheEnvironmentElseTheSystemStore) {
  env_.server = "https://tp.example:8443";
  env_.token = "env-token";
  auto system_store = resolveClientConfig({}, env_);
  ASSERT_TRUE(system_store.has_value()) << allMessages(system_store.error());
  EXPECT_FALSE(system_store->ca_file.has_value());
  env_.ca_file = "/etc/tuneplane/ca.pem";
  auto with_ca = resolveClientConfig({}, env_);
  ASSERT_TRUE(with_ca.has_value()) << allMessages(with_ca.error());
  EXPECT_EQ(with_ca->ca_file, "/etc/tuneplane/ca.pem");
}

TEST_F(ClientConfigTest, ServerAndTokenResolveEachOnTheirOwn) {
  writeConfig("server: http://file:1\n", 0644);  // no token: may be world-readable
  env_.token = "env-token";
  auto config = resolveClientConfig({}, env_);
  ASSERT_TRUE(config.has_value()) << allMessages(config.error());
  EXPECT_EQ(config->server, "http://file:1");
  EXPECT_EQ(config->token, "env-token");
}

TEST_F(ClientConfigTest, NoConfigFileIsNotAnErrorButNoServerIs) {
  auto config = resolveClientConfig({}, env_);
  ASSERT_FALSE(config.has_value());
  ASSERT_EQ(config.error().size(), 1u);
  EXPECT_EQ(config.error()[0].code, "cli.no_server");
  EXPECT_NE(config.error()[0].message.find(kServerEnv), std::string::npos);

  auto tokenless = resolveClientConfig({"http://s:1", std::nullopt}, env_);
  ASSERT_TRUE(tokenless.has_value());
  EXPECT_FALSE(tokenless->token.has_value());
}

TEST_F(ClientConfigTest, AReadableConfigWithATokenIsRefusedWithoutShowingIt) {
  for (mode_t mode : {0640, 0604, 0644}) {
    writeConfig(std::string("server: http://s:1\ntoken: ") + kFileToken + "\n", mode);
    auto config = resolveClientConfig({}, env_);
    ASSERT_FALSE(config.has_value()) << std::oct << mode;
    EXPECT_EQ(config.error()[0].code, "config.insecure_permissions");
    EXPECT_NE(config.error()[0].message.find("chmod 600"), std::string::npos);
    EXPECT_EQ(allMessages(config.error()).find(kFileToken), std::string::npos);
  }
}

TEST_F(ClientConfigTest, AConfigOthersCanWriteIsRefusedEvenWithoutAToken) {
  writeConfig("server: http://s:1\n", 0622);
  auto config = resolveClientConfig({}, env_);
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error()[0].code, "config.insecure_permissions");
}

TEST_F(ClientConfigTest, ATokenFileIsReadRelativeToTheConfigAndMustBePrivate) {
  writeConfig("server: http://s:1\ntoken_file: token\n", 0644);
  const std::string token_path = home_ + "/.config/tuneplane/token";
  write(token_path, std::string(kFileToken) + "\n", 0600);
  auto config = resolveClientConfig({}, env_);
  ASSERT_TRUE(config.has_value()) << allMessages(config.error());
  EXPECT_EQ(config->token, kFileToken);  // trimmed

  ASSERT_EQ(::chmod(token_path.c_str(), 0644), 0);
  auto open = resolveClientConfig({}, env_);
  ASSERT_FALSE(open.has_value());
  EXPECT_EQ(open.error()[0].code, "config.insecure_permissions");
  EXPECT_EQ(allMessages(open.error()).find(kFileToken), std::string::npos);
}

TEST_F(ClientConfigTest, BadConfigsNameTheFieldAndTheFile) {
  struct Case {
    std::string text;
    std::string code;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"server: http://s:1\ntoken: a\ntoken_file: b\n", "config.conflicting_fields", "token_file"},
      {"server: http://s:1\nport: 8080\n", "config.unknown_field", "port"},
      {"server: ftp://s\n", "cli.invalid_server", ""},
      {"server: http://user:pw@s:1\n", "cli.invalid_server", ""},
      {"server: http://s:1\ntoken: \"  \"\n", "config.empty_token", "token"},
      {"server: http://s:1\ntoken_file: missing\n", "config.token_file_unreadable", "token_file"},
  };
  for (const Case& c : cases) {
    writeConfig(c.text);
    auto config = resolveClientConfig({}, env_);
    ASSERT_FALSE(config.has_value()) << c.text;
    EXPECT_EQ(config.error()[0].code, c.code) << allMessages(config.error());
    if (!c.field.empty()) {
      EXPECT_EQ(config.error()[0].field, c.field) << c.text;
    }
  }
}

TEST_F(ClientConfigTest, XdgConfigHomeWinsWhenAbsolute) {
  env_.xdg_config_home = "/somewhere/else";
  EXPECT_EQ(configFilePath(env_), "/somewhere/else/tuneplane/config.yaml");
  env_.xdg_config_home = "relative/dir";  // ignored, as the XDG spec says
  EXPECT_EQ(configFilePath(env_), configPath());
  env_.home.reset();
  env_.xdg_config_home.reset();
  EXPECT_EQ(configFilePath(env_), std::nullopt);
}

}  // namespace
}  // namespace tuneplane::client
