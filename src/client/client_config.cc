#include "client/client_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "spec/yaml_reader.h"

namespace tuneplane::client {
namespace {

constexpr std::string_view kConfigRelative = "tuneplane/config.yaml";

std::optional<std::string> nonEmpty(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::optional<std::string> nonEmpty(const std::optional<std::string>& value) {
  if (!value || value->empty()) return std::nullopt;
  return value;
}

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::string dirOf(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

// A file read through one descriptor, with the fstat of that descriptor, so the permission
// check and the read see the same file.
struct OpenedFile {
  bool exists = true;
  struct stat st {};
  std::string content;
};

Result<OpenedFile> readWithStat(const std::string& path, std::string_view code,
                                const std::string& field) {
  OpenedFile file;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) {
      file.exists = false;
      return file;
    }
    return fail(std::string(code), field,
                fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  }
  const int saved = [&] {
    if (::fstat(fd, &file.st) != 0) return errno;
    if (!S_ISREG(file.st.st_mode)) return EINVAL;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno;
      if (n == 0) return 0;
      file.content.append(buffer, static_cast<size_t>(n));
      if (file.content.size() > (1u << 20)) return EFBIG;  // a config file is small
    }
  }();
  ::close(fd);
  if (saved == EINVAL) {
    return fail(std::string(code), field, fmt::format("'{}' is not a regular file", path));
  }
  if (saved != 0) {
    return fail(std::string(code), field,
                fmt::format("cannot read '{}': {}", path, std::strerror(saved)));
  }
  return file;
}

// ssh's rule for private files: owned by the user (or root), no access for group or others.
// `what` names the file in the message ("config file", "token file").
std::optional<Error> privateFileProblem(const std::string& path, const struct stat& st,
                                        std::string_view what, const std::string& field) {
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return Error{"config.insecure_permissions", field,
                 fmt::format("the {} '{}' holds a token but is owned by uid {}, not by you: "
                             "refusing to use it",
                             what, path, st.st_uid)};
  }
  if ((st.st_mode & 0077) != 0) {
    return Error{"config.insecure_permissions", field,
                 fmt::format("the {} '{}' holds a token but its group or others can access it "
                             "(mode {:04o}): refusing to use it; run: chmod 600 '{}'",
                             what, path, st.st_mode & 07777, path)};
  }
  return std::nullopt;
}

bool validServerUrl(const std::string& url) {
  std::string lower = url;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.starts_with("unix:///")) return true;
  for (std::string_view scheme : {"http://", "https://"}) {
    if (!lower.starts_with(scheme)) continue;
    const std::string_view rest = std::string_view(url).substr(scheme.size());
    const std::string_view authority = rest.substr(0, rest.find('/'));
    // user:password@host would put a credential where error messages print the URL.
    return !authority.empty() && authority.find('@') == std::string_view::npos;
  }
  return false;
}

struct FileSettings {
  std::optional<std::string> server;
  std::optional<std::string> token;
  std::optional<std::string> token_file;  // resolved to a path
};

Checked<FileSettings> parseConfig(const std::string& path, const std::string& text,
                                  const ClientEnvironment& env) {
  spec::YamlReader reader("config");
  FileSettings settings;
  auto root = reader.parseRoot(text);
  if (root) {
    using R = spec::YamlReader;
    if (reader.checkMap(*root, "", {"server", "token", "token_file"})) {
      settings.server = reader.optStr(*root, "server", "");
      if (R::present(R::get(*root, "token"))) {
        settings.token = reader.str(R::get(*root, "token"), "token", spec::Text::kAnyScalar);
      }
      settings.token_file = reader.optStr(*root, "token_file", "");
      if (settings.token && settings.token_file) {
        reader.report("conflicting_fields", "token_file",
                      "give at most one of token and token_file, not both");
      }
    }
  }
  if (reader.hasErrors()) {
    Errors errors = reader.takeErrors();
    for (Error& e : errors) {
      // Name the file: the user may not know which config was read.
      e.message = fmt::format("{} (in {})", e.message, path);
      if (e.field.empty()) e.field = "config";
    }
    return failAll(std::move(errors));
  }
  if (settings.token_file) {
    std::string& file = *settings.token_file;
    if (file.starts_with("~/") && env.home) {
      file = *env.home + file.substr(1);
    } else if (!file.starts_with("/")) {
      file = dirOf(path) + "/" + file;
    }
  }
  return settings;
}

}  // namespace

