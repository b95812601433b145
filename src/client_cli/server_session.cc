#include "client_cli/server_session.h"

#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "client_cli/exit_codes.h"
#include "client_cli/interrupt.h"
#include "client_cli/yaml_output.h"
#include "spec/names.h"

namespace tuneplane::cli {

using client::ApiError;
using client::FailureKind;

void addServerFlags(CLI::App& cmd, ServerFlags& flags) {
  cmd.add_option("--server", flags.server,
                 "TunePlane server URL (default: $TUNEPLANE_SERVER, else 'server:' in "
                 "~/.config/tuneplane/config.yaml)");
  cmd.add_option("--token", flags.token,
                 "Bearer token (default: $TUNEPLANE_TOKEN, else 'token:'/'token_file:' in the "
                 "config file). Visible to other users in the process list: prefer those");
  cmd.add_option("--output,-o", flags.output, "Output format: text, json or yaml");
}

void addWaitFlags(CLI::App& cmd, WaitFlags& flags) {
  cmd.add_option("--timeout", flags.timeout,
                 fmt::format("Stop waiting after this long (e.g. 90s, 30m, 2h) and exit {}; the "
                             "job keeps running",
                             kExitTimeout));
  cmd.add_option("--poll-interval", flags.poll_interval,
                 "Time between polls (default 2s; kept within 100ms..1m)");
}

Result<client::PollOptions> pollOptions(const WaitFlags& flags) {
  client::PollOptions options;
  if (flags.timeout) {
    const auto timeout = spec::parseDuration(*flags.timeout);
    if (!timeout || timeout->count() <= 0) {
      return fail("cli.invalid_timeout", "--timeout",
                  fmt::format("'{}' is not a duration such as 90s, 30m or 1h30m", *flags.timeout));
    }
    options.timeout = *timeout;
  }
  if (flags.poll_interval) {
    const auto interval = spec::parseDuration(*flags.poll_interval);
    if (!interval) {
      return fail(
          "cli.invalid_poll_interval", "--poll-interval",
          fmt::format("'{}' is not a duration such as 500ms, 2s or 1m", *flags.poll_interval));
    }
    options.interval = client::clampPollInterval(*interval);
  }
  return options;
}

CommandIo& processIo() {
  static SystemClock clock;
  static CommandIo io{std::cout,
                      std::cerr,
                      std::cin,
                      ::isatty(STDOUT_FILENO) == 1,
                      clock,
                      interruptSleeper(),
                      client::ClientEnvironment::fromProcess(),
                      {},
                      ::isatty(STDERR_FILENO) == 1};
  return io;
}

int exitCodeFor(const ApiError& error, bool changes) {
  switch (error.kind) {
    case FailureKind::kNotSent:
    case FailureKind::kBadResponse:
      return kExitServer;
    case FailureKind::kNoAnswer:
      return changes ? kExitUnknownOutcome : kExitServer;
    case FailureKind::kHttp:
      if (error.http_status == 401 || error.http_status == 403) return kExitAuth;
      if (error.http_status == 404) return kExitNotFound;
      if (error.http_status >= 400 && error.http_status < 500 && error.http_status != 429) {
        return kExitInvalid;
      }
      return kExitServer;
  }
  return kExitServer;
}

ServerSession::ServerSession(CommandIo& io, OutputFormat format, client::ClientConfig config,
                             std::unique_ptr<client::ApiClient> api)
    : io_(io), format_(format), config_(std::move(config)), api_(std::move(api)) {}

tl::expected<ServerSession, int> ServerSession::open(const ServerFlags& flags, CommandIo& io) {
  auto format = parseOutputFormat(flags.output, /*allow_yaml=*/true);
  if (!format) {
    printErrorLines(io.err, {format.error()});
    return tl::unexpected(kExitInvalid);
  }
  auto config = client::resolveClientConfig({flags.server, flags.token}, io.env);
  auto print = [&](const Errors& errors) {
    ServerSession bare(io, *format, {}, nullptr);
    return tl::unexpected(bare.fail(errors, kExitInvalid));
  };
  if (!config) return print(config.error());
  auto api = client::ApiClient::connect(*config, io.timeouts);
  if (!api) return print({api.error()});
  return ServerSession(io, *format, std::move(*config), std::move(*api));
}

void ServerSession::printDocument(const client::Json& document) {
  if (format_ == OutputFormat::kYaml) {
    io_.out << toYaml(document);
  } else {
    // Bytes that are not UTF-8 (a local path, a name from argv) as U+FFFD, never a throw.
    io_.out << document.dump(2, ' ', false, client::Json::error_handler_t::replace) << '\n';
  }
  io_.out.flush();
}

void ServerSession::note(const std::string& line) {
  if (format_ != OutputFormat::kText) return;
  io_.err << line << '\n';
  io_.err.flush();
}

int ServerSession::fail(const Errors& errors, int exit_code) {
  if (format_ == OutputFormat::kText || errors.empty()) {
    printErrorLines(io_.err, errors);
    io_.err.flush();
  } else {
    const nlohmann::json json = errorsToJson(errors);
    printDocument(client::Json(json));
  }
  return exit_code;
}

int ServerSession::fail(const ApiError& error, bool changes) {
  const int code = fail(error.errors, exitCodeFor(error, changes));
  // Hints name where the server and the token came from, never the token.
  if (error.kind == FailureKind::kHttp && error.http_status == 401) {
    note(config_.token
             ? fmt::format("hint: the server refused the token from {}", config_.token_source)
             : fmt::format("hint: no token was sent: pass --token, set {}, or put token_file: "
                           "in {}",
                           client::kTokenEnv,
                           client::configFilePath(io_.env).value_or("the config file")));
  } else if (error.kind == FailureKind::kNotSent || error.kind == FailureKind::kBadResponse) {
    note(fmt::format("hint: the server is {} (from {})", config_.server, config_.server_source));
  } else if (code == kExitUnknownOutcome) {
    note("hint: the request may have been carried out; `tuneplane get` shows the jobs");
  }
  return code;
}

}  // namespace tuneplane::cli
