// `tuneplane store copy --from sqlite:PATH --to postgresql://… [--password-file F]`: moves a
// site's jobs, attempts and events from its SQLite file into an empty PostgreSQL database
// (store/store_copy.h does the work; this file only parses the flags and prints). The
// target's password comes from --password-file or libpq's PGPASSFILE / ~/.pgpass, never
// from the command line; the target is printed with any password in its URI masked.
// Exit codes: 0 copied; 2 a bad flag, a target that already holds jobs, or a source this
// TunePlane will not read (newer schema, damaged, another program's); 1 anything else
// (a database unreachable, a write that failed — nothing was copied).
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "client_cli/output.h"
#include "store/error_codes.h"
#include "store/open_store.h"
#include "store/store_copy.h"

namespace tuneplane::cli {
namespace {

struct StoreCopyFlags {
  std::optional<std::string> from;
  std::optional<std::string> to;
  std::optional<std::string> password_file;
  std::string output = "text";
};

int exitCodeFor(const Error& error) {
  const std::string& code = error.code;
  if (code == store::codes::kInvalid || code == store::codes::kTargetNotEmpty ||
      code == store::codes::kNewerVersion || code == store::codes::kNotTuneplane ||
      code == store::codes::kCorrupt) {
    return kExitInvalid;
  }
  return kExitFailure;
}

void runStoreCopy(const StoreCopyFlags& flags) {
  auto format = parseOutputFormat(flags.output);
  if (!format) failWith({format.error()}, OutputFormat::kText, kExitInvalid, std::cout, std::cerr);
  auto from = requireOption(flags.from, "--from");
  if (!from) failWith({from.error()}, *format, kExitInvalid, std::cout, std::cerr);
  auto to = requireOption(flags.to, "--to");
  if (!to) failWith({to.error()}, *format, kExitInvalid, std::cout, std::cerr);

  const std::string target = store::describeDb(*to);
  auto copied = store::copyStore({*from, *to, flags.password_file, "--password-file"});
  if (!copied)
    failWith({copied.error()}, *format, exitCodeFor(copied.error()), std::cout, std::cerr);

  if (*format == OutputFormat::kJson) {
    nlohmann::json out = {{"from", *from},
                          {"to", target},
                          {"jobs", copied->jobs},
                          {"attempts", copied->attempts},
                          {"components", copied->components},
                          {"events", copied->events}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "store copy: copied " << copied->jobs << " jobs (" << copied->attempts
              << " attempts, " << copied->components << " components, " << copied->events
              << " events) from " << *from << " to " << target << "\n";
  }
}

}  // namespace

void addStoreCommand(CLI::App& app) {
  CLI::App* group = app.add_subcommand("store", "Operate on a site's job store");
  group->require_subcommand(1);
  auto flags = std::make_shared<StoreCopyFlags>();
  CLI::App* copy = group->add_subcommand(
      "copy",
      "Copy a site's SQLite store into an empty PostgreSQL database: every job with its\n"
      "attempts, het components, events and cancel/abandon requests, exactly (ids, times,\n"
      "event order). One transaction: all of it or nothing. The source is only read; stop\n"
      "`serve` on it first. The leader lease is not copied.");
  copy->add_option("--from", flags->from, "The site's SQLite file: sqlite:PATH or PATH");
  copy->add_option("--to", flags->to,
                   "The empty PostgreSQL database: a postgresql:// URI without its password");
  copy->add_option("--password-file", flags->password_file,
                   "A file (mode 0600) holding the target's password (default: libpq's "
                   "PGPASSFILE or ~/.pgpass)");
  copy->add_option("--output,-o", flags->output, "Output format: text or json");
  copy->footer(
      "Exit codes: 0 copied; 2 a bad flag, a target that already holds jobs, or a source\n"
      "this TunePlane will not read (newer schema, damaged, not TunePlane's); 1 a database\n"
      "could not be reached or written (nothing was copied).");
  copy->callback([flags] { runStoreCopy(*flags); });
}

}  // namespace tuneplane::cli
