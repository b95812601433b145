// `tuneplane site init --slurm URL --token-file F [--staging-root DIR] [--runtime NAME]
// [-o FILE]`: GET /nodes/ and /partitions/ with the token, then the draft on stdout or in
// FILE — created, never overwritten. Exit codes (commands.h): 0 drafted; 2 a bad flag or
// FILE exists; 4 slurmrestd refused the token; 1 slurmrestd unreachable or failing.
#include <fcntl.h>
#include <pwd.h>
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

// Creates `path` (O_EXCL: an existing file, the operator's, is never replaced).
void writeNew(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640));
  if (!fd.valid()) {
    if (errno == EEXIST)
      fail(path + " exists; not overwritten (remove it, or use -o another)", kExitInvalid);
    fail("cannot create " + path + ": " + std::strerror(errno), kExitFailure);
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write " + path + ": " + std::strerror(errno), kExitFailure);
    done += static_cast<size_t>(n);
  }
}

void runSiteInit(const SiteInitFlags& flags) {
  siteinit::DraftInputs inputs;
  inputs.slurm_url = flags.slurm_url;
  inputs.token_file = std::filesystem::absolute(flags.token_file).lexically_normal().string();
  inputs.staging_root = flags.staging_root;
  inputs.runtime = flags.runtime;
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
  writeNew(*flags.output, draft);
  std::cerr << "site init: wrote " << *flags.output
            << "; check it, then run `tuneplane doctor --site " << *flags.output << "`\n";
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
      "the default partitions, and the flags' values, each guess commented with its source.\n"
      "Never overwrites a file. Exit codes: 0 drafted; 2 a bad flag or the file exists; 4 the\n"
      "token was refused; 1 slurmrestd unreachable or failing.");
  init->add_option("--slurm", flags->slurm_url, "slurmrestd's URL (http://, https://, unix:///)")
      ->required();
  init->add_option("--token-file", flags->token_file,
                   "A file holding a JWT for slurmrestd (what `scontrol token` prints)")
      ->required();
  init->add_option("--staging-root", flags->staging_root,
                   "The attempts' directory, shared by this host and the nodes (absolute)");
  init->add_option("--runtime", flags->runtime, "The container runtime: pyxis or apptainer")
      ->check(CLI::IsMember({"pyxis", "apptainer"}));
  init->add_option("-o,--output", flags->output,
                   "Write the draft to this new file (default: stdout); an existing file is "
                   "never overwritten");
  init->callback([flags] { runSiteInit(*flags); });
}

}  // namespace tuneplane::cli
