// `tuneplane token add USER [--admin] [--slurm-account A]… [--qos Q]… [--unix-user NAME]
// --site FILE`: makes an API token for USER, adds its SHA-256 (never the token) to the site
// file's server.tokens and prints the token once, on stdout alone (TOKEN=$(tuneplane token add
// …)); what to do next goes to stderr. The site file keeps its text: the entry is inserted
// (siteinit/token_entry.h), the result is read back with the site loader before anything is
// written, and it replaces the file atomically (a temporary file beside it, fsync, rename)
// with the file's owner, group and mode. A lock on the file's directory keeps two adds from
// losing one. serve picks the user up on its next reload (`systemctl reload tuneplane`,
// SIGHUP). In a slurm.identity per_user site, the user's jobs run as NAME (default USER), who
// must exist here and not be root (checked before anything is written), and the one-time
// step per user follows (staging/user_dir.h): run as root, it makes <staging_root>/users/NAME
// (owner slurm.user, the user serve runs as; group NAME's primary group; 02750); run as
// anyone else, it prints the one `install -d …` command that does.
// Exit codes: 0 added; 2 a bad flag, or a site file that cannot be read, parsed or edited, or
// (per_user) a Unix user that cannot run jobs (nothing written, no token printed); 1 the file
// could not be written, or (as root, per_user) the per-user directory could not be made — the
// token is then added and printed, and the command to finish by hand is on stderr.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "api/server_config.h"
#include "catalog/file_paths.h"
#include "catalog/site_loader.h"
#include "cli/commands.h"
#include "cli/site_environment.h"
#include "common/jwt.h"
#include "common/text_checks.h"
#include "common/unique_fd.h"
#include "launch/attempt_identity.h"
#include "pipeline/launch_pipeline.h"
#include "siteinit/token_entry.h"
#include "spec/names.h"
#include "staging/job_access.h"
#include "staging/os_users.h"
#include "staging/stager.h"
#include "staging/staging_paths.h"
#include "staging/user_dir.h"

