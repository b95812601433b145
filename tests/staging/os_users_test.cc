// PosixOsUsers against this host's own database: root is always there, and a name that
// cannot exist is "no such user", not an error.
#include "staging/os_users.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

namespace tuneplane::staging {
namespace {

TEST(PosixOsUsers, FindsRootByNameAndByUid) {
  PosixOsUsers users;
  auto by_name = users.userByName("root");
  ASSERT_TRUE(by_name) << by_name.error().describe();
  ASSERT_TRUE(*by_name);
  EXPECT_EQ((*by_name)->uid, 0u);
  EXPECT_EQ((*by_name)->gid, 0u);
  auto by_uid = users.userById(0);
  ASSERT_TRUE(by_uid && *by_uid);
  EXPECT_EQ((*by_uid)->name, "root");
  auto groups = users.groupsOf(**by_name);
  ASSERT_TRUE(groups) << groups.error().describe();
  EXPECT_NE(std::find(groups->begin(), groups->end(), 0u), groups->end());
}

TEST(PosixOsUsers, FindsGroupsByName) {
  PosixOsUsers users;
  auto root = users.groupByName("root");
  ASSERT_TRUE(root && *root);
  EXPECT_EQ((*root)->gid, 0u);
}

TEST(PosixOsUsers, UnknownNamesAreAbsentNotErrors) {
  PosixOsUsers users;
  auto user = users.userByName("tp-no-such-user-x9");
  ASSERT_TRUE(user) << user.error().describe();
  EXPECT_FALSE(*user);
  auto group = users.groupByName("tp-no-such-group-x9");
  ASSERT_TRUE(group) << group.error().describe();
  EXPECT_FALSE(*group);
}

TEST(PosixOsUsers, KnowsWhoThisProcessIs) {
  PosixOsUsers users;
  EXPECT_EQ(users.effectiveUid(), ::geteuid());
  const auto groups = users.processGroups();
  ASSERT_FALSE(groups.empty());
  EXPECT_EQ(groups.front(), ::getegid());
}

}  // namespace
}  // namespace tuneplane::staging
