// The live suite's configuration: the TUNEPLANE_LIVE_* variables that a
// real test cluster's start-up prints (docs/developers.md, "Commands": make test-live). Every live
// test skips itself when they are unset. Thread-safe: reads the environment only.
#pragma once

#include <unistd.h>
#include <cstdlib>
#include <filesystem>

#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "support/subprocess.h"

namespace tuneplane::live {

inline constexpr const char* kSkipReason =
    "set TUNEPLANE_LIVE_SLURMRESTD, _USER, _TOKEN_FILE or _JWT_KEY_FILE, _SHARED_DIR and "
    "_SLURM_BIN to run against a real slurmrestd";

// A variable's value; nullopt when it is unset or empty.
inline std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

struct Live {
  std::string url, user, shared_dir, slurm_bin;
  std::optional<std::string> token_file, key_file;
  // slurm.api_version of every site the suite writes: TUNEPLANE_LIVE_API_VERSION, default
  // auto (the newest both sides speak: v0.0.44 on Slurm 25.11, v0.0.45 on 26.05).
  std::string api_version = "auto";
};

// The REST API version a client of `live` must end up speaking on a server of `release`:
// the one set, or for auto the newest the release serves (25.11 serves v0.0.44 alone).
inline std::string expectedApiVersion(const Live& live, const std::string& release) {
  if (live.api_version != "auto") return live.api_version;
  return release.rfind("25.", 0) == 0 ? "v0.0.44" : "v0.0.45";
}

// nullopt unless every variable the suite needs is set (a token file or a JWT key).
inline std::optional<Live> liveConfig() {
  auto url = env("TUNEPLANE_LIVE_SLURMRESTD");
  auto user = env("TUNEPLANE_LIVE_USER");
  auto shared = env("TUNEPLANE_LIVE_SHARED_DIR");
  auto bin = env("TUNEPLANE_LIVE_SLURM_BIN");
  auto token = env("TUNEPLANE_LIVE_TOKEN_FILE");
  auto key = env("TUNEPLANE_LIVE_JWT_KEY_FILE");
  if (!url || !user || !shared || !bin || (!token && !key)) return std::nullopt;
  return Live{
      *url, *user, *shared, *bin, token, key, env("TUNEPLANE_LIVE_API_VERSION").value_or("auto")};
}

// The slurm.conf of the test cluster, for scontrol: TUNEPLANE_LIVE_SLURM_CONF, or where
// testcluster/up.sh writes it (etc/ beside the token file, or the JWT key's folder: the
// cluster the other variables name), or else SLURM_CONF. A shell's SLURM_CONF comes last: it
// may name another cluster than the one under test. Empty when none exists.
inline std::string liveSlurmConf(const live::Live& live) {
  namespace fs = std::filesystem;
  if (auto named = env("TUNEPLANE_LIVE_SLURM_CONF")) return *named;
  std::vector<fs::path> guesses;
  if (live.token_file)
    guesses.push_back(fs::path(*live.token_file).parent_path() / "etc/slurm.conf");
  if (live.key_file) guesses.push_back(fs::path(*live.key_file).parent_path() / "slurm.conf");
  for (const auto& path : guesses) {
    if (fs::exists(path)) return path.string();
  }
  return env("SLURM_CONF").value_or("");
}

// One of the test cluster's commands (`scontrol`, `scancel`: args[0], from slurm_bin) run with
// its slurm.conf `conf` in our environment; its output captured under `scratch`.
inline test::ProcessResult runSlurmCommand(const Live& live, const std::string& conf,
                                           const std::vector<std::string>& args,
                                           const std::string& scratch) {
  std::vector<std::string> env;
  // Ours replaces any SLURM_CONF inherited (getenv takes the first of two).
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).rfind("SLURM_CONF=", 0) != 0) env.emplace_back(*e);
  }
  env.push_back("SLURM_CONF=" + conf);
  std::vector<std::string> argv = args;
  argv.front() = live.slurm_bin + "/" + argv.front();
  return test::runProcess(argv, {.scratch = scratch, .env = env});
}

}  // namespace tuneplane::live