namespace tuneplane::cli {
namespace {

// A token: 32 random bytes, base64url, with a prefix that no SHA-256 hex digest has, so a
// token pasted where its hash belongs is refused (server.invalid_hash) rather than taken.
constexpr const char* kTokenPrefix = "tp_";
constexpr std::size_t kTokenBytes = 32;

struct TokenAddFlags {
  std::string user;
  bool admin = false;
  std::vector<std::string> slurm_accounts;
  std::vector<std::string> qos;
  std::string unix_user;
  std::optional<std::string> site;
};

[[noreturn]] void refuse(const std::string& message, int code) {
  std::cerr << "token add: " << message << "\n";
  throw CLI::RuntimeError(code);
}

std::string newToken() {
  std::array<std::uint8_t, kTokenBytes> bytes{};
  launch::OpenSslRandomSource random;
  if (auto filled = random.fill(bytes); !filled) refuse(filled.error().message, kExitFailure);
  return kTokenPrefix + jwt::base64UrlEncode(std::string_view(
                            reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// Replaces `path` with `text`: a temporary file beside it with the old file's owner, group
// and mode, written and fsynced, renamed over it, the directory fsynced.
void replaceFile(const std::string& path, const std::string& text) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    refuse("cannot stat " + path + ": " + std::strerror(errno), 1);
  std::string temp = path + ".tmp-XXXXXX";
  UniqueFd fd(::mkstemp(temp.data()));
  if (!fd.valid())
    refuse("cannot write beside " + path + ": " + std::strerror(errno), kExitFailure);
  const auto give_up = [&](const std::string& what) {
    const int err = errno;
    ::unlink(temp.c_str());
    refuse(what + " " + temp + ": " + std::strerror(err), kExitFailure);
  };
  // Owner and group first (root may give the file away), then the mode.
  if (::fchown(fd.get(), st.st_uid, st.st_gid) != 0 && ::geteuid() == 0) give_up("cannot chown");
  if (::fchmod(fd.get(), st.st_mode & 07777) != 0) give_up("cannot chmod");
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) give_up("cannot write");
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) give_up("cannot fsync");
  if (::rename(temp.c_str(), path.c_str()) != 0) give_up("cannot rename");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  UniqueFd dir_fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.valid()) ::fsync(dir_fd.get());
}

// The rule for the user's jobs in a per_user site (staging::resolveUserAccess), with serve's
// user — slurm.user, the owner of every users/<name> — as this host knows it. Refuses (exit
// 2, nothing written) a user no job could run as.
staging::JobAccess userAccess(const catalog::SiteConfig& site, const std::string& unix_user) {
  staging::OsUsers& users = staging::posixOsUsers();
  auto serve = users.userByName(site.slurm.user);
  if (!serve) refuse(serve.error().message, kExitInvalid);
  if (!*serve) {
    refuse("slurm.user '" + site.slurm.user +
               "' (the user serve runs as, which owns each per-user staging directory) is not a "
               "user on this host",
           kExitInvalid);
  }
  auto access = staging::resolveUserAccess(**serve, unix_user, users);
  if (!access) {
    refuse(access.error().reason + " [" + access.error().code + "]: " + access.error().fix +
               " (or pass --unix-user NAME)",
           kExitInvalid);
  }
  return *access;
}

// The one-time step per user (staging/user_dir.h): done here as root; anyone else is told the
// one command that does it.
void finishUserDir(const staging::JobAccess& access, const std::string& staging_root) {
  const std::string command = staging::userDirCommand(access, staging_root);
  if (::geteuid() != 0) {
    std::cerr << "token add: slurm.identity per_user: " << access.run_as
              << "'s jobs need their staging directory, made once by root:\n  " << command << "\n";
    return;
  }
  if (auto made = staging::makeUserDir(access, staging_root); !made) {
    refuse("the token is added, but the staging directory of " + access.run_as +
               " could not be made: " + made.error().message + "; make it: `" + command + "`",
           kExitFailure);
  }
  std::cerr << "token add: made " << *staging::userDir(staging_root, access.run_as) << " (owner "
            << access.process_user.name << ", group " << (access.group ? access.group->name : "?")
            << ", 2750): " << access.run_as << "'s jobs keep their files there\n";
}

void runTokenAdd(const TokenAddFlags& flags) {
  if (!spec::isDnsLabel(flags.user)) {
    refuse("'" + flags.user + "' is not a user name (lower-case letters, digits, '-')",
           kExitInvalid);
  }
  if (!flags.unix_user.empty() && !isUnixUserName(flags.unix_user)) {
    refuse("'" + flags.unix_user +
               "' is not a Unix user name ([a-z_] then [a-z0-9_-], at most 32 characters)",
           kExitInvalid);
  }
  for (const auto& names : {&flags.slurm_accounts, &flags.qos}) {
    for (const auto& name : *names) {
      if (!spec::isSlurmName(name)) {
        refuse("'" + name + "' is not a Slurm name (letters, digits, '_', '-', '.')", kExitInvalid);
      }
    }
  }
  auto site_path = catalog::siteFilePath(flags.site, siteEnvironmentFromProcess().site_file);
  if (!site_path) refuse(site_path.error().message, kExitInvalid);
  const std::string path = std::filesystem::absolute(*site_path).lexically_normal().string();

  // One add at a time per directory: the read, the edit and the rename happen under the lock.
  const std::string dir = std::filesystem::path(path).parent_path().string();
  UniqueFd lock(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) {
    refuse("cannot lock " + dir + ": " + std::strerror(errno), kExitFailure);
  }
  auto text = catalog::readWholeFile(path);
  if (!text) {
    refuse("cannot read " + path +
               " — draft one first: `tuneplane site init --slurm URL --token-file FILE -o " + path +
               "`",
           kExitInvalid);
  }
  auto before = api::parseServerConfig(*text, catalog::absoluteDirectoryOf(path));
  if (!before)
    refuse(before.error().front().describe() + " (fix the site file first)", kExitInvalid);
  // slurm.identity per_user: who the user's jobs run as, checked before anything is written.
  const auto site = catalog::parseSiteConfig(*text);
  std::optional<staging::JobAccess> per_user;
  if (site && site->slurm.identity == catalog::IdentityMode::kPerUser) {
    per_user = userAccess(*site, flags.unix_user.empty() ? flags.user : flags.unix_user);
  }

  const std::string token = newToken();
  const siteinit::TokenEntry entry{.user = flags.user,
                                   .token_sha256 = staging::sha256Hex(token),
                                   .admin = flags.admin,
                                   .slurm_accounts = flags.slurm_accounts,
                                   .qos = flags.qos,
                                   .unix_user = flags.unix_user};
  auto edited = siteinit::addTokenEntry(*text, entry);
  if (!edited) refuse(edited.error().describe(), kExitInvalid);
  // Read back: the server section one token longer, with this one in it, and the rest of the
  // site file reading as it did (the same problems, if any: relative paths need the file).
  const auto problems = [](const Checked<catalog::SiteConfig>& site) {
    std::string all;
    if (!site) {
      for (const auto& e : site.error()) all += e.describe() + "\n";
    }
    return all;
  };
  auto after = api::parseServerConfig(*edited, catalog::absoluteDirectoryOf(path));
  const bool added =
      after && after->tokens.size() == before->tokens.size() + 1 &&
      std::any_of(after->tokens.begin(), after->tokens.end(),
                  [&](const api::ApiToken& t) { return t.token_sha256 == entry.token_sha256; }) &&
      problems(catalog::parseSiteConfig(*edited)) == problems(catalog::parseSiteConfig(*text));
  if (!added) {
    refuse(
        "the edited site file would not read back as before plus this user; nothing written. "
        "Add this entry to server.tokens by hand: " +
            siteinit::tokenEntryYaml(entry),
        kExitInvalid);
  }
  replaceFile(path, *edited);
  std::cout << token << "\n";
  std::cout.flush();
  std::cerr << "token add: " << flags.user << (flags.admin ? " (admin)" : "")
            << " may now use the token above (printed only this once; " << path
            << " keeps its SHA-256). Reload serve to let them in: `systemctl reload tuneplane` "
               "(or kill -HUP its pid). Give it to the user with the server's address: "
               "TUNEPLANE_SERVER=… TUNEPLANE_TOKEN=… or ~/.config/tuneplane/config.yaml\n";
  if (per_user) finishUserDir(*per_user, site->staging_root);
}

}  // namespace

