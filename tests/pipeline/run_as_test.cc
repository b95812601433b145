// Who a job runs as (pipeline/run_as.h), from a table: a shared site runs every job as
// slurm.user (run_as ""); a per_user site runs it as the principal's Unix user, refused —
// naming what is missing and the fix — when there is none, the host does not know it, it is
// root, or the user database does not answer. Never a job run as someone else.
#include "pipeline/run_as.h"

#include <gtest/gtest.h>

#include "../staging/fake_os_users.h"

namespace tuneplane::pipeline {
namespace {

using staging::testing::FakeOsUsers;

catalog::SiteConfig site(catalog::IdentityMode mode) {
  catalog::SiteConfig s;
  s.slurm.user = "tpuser";
  s.slurm.identity = mode;
  return s;
}

TEST(RunAsTest, EachCaseGivesItsUserOrItsRefusal) {
  FakeOsUsers users;
  users.user("alice", 1002, 1002).user("root", 0, 0).user("tpuser", 1001, 1001);
  struct Row {
    const char* name;
    catalog::IdentityMode mode;
    std::string unix_user;
    std::string want;       // the run_as, when accepted
    std::string want_code;  // the refusal, else ""
    std::string message;    // a part of the refusal's message
  };
  const std::vector<Row> rows = {
      {"shared: the service runs it", catalog::IdentityMode::kShared, "alice", "", "", ""},
      {"shared: no mapping needed", catalog::IdentityMode::kShared, "", "", "", ""},
      {"per_user: the mapped user", catalog::IdentityMode::kPerUser, "alice", "alice", "", ""},
      {"per_user: no mapping", catalog::IdentityMode::kPerUser, "", "", codes::kNoUnixUser,
       "--unix-user NAME"},
      {"per_user: not a user name", catalog::IdentityMode::kPerUser, "Alice Smith", "",
       codes::kNoUnixUser, "maps to no Unix user"},
      {"per_user: unknown to the host", catalog::IdentityMode::kPerUser, "carol", "",
       codes::kUnknownUnixUser, "'carol', which this host does not know"},
      {"per_user: root", catalog::IdentityMode::kPerUser, "root", "", codes::kRootUnixUser,
       "never runs a job as root"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    auto got = runAsFor(site(row.mode), "ann", row.unix_user, users);
    if (row.want_code.empty()) {
      ASSERT_TRUE(got) << got.error().describe();
      EXPECT_EQ(*got, row.want);
    } else {
      ASSERT_FALSE(got);
      EXPECT_EQ(got.error().code, row.want_code);
      EXPECT_EQ(got.error().field, "unix_user");
      EXPECT_NE(got.error().message.find(row.message), std::string::npos) << got.error().message;
      EXPECT_NE(got.error().message.find("ann"), std::string::npos) << got.error().message;
    }
  }
}

TEST(RunAsTest, AUserDatabaseThatDoesNotAnswerRefusesRatherThanGuesses) {
  FakeOsUsers users;
  users.failLookups();
  auto got = runAsFor(site(catalog::IdentityMode::kPerUser), "ann", "alice", users);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, "staging.user_lookup_failed");
}

}  // namespace
}  // namespace tuneplane::pipeline
