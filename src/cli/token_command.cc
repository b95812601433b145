// `tuneplane token add USER [--admin] [--slurm-account A]… [--qos Q]… --site FILE`: makes an
// API token for USER, adds its SHA-256 (never the token) to the site file's server.tokens and
// prints the token once, on stdout alone (TOKEN=$(tuneplane token add …)); what to do next
// goes to stderr. The site file keeps its text: the entry is inserted (siteinit/
// token_entry.h), the result is read back with the site loader before anything is written,
// and it replaces the file atomically (a temporary file beside it, fsync, rename) with the
// file's owner, group and mode. A lock on the file's directory keeps two adds from losing
// one. serve picks the user up on its next reload (`systemctl reload tuneplane`, SIGHUP).
// Exit codes: 0 added; 2 a bad flag, or a site file that cannot be read, parsed or edited
// (nothing written, no token printed); 1 the file could not be written.
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
#include "common/unique_fd.h"
#include "launch/attempt_identity.h"
#include "pipeline/launch_pipeline.h"
#include "siteinit/token_entry.h"
#include "spec/names.h"
#include "staging/stager.h"

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

void runTokenAdd(const TokenAddFlags& flags) {
  if (!spec::isDnsLabel(flags.user)) {
    refuse("'" + flags.user + "' is not a user name (lower-case letters, digits, '-')",
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

  const std::string token = newToken();
  const siteinit::TokenEntry entry{flags.user, staging::sha256Hex(token), flags.admin,
                                   flags.slurm_accounts, flags.qos};
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
      "afterwards (systemctl reload tuneplane). Exit codes: 0 added; 2 a bad flag or a site\n"
      "file that cannot be read or edited (nothing written); 1 the file could not be written.");
  add->add_option("USER", flags->user, "The user's name (a DNS label: jobs record it as owner)")
      ->required();
  add->add_flag("--admin", flags->admin,
                "An administrator: sees every job, abandons attempts, runs doctor's checks");
  add->add_option("--slurm-account", flags->slurm_accounts,
                  "A Slurm account USER's jobs may be charged to (repeat for more; the first is "
                  "the default)");
  add->add_option("--qos", flags->qos,
                  "A Slurm QOS USER's jobs may use (repeat for more; the first is the default)");
  add->add_option("--site", flags->site,
                  std::string("The site file (default: $") + pipeline::kSiteFileEnv + ")");
  add->callback([flags] { runTokenAdd(*flags); });
}

}  // namespace tuneplane::cli
