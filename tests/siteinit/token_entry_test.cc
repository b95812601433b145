// siteinit::addTokenEntry from a table of site-file layouts: the entry lands in
// server.tokens and nothing else of the text changes (comments, order, quoting); a list the
// edit cannot trust is refused with the line to add by hand. Each result is read back with
// the server section's own loader.
#include "siteinit/token_entry.h"

#include <gtest/gtest.h>

#include "api/server_config.h"

namespace tuneplane::siteinit {
namespace {

const TokenEntry kCarol{"carol", std::string(64, 'c'), true, {"team-c"}, {"normal", "high"}};

std::vector<api::ApiToken> tokensOf(const std::string& yaml) {
  auto config = api::parseServerConfig(yaml, "/srv");
  EXPECT_TRUE(config) << yaml << (config ? "" : config.error().front().describe());
  return config ? config->tokens : std::vector<api::ApiToken>{};
}

TEST(TokenEntryTest, TheEntryIsAddedToEveryLayoutAndTheRestIsKept) {
  const std::string alice = "{user: alice, token_sha256: " + std::string(64, 'a') + "}";
  struct Row {
    const char* name;
    std::string site;
    std::size_t tokens_after;
  };
  const std::vector<Row> rows = {
      {"no server section", "# mine\nslurm: {url: x}\n", 1},
      {"no newline at the end", "slurm: {url: x}", 1},
      {"a server section without tokens", "server:\n  listen: 127.0.0.1:8080  # keep\n", 1},
      {"an empty flow list, as site init drafts it",
       "server:\n  listen: 127.0.0.1:8080\n  tokens: []  # users\n", 1},
      {"a block list", "server:\n  tokens:\n    - " + alice + "\n  listen: 127.0.0.1:8080\n", 2},
      {"a block list at the mapping's column", "server:\n  tokens:\n  - " + alice + "\n", 2},
      {"a flow list", "server:\n  tokens: [" + alice + "]\n", 2},
      {"a flow server mapping", "server: {listen: 127.0.0.1:8080}\n", 1},
      {"a flow server mapping with tokens", "server: {tokens: [" + alice + "]}\n", 2},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    auto edited = addTokenEntry(row.site, kCarol);
    ASSERT_TRUE(edited) << edited.error().describe();
    const auto tokens = tokensOf(*edited);
    ASSERT_EQ(tokens.size(), row.tokens_after) << *edited;
    const api::ApiToken& carol = tokens.front();
    EXPECT_EQ(carol.user, "carol") << *edited;
    EXPECT_EQ(carol.token_sha256, kCarol.token_sha256);
    EXPECT_TRUE(carol.admin);
    EXPECT_EQ(carol.slurm_accounts, kCarol.slurm_accounts);
    EXPECT_EQ(carol.qos, kCarol.qos);
    // Every line of the original is still there.
    std::size_t from = 0;
    while (from < row.site.size()) {
      const auto end = row.site.find('\n', from);
      const std::string line = row.site.substr(from, end - from);
      if (line.find("tokens: [") == std::string::npos &&
          line.find("server: {") == std::string::npos) {
        EXPECT_NE(edited->find(line), std::string::npos) << "lost: " << line << "\n" << *edited;
      }
      if (end == std::string::npos) break;
      from = end + 1;
    }
  }
}

TEST(TokenEntryTest, WhatCannotBeTrustedIsRefusedWithTheLineToAdd) {
  for (const char* site : {"server: [1, 2]\n", "server:\n  tokens: {a: 1}\n",
                           "server: &s\n  listen: x\n", "server:\n  tokens: &t []\n"}) {
    auto edited = addTokenEntry(site, kCarol);
    ASSERT_FALSE(edited) << site;
    EXPECT_EQ(edited.error().code, "site.not_editable") << site;
    EXPECT_NE(edited.error().message.find(tokenEntryYaml(kCarol)), std::string::npos);
  }
  auto unreadable = addTokenEntry("slurm: [unclosed\n", kCarol);
  ASSERT_FALSE(unreadable);
  EXPECT_EQ(unreadable.error().code, "site.unreadable");
}

TEST(TokenEntryTest, TheEntryQuotesWhatItWrites) {
  EXPECT_EQ(tokenEntryYaml({"bob", std::string(64, 'b')}),
            "{user: \"bob\", token_sha256: \"" + std::string(64, 'b') + "\"}");
}

TEST(TokenEntryTest, AUnixUserIsWrittenAndReadsBack) {
  const TokenEntry entry{.user = "bob", .token_sha256 = std::string(64, 'b'), .unix_user = "rbob"};
  EXPECT_EQ(tokenEntryYaml(entry),
            "{user: \"bob\", token_sha256: \"" + std::string(64, 'b') + "\", unix_user: \"rbob\"}");
  auto edited = addTokenEntry("server:\n  tokens: []\n", entry);
  ASSERT_TRUE(edited) << edited.error().describe();
  const auto tokens = tokensOf(*edited);
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].unix_user, "rbob");
  EXPECT_EQ(tokens[0].runAs(), "rbob");
}

}  // namespace
}  // namespace tuneplane::siteinit
