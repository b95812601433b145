// Where the CLI finds its server and token: flags override the environment, which overrides
// the config file ($XDG_CONFIG_HOME/tuneplane/config.yaml, else ~/.config/tuneplane/...).
// Each of `server` and the token is resolved on its own, so a config file can name the server
// while TUNEPLANE_TOKEN supplies the token.
//
// The config file (YAML): `server: URL`, and at most one of `token: TOKEN` and
// `token_file: PATH` (relative to the config file's directory; `~/` is the home directory).
// Like ssh with its keys, a file that holds a credential must be private: a config file with
// `token:`, or a token file, that its group or others can access (mode & 0077), or that
// another user owns, is refused — a clear error, not a warning — as is a config file others
// can write (they could point `server:` at their own host and collect the token).
//
// The token never appears in an Error: messages name where it came from, never its value.
// Pure apart from reading the config and token files; the environment is passed in.
#pragma once

#include <optional>
#include <string>

#include "common/result.h"

namespace tuneplane::client {

inline constexpr const char* kServerEnv = "TUNEPLANE_SERVER";
inline constexpr const char* kTokenEnv = "TUNEPLANE_TOKEN";
// A PEM file of CA certificates an https:// server is verified against instead of the
// system's store (a site CA, or a self-signed server certificate).
inline constexpr const char* kCaFileEnv = "TUNEPLANE_CA_FILE";
// The error when neither --server, $TUNEPLANE_SERVER nor the config file names a server
// (`tuneplane validate` then checks offline, against a site file).
inline constexpr const char* kErrNoServer = "cli.no_server";

// The environment the resolution reads, passed in so tests need no setenv.
struct ClientEnvironment {
  std::optional<std::string> server;           // TUNEPLANE_SERVER
  std::optional<std::string> token;            // TUNEPLANE_TOKEN
  std::optional<std::string> xdg_config_home;  // XDG_CONFIG_HOME
  std::optional<std::string> home;             // HOME
  std::optional<std::string> ca_file;          // TUNEPLANE_CA_FILE
  static ClientEnvironment fromProcess();      // reads getenv; empty values count as unset
};

struct ClientFlags {
  std::optional<std::string> server;  // --server
  std::optional<std::string> token;   // --token
};

struct ClientConfig {
  std::string server;                      // http://, https:// or unix:// URL
  std::optional<std::string> token;        // nullopt: send no Authorization header
  std::string server_source;               // "--server", "TUNEPLANE_SERVER" or the config file
  std::string token_source;                // "--token", "TUNEPLANE_TOKEN", the config or token file
  std::optional<std::string> config_file;  // the file that was read, if one existed
  std::optional<std::string> ca_file;      // TUNEPLANE_CA_FILE; nullopt: the system's store
};

// $XDG_CONFIG_HOME/tuneplane/config.yaml if XDG_CONFIG_HOME is an absolute path (the XDG
// spec ignores a relative one), else $HOME/.config/tuneplane/config.yaml; nullopt without
// either.
std::optional<std::string> configFilePath(const ClientEnvironment& env);

// Resolves the server and the token. A config file that does not exist is not an error.
// Errors (all reported at once where they can be): "config.unreadable", "config.invalid_yaml"
// and the YAML reader's "config.*" kinds (unknown_field, wrong_type, …),
// "config.conflicting_fields" (token and token_file), "config.insecure_permissions" (the
// config or token file; the message says which bits and the chmod that fixes it),
// "config.token_file_unreadable", "config.empty_token", "cli.no_server",
// "cli.invalid_server" (not http://, https:// or unix:///path).
Checked<ClientConfig> resolveClientConfig(const ClientFlags& flags, const ClientEnvironment& env);

}  // namespace tuneplane::client
