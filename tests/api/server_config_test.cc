// The site file's server: section: defaults, every field, and every problem reported.
#include "api/server_config.h"
#include "support/test_paths.h"

#include <gtest/gtest.h>

#include <set>

#include "api/authenticator.h"
#include "catalog/site_loader.h"
#include "staging/stager.h"

namespace tuneplane::api {
namespace {

using staging::sha256Hex;  // what the site file's token_sha256 holds

const std::string kHash(64, 'a');

std::set<std::string> codesOf(const Errors& errors) {
  std::set<std::string> codes;
  for (const auto& e : errors) codes.insert(e.code + "@" + e.field);
  return codes;
}

TEST(ServerConfigTest, NoSectionMeansDefaultsBesideTheSiteFile) {
  auto config = parseServerConfig("slurm: {}\n", "/etc/tuneplane");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->http.listen, (ListenAddress{"127.0.0.1", 8080}));
  EXPECT_EQ(config->db, "/etc/tuneplane/tuneplane.db");
  EXPECT_TRUE(config->tokens.empty());
  EXPECT_EQ(config->http.max_body_bytes, kDefaultMaxBodyBytes);
  EXPECT_EQ(config->submit_concurrency, kDefaultSubmitConcurrency);
}

TEST(ServerConfigTest, ReadsEveryField) {
  auto config = parseServerConfig(
      "server:\n"
      "  listen: 0.0.0.0:9090\n"
      "  db: state/tp.db\n"
      "  poll_interval: 2s\n"
      "  max_body_bytes: 4096\n"
      "  threads: 3\n"
      "  submit_concurrency: 12\n"
      "  tokens:\n"
      "    - user: alice\n"
      "      token_sha256: " +
          kHash +
          "\n"
          "    - {user: root, token_sha256: " +
          std::string(64, 'b') + ", admin: true}\n",
      "/srv");
  ASSERT_TRUE(config) << config.error().front().describe();
  EXPECT_EQ(config->http.listen, (ListenAddress{"0.0.0.0", 9090}));
  EXPECT_EQ(config->db, "/srv/state/tp.db");
  EXPECT_EQ(config->poll_interval, std::chrono::seconds(2));
  EXPECT_EQ(config->http.max_body_bytes, 4096u);
  EXPECT_EQ(config->http.threads, 3);
  EXPECT_EQ(config->submit_concurrency, 12);
  ASSERT_EQ(config->tokens.size(), 2u);
  EXPECT_EQ(config->tokens[0].user, "alice");
  EXPECT_FALSE(config->tokens[0].admin);
  EXPECT_TRUE(config->tokens[1].admin);
}

TEST(ServerConfigTest, APostgresUriIsKeptAsIsWithItsPasswordFileAndLease) {
  auto config = parseServerConfig(
      "server:\n"
      "  db: postgresql://tp@db.example.org/tuneplane?sslmode=require\n"
      "  db_password_file: secrets/db.pass\n"
      "  lease_seconds: 4\n",
      "/srv");
  ASSERT_TRUE(config) << config.error().front().describe();
  EXPECT_EQ(config->db, "postgresql://tp@db.example.org/tuneplane?sslmode=require");
  EXPECT_EQ(config->db_password_file, "/srv/secrets/db.pass");
  EXPECT_EQ(config->lease_seconds, 4);
  auto defaults = parseServerConfig("server: {db: postgres://h/d}\n", "/srv");
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->lease_seconds, 10);
  EXPECT_FALSE(defaults->db_password_file.has_value());
  auto bad = parseServerConfig("server: {lease_seconds: 0}\n", "/srv");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(codesOf(bad.error()).count("server.invalid_value@server.lease_seconds"));
}

