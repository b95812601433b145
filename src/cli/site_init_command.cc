// `tuneplane site init --slurm URL --token-file F [--staging-root DIR] [--runtime NAME]
// [--identity shared|per_user]
// [--listen HOST:PORT] [--state-dir DIR] [-o FILE]`: GET /nodes/ and /partitions/ with the
// token, then the draft (with a server: section) on stdout or in FILE — created, never
// overwritten — and, with -o, an empty runtime registry beside it (kept when one exists).
// Run as root, both files go to root and the job user's group, mode 0640, so serve (running
// as the job user) reads them and nobody else does. Exit codes (commands.h): 0 drafted; 2 a
// bad flag or FILE exists; 4 slurmrestd refused the token; 1 slurmrestd unreachable or
// failing.
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "api/server_config.h"
#include "catalog/site_config.h"
#include "cli/commands.h"
#include "cli/site_command.h"
#include "common/jwt.h"
#include "common/unique_fd.h"
#include "siteinit/site_draft.h"
#include "slurm/rest_client.h"

namespace tuneplane::cli {
namespace {

struct SiteInitFlags {
  std::string slurm_url;
  std::string token_file;
  std::optional<std::string> staging_root;
  std::optional<std::string> runtime;
  std::string identity = "shared";
  std::string listen = "127.0.0.1:8080";
  std::string state_dir = "/var/lib/tuneplane";
  std::optional<std::string> output;
};

[[noreturn]] void fail(const std::string& message, int code) {
  std::cerr << "site init: " << message << "\n";
  throw CLI::RuntimeError(code);
}

// The token's `sun` claim, read without checking the signature (slurmrestd does that): the
// user Slurm will run the jobs as. nullopt when the file holds no readable JWT.
std::optional<std::string> tokenUser(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  if (token.rfind("SLURM_JWT=", 0) == 0) token = token.substr(10);
  const auto first = token.find('.');
  const auto second = token.find('.', first + 1);
  if (first == std::string::npos || second == std::string::npos) return std::nullopt;
  auto payload = jwt::base64UrlDecode(token.substr(first + 1, second - first - 1));
  if (!payload) return std::nullopt;
  const auto claims = nlohmann::json::parse(*payload, nullptr, false);
  if (!claims.is_object() || !claims.contains("sun") || !claims["sun"].is_string()) {
    return std::nullopt;
  }
  return claims["sun"].get<std::string>();
}

std::string processUser() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw ? pw->pw_name : std::to_string(::geteuid());
}

// A failed read of the cluster: no job is involved, so no unknown-outcome code.
int exitCodeForRead(const slurm::SlurmError& e) {
  const std::string& code = e.error.code;
  if (code == slurm::kErrAuthFailed || code == slurm::kErrTokenUnavailable) return kExitAuth;
  if (code == slurm::kErrConfig) return kExitInvalid;
  return kExitFailure;
}

// Who reads the files site init writes: the job user's group, when this runs as root (so
// `serve`, running as the job user, reads them); nullopt otherwise.
std::optional<gid_t> readerGroup(const std::string& job_user) {
  if (::geteuid() != 0) return std::nullopt;
  const passwd* pw = ::getpwnam(job_user.c_str());
  if (pw == nullptr) return std::nullopt;
  return pw->pw_gid;
}

// Creates `path` (O_EXCL: an existing file, the operator's, is never replaced), mode 0640,
// and group `group` when given. False when it exists and `keep_existing`.
bool writeNew(const std::string& path, const std::string& text, std::optional<gid_t> group,
              bool keep_existing = false) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640));
  if (!fd.valid()) {
    if (errno == EEXIST && keep_existing) return false;
    if (errno == EEXIST)
      fail(path + " exists; not overwritten (remove it, or use -o another)", kExitInvalid);
    fail("cannot create " + path + ": " + std::strerror(errno), kExitFailure);
  }
  // 0640 whatever the umask; the group before the content, so no one else ever reads it.
  if (group && ::fchown(fd.get(), 0, *group) != 0) {
    fail("cannot give " + path + " to its group: " + std::strerror(errno), kExitFailure);
  }
  if (::fchmod(fd.get(), 0640) != 0) {
    fail("cannot chmod " + path + ": " + std::strerror(errno), kExitFailure);
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write " + path + ": " + std::strerror(errno), kExitFailure);
    done += static_cast<size_t>(n);
  }
  return true;
}

// A token file others can read: named with its fix (serve would refuse it:
// doctor/credential_checks.h).
void warnAboutTokenFile(const std::string& path, const std::string& job_user) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  const passwd* owner = ::getpwnam(job_user.c_str());
  const bool others = (st.st_mode & 077) != 0;
  const bool not_owned = owner != nullptr && st.st_uid != owner->pw_uid;
  if (!others && !not_owned) return;
  std::cerr << "site init: the token file " << path << " must be " << job_user
            << "'s alone (serve refuses it otherwise): `chown " << job_user << ": " << path
            << " && chmod 0600 " << path << "`\n";
}

