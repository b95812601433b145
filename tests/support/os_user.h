// Who the test runs as, for sites that must name slurm.user: the staging rule
// (staging/job_access.h) wants TunePlane to run as slurm.user unless staging.group is set,
// so test sites name this process's user. Thread-safe: getpwuid/getgrgid are called from
// test setup only.
#pragma once

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <string>

namespace tuneplane::test {

// This process's effective user.
inline std::string currentUser() {
  const struct passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? pw->pw_name : "uid-" + std::to_string(::geteuid());
}

// A user of this host who is not this process's user (for the refusal tests).
inline std::string anotherUser() {
  return ::geteuid() == 0 ? "nobody" : "root";
}

// The name of this process's effective group.
inline std::string currentGroup() {
  const struct group* gr = ::getgrgid(::getegid());
  return gr != nullptr ? gr->gr_name : "gid-" + std::to_string(::getegid());
}

}  // namespace tuneplane::test