TEST(ServerConfigTest, ReportsEveryProblemWithItsField) {
  auto config = parseServerConfig(
      "server:\n"
      "  listen: nowhere\n"
      "  poll_interval: soon\n"
      "  threads: 0\n"
      "  submit_concurrency: 65\n"
      "  colour: blue\n"
      "  tokens:\n"
      "    - user: alice\n"
      "      token_sha256: plain-token-not-a-hash\n"
      "    - user: bob\n"
      "      token_sha256: " +
          kHash +
          "\n"
          "    - user: carol\n"
          "      token_sha256: " +
          kHash + "\n",
      "/srv");
  ASSERT_FALSE(config);
  const auto codes = codesOf(config.error());
  EXPECT_TRUE(codes.count("server.invalid_listen@server.listen"));
  EXPECT_TRUE(codes.count("server.invalid_duration@server.poll_interval"));
  EXPECT_TRUE(codes.count("server.invalid_value@server.threads"));
  EXPECT_TRUE(codes.count("server.invalid_value@server.submit_concurrency"));
  EXPECT_TRUE(codes.count("server.unknown_field@server.colour"));
  EXPECT_TRUE(codes.count("server.invalid_hash@server.tokens[0].token_sha256"));
  EXPECT_TRUE(codes.count("server.duplicate_token@server.tokens[2].token_sha256"));
  // The refused value is never echoed: it might be a token pasted by mistake.
  for (const auto& e : config.error()) {
    EXPECT_EQ(e.message.find("plain-token-not-a-hash"), std::string::npos);
  }
}

TEST(ServerConfigTest, TheExampleSiteFileIsValid) {
  const std::string path = (test::sourceDir() / "examples/site-serve.yaml").string();
  auto config = loadServerConfig(path);
  ASSERT_TRUE(config) << config.error().front().describe();
  EXPECT_EQ(config->tokens.size(), 2u);
  EXPECT_TRUE(config->tokens[1].admin);
  EXPECT_EQ(config->tokens[0].token_sha256, sha256Hex("alice-demo-token"));
  auto site = catalog::loadSiteConfigFile(path);  // the rest of the file, as catalog reads it
  EXPECT_TRUE(site) << site.error().front().describe();
}

TEST(ServerConfigTest, ParseListenTable) {
  struct Case {
    std::string text;
    bool ok;
    std::string host;
    int port;
  };
  const std::vector<Case> cases = {
      {"127.0.0.1:8080", true, "127.0.0.1", 8080},
      {"[::1]:0", true, "::1", 0},
      {"localhost:65535", true, "localhost", 65535},
      {"127.0.0.1", false, "", 0},
      {":80", false, "", 0},
      {"h:65536", false, "", 0},
      {"h:-1", false, "", 0},
      {"h:8o", false, "", 0},
  };
  for (const auto& c : cases) {
    auto parsed = parseListen(c.text);
    EXPECT_EQ(parsed.has_value(), c.ok) << c.text;
    if (parsed && c.ok) {
      EXPECT_EQ(parsed->host, c.host) << c.text;
      EXPECT_EQ(parsed->port, c.port) << c.text;
    }
  }
}

}  // namespace
}  // namespace tuneplane::api

namespace tuneplane::api {
namespace {

TEST(ServerConfigLimitsTest, DefaultsAreSafeAndEveryLimitIsRead) {
  auto defaults = parseServerConfig("slurm: {}\n", "/etc/tuneplane");
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->http.request_timeout, kDefaultRequestTimeout);
  EXPECT_EQ(defaults->http.idle_timeout, kDefaultIdleTimeout);
  EXPECT_EQ(defaults->http.max_connections, kDefaultMaxConnections);
  EXPECT_EQ(defaults->http.max_connections_per_client, kDefaultMaxConnectionsPerClient);
  EXPECT_EQ(defaults->http.client_ipv6_prefix, 64);
  EXPECT_EQ(defaults->http.max_header_bytes, kDefaultMaxHeaderBytes);
  EXPECT_FALSE(defaults->http.tls);
  EXPECT_FALSE(defaults->insecure_http);

