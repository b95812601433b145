// `tuneplane validate -f SPEC` against the configured server (POST /v1/validate): the spec
// judged exactly as `submit` would have it judged — this user's charge, the site file, the
// runtime registry and its hashes, all on the server — with nothing stored. So a user with
// only a token checks a spec without the operator's files (cli/validate_command.cc keeps the
// offline check behind --site). Errors print as the offline check prints them ("field:
// message [code]" on stderr, or the errors document with -o json): exit 2.
#include <fmt/format.h>

#include "client_cli/exit_codes.h"
#include "client_cli/server_commands.h"
#include "client_cli/validation_summary.h"
#include "common/input_file.h"

namespace tuneplane::cli {

int runValidateOnServer(const ValidateOnServerFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto spec = readInputFile(flags.file, "-f", "job spec", io.in);
  if (!spec) return session->fail({spec.error()}, kExitInvalid);
  auto summary = session->api().validateSpec(*spec);
  if (!summary) return session->fail(summary.error(), /*changes=*/false);
  if (session->format() != OutputFormat::kText) {
    session->printDocument(*summary);
    return kExitOk;
  }
  printValidationSummary(io.out, *summary);
  const client::ClientConfig& config = session->config();
  session->note(fmt::format("checked by {} (from {}); nothing was stored", config.server,
                            config.server_source));
  return kExitOk;
}

}  // namespace tuneplane::cli
