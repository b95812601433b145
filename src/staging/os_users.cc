// PosixOsUsers: the reentrant NSS calls behind the users-and-groups seam.
#include "staging/os_users.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tuneplane::staging {
namespace {

constexpr std::size_t kFirstBuffer = 1024;
constexpr std::size_t kMaxBuffer = 1 << 20;  // a group with thousands of members still fits

// What one getXXX_r call gave: its error number and the entry, if there was one.
template <typename Entry>
struct Lookup {
  int error = 0;
  std::optional<Entry> entry;
};

// Runs `call(buffer, size)` (a getXXX_r call) again with a larger buffer while it says ERANGE.
template <typename Call>
auto withGrowingBuffer(Call call) {
  std::vector<char> buffer(kFirstBuffer);
  while (true) {
    auto outcome = call(buffer.data(), buffer.size());
    if (outcome.error != ERANGE || buffer.size() >= kMaxBuffer) return outcome;
    buffer.resize(buffer.size() * 2);
  }
}

// No entry is "0 and no result"; some NSS modules say ENOENT, ESRCH, EBADF or EPERM instead.
template <typename Entry>
Result<std::optional<Entry>> finish(Lookup<Entry> outcome, const std::string& what) {
  const int err = outcome.error;
  if (outcome.entry || err == 0 || err == ENOENT || err == ESRCH || err == EBADF || err == EPERM) {
    return std::move(outcome.entry);
  }
  return fail("staging.user_lookup_failed", "",
              "looking up " + what + " failed: " + std::strerror(err));
}

Lookup<OsUser> userLookup(int err, const struct passwd* result) {
  if (result == nullptr) return {err, std::nullopt};
  return {err, OsUser{result->pw_name, result->pw_uid, result->pw_gid}};
}

}  // namespace

uid_t PosixOsUsers::effectiveUid() {
  return ::geteuid();
}

std::vector<gid_t> PosixOsUsers::processGroups() {
  std::vector<gid_t> groups = {::getegid()};
  const int count = ::getgroups(0, nullptr);
  if (count > 0) {
    std::vector<gid_t> supplementary(static_cast<std::size_t>(count));
    const int got = ::getgroups(count, supplementary.data());
    if (got > 0) groups.insert(groups.end(), supplementary.begin(), supplementary.begin() + got);
  }
  return groups;
}

Result<std::optional<OsUser>> PosixOsUsers::userByName(const std::string& name) {
  auto outcome = withGrowingBuffer([&](char* buffer, std::size_t size) {
    struct passwd entry {};
    struct passwd* result = nullptr;
    const int err = ::getpwnam_r(name.c_str(), &entry, buffer, size, &result);
    return userLookup(err, result);
  });
  return finish(std::move(outcome), "user '" + name + "'");
}

Result<std::optional<OsUser>> PosixOsUsers::userById(uid_t uid) {
  auto outcome = withGrowingBuffer([&](char* buffer, std::size_t size) {
    struct passwd entry {};
    struct passwd* result = nullptr;
    const int err = ::getpwuid_r(uid, &entry, buffer, size, &result);
    return userLookup(err, result);
  });
  return finish(std::move(outcome), "uid " + std::to_string(uid));
}

Result<std::optional<OsGroup>> PosixOsUsers::groupByName(const std::string& name) {
  auto outcome = withGrowingBuffer([&](char* buffer, std::size_t size) {
    struct group entry {};
    struct group* result = nullptr;
    const int err = ::getgrnam_r(name.c_str(), &entry, buffer, size, &result);
    if (result == nullptr) return Lookup<OsGroup>{err, std::nullopt};
    return Lookup<OsGroup>{err, OsGroup{result->gr_name, result->gr_gid}};
  });
  return finish(std::move(outcome), "group '" + name + "'");
}

Result<std::optional<OsGroup>> PosixOsUsers::groupById(gid_t gid) {
  auto outcome = withGrowingBuffer([&](char* buffer, std::size_t size) {
    struct group entry {};
    struct group* result = nullptr;
    const int err = ::getgrgid_r(gid, &entry, buffer, size, &result);
    if (result == nullptr) return Lookup<OsGroup>{err, std::nullopt};
    OsGroup group{result->gr_name, result->gr_gid};
    for (char** member = result->gr_mem; member != nullptr && *member != nullptr; ++member) {
      group.members.emplace_back(*member);
    }
    return Lookup<OsGroup>{err, std::move(group)};
  });
  return finish(std::move(outcome), "gid " + std::to_string(gid));
}

Result<std::vector<gid_t>> PosixOsUsers::groupsOf(const OsUser& user) {
  int count = 32;
  for (int tries = 0; tries < 8; ++tries) {
    std::vector<gid_t> groups(static_cast<std::size_t>(count));
    int n = count;
    if (::getgrouplist(user.name.c_str(), user.gid, groups.data(), &n) >= 0) {
      groups.resize(static_cast<std::size_t>(n));
      return groups;
    }
    count = n > count ? n : count * 2;  // n is the number needed (glibc)
  }
  return fail("staging.user_lookup_failed", "",
              "looking up the groups of user '" + user.name + "' failed: too many groups");
}

OsUsers& posixOsUsers() {
  static PosixOsUsers users;
  return users;
}

}  // namespace tuneplane::staging