  auto config = parseServerConfig(
      "server:\n  request_timeout: 5s\n  idle_timeout: 500ms\n  max_connections: 10\n"
      "  max_connections_per_client: 2\n  max_header_bytes: 2048\n  client_ipv6_prefix: 56\n"
      "  tls: {cert: tls/c.pem, key: /k/key.pem}\n  insecure_http: true\n",
      "/srv");
  ASSERT_TRUE(config) << config.error().front().describe();
  EXPECT_EQ(config->http.request_timeout, std::chrono::seconds(5));
  EXPECT_EQ(config->http.idle_timeout, std::chrono::milliseconds(500));
  EXPECT_EQ(config->http.max_connections, 10);
  EXPECT_EQ(config->http.max_connections_per_client, 2);
  EXPECT_EQ(config->http.client_ipv6_prefix, 56);
  EXPECT_EQ(config->http.max_header_bytes, 2048u);
  ASSERT_TRUE(config->http.tls);
  EXPECT_EQ(config->http.tls->cert, "/srv/tls/c.pem");  // relative to the site file
  EXPECT_EQ(config->http.tls->key, "/k/key.pem");
  EXPECT_TRUE(config->insecure_http);
}

TEST(ServerConfigLimitsTest, BadLimitsAreReportedWithTheirFields) {
  auto config = parseServerConfig(
      "server:\n  request_timeout: soon\n  idle_timeout: 0s\n  max_connections: 0\n"
      "  max_connections_per_client: -1\n  max_header_bytes: 10\n  tls: {cert: c.pem}\n"
      "  client_ipv6_prefix: 129\n"
      "  insecure_http: maybe\n",
      "/srv");
  ASSERT_FALSE(config);
  const auto codes = codesOf(config.error());
  for (const char* expected : {"server.invalid_duration@server.request_timeout",
                               "server.invalid_duration@server.idle_timeout",
                               "server.invalid_value@server.max_connections",
                               "server.invalid_value@server.max_connections_per_client",
                               "server.invalid_value@server.max_header_bytes",
                               "server.invalid_value@server.client_ipv6_prefix"}) {
    EXPECT_TRUE(codes.count(expected)) << expected;
  }
  bool key_missing = false, insecure_wrong = false;
  for (const auto& e : config.error()) {
    key_missing |= e.field.find("server.tls") == 0 && e.code == "server.missing_field";
    insecure_wrong |= e.field == "server.insecure_http";
  }
  EXPECT_TRUE(key_missing);
  EXPECT_TRUE(insecure_wrong);
}

TEST(ServerConfigLimitsTest, OnlyLoopbackHostsAreLoopback) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) {
    EXPECT_TRUE(isLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "10.0.0.1", "::", "127.0.0.1.example.org", "1270.0.0.1",
                           "example.org", "128.0.0.1"}) {
    EXPECT_FALSE(isLoopbackHost(host)) << host;
  }
}

}  // namespace
}  // namespace tuneplane::api