void addTokenCommand(CLI::App& app) {
  CLI::App* token = app.add_subcommand("token", "Manage the API's users (server.tokens)");
  token->require_subcommand(1);
  auto flags = std::make_shared<TokenAddFlags>();
  CLI::App* add = token->add_subcommand(
      "add",
      "Make an API token for USER: its SHA-256 goes into the site file's server.tokens (the\n"
      "rest of the file is kept as written), the token is printed once on stdout. Reload serve\n"
      "afterwards (systemctl reload tuneplane). slurm.identity per_user: run as root, it also\n"
      "makes the user's staging directory (STAGING/users/NAME, once per user); run otherwise,\n"
      "it prints the command that does. Exit codes: 0 added; 2 a bad flag, a site file that\n"
      "cannot be read or edited, or a Unix user no job can run as (nothing written); 1 the\n"
      "file, or (as root) the staging directory, could not be written.");
  add->add_option("USER", flags->user, "The user's name (a DNS label: jobs record it as owner)")
      ->required();
  add->add_flag("--admin", flags->admin,
                "An administrator: sees every job, abandons attempts, runs doctor's checks");
  add->add_option("--slurm-account", flags->slurm_accounts,
                  "A Slurm account USER's jobs may be charged to (repeat for more; the first is "
                  "the default)");
  add->add_option("--qos", flags->qos,
                  "A Slurm QOS USER's jobs may use (repeat for more; the first is the default)");
  add->add_option("--unix-user", flags->unix_user,
                  "slurm.identity per_user: the Unix (and Slurm) user USER's jobs run as "
                  "(default: USER). Run as root, token add also makes its staging directory; "
                  "otherwise it prints the command that does");
  add->add_option("--site", flags->site,
                  std::string("The site file (default: $") + pipeline::kSiteFileEnv + ")");
  add->callback([flags] { runTokenAdd(*flags); });
}

}  // namespace tuneplane::cli