ClientEnvironment ClientEnvironment::fromProcess() {
  return {nonEmpty(std::getenv(kServerEnv)), nonEmpty(std::getenv(kTokenEnv)),
          nonEmpty(std::getenv("XDG_CONFIG_HOME")), nonEmpty(std::getenv("HOME")),
          nonEmpty(std::getenv(kCaFileEnv))};
}

std::optional<std::string> configFilePath(const ClientEnvironment& env) {
  if (const auto xdg = nonEmpty(env.xdg_config_home); xdg && xdg->starts_with("/")) {
    return *xdg + "/" + std::string(kConfigRelative);
  }
  if (const auto home = nonEmpty(env.home)) {
    return *home + "/.config/" + std::string(kConfigRelative);
  }
  return std::nullopt;
}

Checked<ClientConfig> resolveClientConfig(const ClientFlags& flags, const ClientEnvironment& env) {
  ClientConfig config;
  FileSettings file;
  Errors errors;
  if (const auto path = configFilePath(env)) {
    auto read = readWithStat(*path, "config.unreadable", "config");
    if (!read) return failAll({read.error()});
    if (read->exists) {
      config.config_file = *path;
      auto parsed = parseConfig(*path, read->content, env);
      if (!parsed) return failAll(parsed.error());
      file = std::move(*parsed);
      // Writable by others: they could redirect `server:` and collect whatever token is sent.
      if ((read->st.st_mode & 0022) != 0) {
        errors.push_back({"config.insecure_permissions", "config",
                          fmt::format("the config file '{}' can be written by its group or "
                                      "others (mode {:04o}): refusing to use it; run: chmod "
                                      "600 '{}'",
                                      *path, read->st.st_mode & 07777, *path)});
      } else if (file.token) {
        if (auto problem = privateFileProblem(*path, read->st, "config file", "token")) {
          errors.push_back(*problem);
        }
      }
    }
  }

  if (const auto flag = nonEmpty(flags.server)) {
    config.server = *flag;
    config.server_source = "--server";
  } else if (const auto value = nonEmpty(env.server)) {
    config.server = *value;
    config.server_source = kServerEnv;
  } else if (const auto value = nonEmpty(file.server)) {
    config.server = *value;
    config.server_source = *config.config_file;
  }
  while (config.server.size() > 1 && config.server.back() == '/') config.server.pop_back();
  if (config.server.empty()) {
    errors.push_back(
        {kErrNoServer, "--server",
         fmt::format("no server: pass --server URL, set {}, or write 'server: URL' "
                     "in {}",
                     kServerEnv,
                     configFilePath(env).value_or("~/.config/" + std::string(kConfigRelative)))});
  } else if (!validServerUrl(config.server)) {
    errors.push_back({"cli.invalid_server", config.server_source,
                      fmt::format("the server URL '{}' must start with http://, https:// or "
                                  "unix:///, and carry no user:password@",
                                  config.server)});
  }

  if (const auto flag = nonEmpty(flags.token)) {
    config.token = *flag;
    config.token_source = "--token";
  } else if (const auto value = nonEmpty(env.token)) {
    config.token = *value;
    config.token_source = kTokenEnv;
  } else if (file.token) {
    config.token = trimmed(*file.token);
    config.token_source = *config.config_file;
    if (config.token->empty()) {
      errors.push_back({"config.empty_token", "token",
                        fmt::format("'token:' in {} is empty", *config.config_file)});
    }
  } else if (file.token_file) {
    const std::string& path = *file.token_file;
    auto read = readWithStat(path, "config.token_file_unreadable", "token_file");
    if (!read) {
      errors.push_back(read.error());
    } else if (!read->exists) {
      errors.push_back({"config.token_file_unreadable", "token_file",
                        fmt::format("the token file '{}' (token_file in {}) does not exist", path,
                                    *config.config_file)});
    } else if (auto problem = privateFileProblem(path, read->st, "token file", "token_file")) {
      errors.push_back(*problem);
    } else {
      config.token = trimmed(read->content);
      config.token_source = "token file " + path;
      if (config.token->empty()) {
        errors.push_back({"config.empty_token", "token_file",
                          fmt::format("the token file '{}' is empty", path)});
      }
    }
  }
  config.ca_file = nonEmpty(env.ca_file);
  if (!errors.empty()) return failAll(std::move(errors));
  return config;
}

}  // namespace tuneplane::client