namespace tuneplane::api {
namespace {

TEST(ServerConfigDefaultsTest, TheDatabaseGoesToSystemdsStateDirectoryWhenItGivesOne) {
  const ServerDefaults systemd{"/var/lib/tuneplane"};
  auto config = parseServerConfig("slurm: {}\n", "/etc/tuneplane", systemd);
  ASSERT_TRUE(config);
  EXPECT_EQ(config->db, "/var/lib/tuneplane/tuneplane.db");
  // StateDirectory=a b gives "a:b": the first is serve's.
  EXPECT_EQ(defaultDbPath("/etc/tuneplane", {"/var/lib/tuneplane:/var/lib/other"}),
            "/var/lib/tuneplane/tuneplane.db");
  // Without it (or with a relative one, which systemd never gives), beside the site file.
  EXPECT_EQ(defaultDbPath("/etc/tuneplane", {}), "/etc/tuneplane/tuneplane.db");
  EXPECT_EQ(defaultDbPath("/etc/tuneplane", {""}), "/etc/tuneplane/tuneplane.db");
  EXPECT_EQ(defaultDbPath("/etc/tuneplane", {"state"}), "/etc/tuneplane/tuneplane.db");
  // server.db, when the site names it, wins.
  auto named = parseServerConfig("server: {db: /srv/tp.db}\n", "/etc/tuneplane", systemd);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->db, "/srv/tp.db");
}

TEST(ServerConfigProxiesTest, TrustedProxiesAreAddressesOrNetworksEachCheckedWithItsField) {
  auto config =
      parseServerConfig("server:\n  trusted_proxies: [127.0.0.1, 10.0.0.0/8, '::1']\n", "/srv");
  ASSERT_TRUE(config) << config.error().front().describe();
  ASSERT_EQ(config->http.trusted_proxies.size(), 3u);
  EXPECT_EQ(config->http.trusted_proxies[1].text, "10.0.0.0/8");
  EXPECT_TRUE(contains(config->http.trusted_proxies, "10.9.8.7"));
  auto bad =
      parseServerConfig("server:\n  trusted_proxies: [127.0.0.1, nginx, 10.0.0.0/40]\n", "/srv");
  ASSERT_FALSE(bad);
  const auto codes = codesOf(bad.error());
  EXPECT_TRUE(codes.count("server.invalid_proxy@server.trusted_proxies[1]"));
  EXPECT_TRUE(codes.count("server.invalid_proxy@server.trusted_proxies[2]"));
  auto not_a_list = parseServerConfig("server:\n  trusted_proxies: 127.0.0.1\n", "/srv");
  ASSERT_FALSE(not_a_list);
  EXPECT_TRUE(codesOf(not_a_list.error()).count("server.wrong_type@server.trusted_proxies"));
}

TEST(ServerConfigTokensTest, ATokenCarriesItsSlurmAccountsAndQosFirstOneTheDefault) {
  auto config = parseServerConfig(
      "server:\n  tokens:\n"
      "    - {user: alice, token_sha256: " +
          kHash +
          ", slurm_account: team-a, qos: [normal, high]}\n"
          "    - {user: bob, token_sha256: " +
          std::string(64, 'b') + ", slurm_account: [team-b, shared.gpu]}\n" +
          "    - {user: ops, token_sha256: " + std::string(64, 'c') + "}\n",
      "/srv");
  ASSERT_TRUE(config) << config.error().front().describe();
  ASSERT_EQ(config->tokens.size(), 3u);
  EXPECT_EQ(config->tokens[0].slurm_accounts, (std::vector<std::string>{"team-a"}));
  EXPECT_EQ(config->tokens[0].qos, (std::vector<std::string>{"normal", "high"}));
  EXPECT_EQ(config->tokens[1].slurm_accounts, (std::vector<std::string>{"team-b", "shared.gpu"}));
  EXPECT_TRUE(config->tokens[1].qos.empty());
  EXPECT_TRUE(config->tokens[2].slurm_accounts.empty());

  auto bad = parseServerConfig(
      "server:\n  tokens:\n"
      "    - {user: alice, token_sha256: " +
          kHash +
          ", slurm_account: 'team a', qos: []}\n"
          "    - {user: bob, token_sha256: " +
          std::string(64, 'b') + ", slurm_account: [x, x], qos: {a: 1}}\n",
      "/srv");
  ASSERT_FALSE(bad);
  const auto codes = codesOf(bad.error());
  EXPECT_TRUE(codes.count("server.invalid_value@server.tokens[0].slurm_account"))
      << bad.error().front().describe();
  EXPECT_TRUE(codes.count("server.invalid_value@server.tokens[0].qos"));
  EXPECT_TRUE(codes.count("server.invalid_value@server.tokens[1].slurm_account[1]"));
  EXPECT_TRUE(codes.count("server.wrong_type@server.tokens[1].qos"));
}

TEST(ServerConfigTokensTest, ATokenMapsItsUserToAUnixUserByDefaultTheSameName) {
  auto config = parseServerConfig(
      "server:\n  tokens:\n    - {user: alice, token_sha256: " + kHash +
          ", unix_user: asmith}\n    - {user: bob, token_sha256: " + std::string(64, 'b') + "}\n",
      "/srv");
  ASSERT_TRUE(config) << config.error().front().describe();
  EXPECT_EQ(config->tokens[0].runAs(), "asmith");
  EXPECT_EQ(config->tokens[1].runAs(), "bob");
  for (const char* bad_name :
       {"'A Smith'", "'1abc'", "''", "'a/b'", "'abcdefghijklmnopqrstuvwxyz0123456'"}) {
    auto bad = parseServerConfig("server:\n  tokens:\n    - {user: alice, token_sha256: " + kHash +
                                     ", unix_user: " + bad_name + "}\n",
                                 "/srv");
    ASSERT_FALSE(bad) << bad_name;
    EXPECT_TRUE(codesOf(bad.error()).count("server.invalid_value@server.tokens[0].unix_user"))
        << bad_name;
  }
}

}  // namespace
}  // namespace tuneplane::api
