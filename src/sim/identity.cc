#include "sim/identity.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace tuneplane::sim {

std::optional<std::string> actingUser(const std::string& token_user, const std::string& header_user,
                                      const std::string& slurm_user) {
  if (header_user.empty() || header_user == token_user) return token_user;
  // 13a: tpuser's token naming root; 19: tpuser's naming alice — both 511/1007.
  if (!isOperator(token_user, slurm_user)) return std::nullopt;
  return header_user;
}

bool isOperator(const std::string& user, const std::string& slurm_user) {
  return user == "root" || (!slurm_user.empty() && user == slurm_user);
}

std::optional<UnixUser> lookupUnixUser(const std::vector<UnixUser>& listed,
                                       const std::string& name) {
  for (const UnixUser& u : listed)
    if (u.name == name) return u;
  if (name.empty()) return std::nullopt;
  // The reentrant forms: httplib's workers look users up concurrently.
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(static_cast<size_t>(size > 0 ? size : 16384));
  passwd pw{};
  passwd* found = nullptr;
  if (getpwnam_r(name.c_str(), &pw, buffer.data(), buffer.size(), &found) != 0 || !found)
    return std::nullopt;
  UnixUser user{name, pw.pw_uid, pw.pw_gid, std::to_string(pw.pw_gid)};
  size = sysconf(_SC_GETGR_R_SIZE_MAX);
  std::vector<char> group_buffer(static_cast<size_t>(size > 0 ? size : 16384));
  group gr{};
  group* group_found = nullptr;
  if (getgrgid_r(pw.pw_gid, &gr, group_buffer.data(), group_buffer.size(), &group_found) == 0 &&
      group_found && group_found->gr_name)
    user.group = group_found->gr_name;
  return user;
}

}  // namespace tuneplane::sim