void runSiteInit(const SiteInitFlags& flags) {
  siteinit::DraftInputs inputs;
  inputs.slurm_url = flags.slurm_url;
  inputs.token_file = std::filesystem::absolute(flags.token_file).lexically_normal().string();
  inputs.staging_root = flags.staging_root;
  inputs.runtime = flags.runtime;
  inputs.per_user = flags.identity == "per_user";
  if (auto listen = api::parseListen(flags.listen, "--listen"); !listen) {
    fail(listen.error().message, kExitInvalid);
  }
  inputs.listen = flags.listen;
  if (flags.state_dir.empty() || flags.state_dir.front() != '/') {
    fail("--state-dir must be an absolute directory", kExitInvalid);
  }
  inputs.state_dir = std::filesystem::path(flags.state_dir).lexically_normal().string();
  if (inputs.state_dir.size() > 1 && inputs.state_dir.back() == '/') inputs.state_dir.pop_back();
  if (auto user = tokenUser(inputs.token_file)) {
    inputs.user = *user;
    inputs.user_source = "the token's sun claim: the user Slurm runs the jobs as";
  } else {
    inputs.user = processUser();
    inputs.user_source = "a guess: the user running `site init` (the token names none)";
  }

  catalog::SlurmSite site;
  site.url = inputs.slurm_url;
  site.user = inputs.user;
  site.token_file = inputs.token_file;
  auto client = slurm::SlurmRestClient::fromSite(site);
  if (!client) fail(client.error().message, kExitInvalid);
  auto nodes = (*client)->listNodes();
  if (!nodes) fail(nodes.error().describe(), exitCodeForRead(nodes.error()));
  auto partitions = (*client)->listPartitions();
  if (!partitions) fail(partitions.error().describe(), exitCodeForRead(partitions.error()));

  const std::string draft = siteinit::draftSiteYaml(inputs, *partitions, *nodes);
  if (!flags.output) {
    std::cout << draft;
    return;
  }
  const std::optional<gid_t> group = readerGroup(inputs.user);
  writeNew(*flags.output, draft, group);
  const std::string registry =
      (std::filesystem::path(*flags.output).parent_path() / "runtimes.yaml").string();
  const bool drafted_registry = writeNew(registry, siteinit::draftRegistryYaml(inputs), group,
                                         /*keep_existing=*/true);
  std::cerr << "site init: wrote " << *flags.output
            << (drafted_registry ? " and an empty " + registry : "; kept the existing " + registry)
            << (group ? " (mode 0640, group of " + inputs.user + ", who serve runs as)" : "")
            << ".\n";
  if (!group && ::geteuid() != 0 && processUser() != inputs.user) {
    std::cerr << "site init: serve runs as " << inputs.user << ": let it read both files "
              << "(`chgrp <its group> FILE && chmod 0640 FILE`).\n";
  }
  warnAboutTokenFile(inputs.token_file, inputs.user);
  std::cerr << "site init: next: read the draft (each guess says where it came from); list "
               "your images in "
            << registry << "; add users with `tuneplane token add USER --site " << *flags.output
            << "`; then `tuneplane doctor --site " << *flags.output << "`.\n";
}

}  // namespace

void addSiteCommand(CLI::App& app) {
  CLI::App* site = app.add_subcommand("site", "Set up a site file");
  site->require_subcommand(1);
  auto flags = std::make_shared<SiteInitFlags>();
  CLI::App* init = site->add_subcommand(
      "init",
      "Draft a site file from the cluster: asks slurmrestd (v0.0.45) for its nodes and\n"
      "partitions and writes one GPU series per (GRES type, GPUs per node, node features),\n"
      "the default partitions, a server: section and the flags' values, each guess commented\n"
      "with its source; with -o, an empty runtimes.yaml beside it. Never overwrites a file.\n"
      "Exit codes: 0 drafted; 2 a bad flag or the file exists; 4 the token was refused; 1\n"
      "slurmrestd unreachable or failing.");
  init->add_option("--slurm", flags->slurm_url, "slurmrestd's URL (http://, https://, unix:///)")
      ->required();
  init->add_option("--token-file", flags->token_file,
                   "A file holding a JWT for slurmrestd (what `scontrol token` prints)")
      ->required();
  init->add_option("--staging-root", flags->staging_root,
                   "The attempts' directory, shared by this host and the nodes (absolute)");
  init->add_option("--runtime", flags->runtime, "The container runtime: pyxis or apptainer")
      ->check(CLI::IsMember({"pyxis", "apptainer"}));
  init->add_option("--identity", flags->identity,
                   "slurm.identity: shared (default: every job as slurm.user) or per_user (every "
                   "job as its user; the token must be SlurmUser's)")
      ->check(CLI::IsMember({"shared", "per_user"}));
  init->add_option("--listen", flags->listen,
                   "server.listen: where serve listens (default: 127.0.0.1:8080, loopback)");
  init->add_option("--state-dir", flags->state_dir,
                   "Where serve keeps its database (default: /var/lib/tuneplane, the unit's "
                   "StateDirectory)");
  init->add_option("-o,--output", flags->output,
                   "Write the draft to this new file (default: stdout); an existing file is "
                   "never overwritten");
  init->callback([flags] { runSiteInit(*flags); });
}

}  // namespace tuneplane::cli
