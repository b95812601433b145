#include "cli/run_app.h"

#include <algorithm>

#include "cli/commands.h"

namespace tuneplane::cli {

int runApp(CLI::App& app, std::vector<std::string> args, std::ostream& out, std::ostream& err) {
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own outcome (see commands.h)
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other usage error is bad input: exit 2, so
    // scripts see the same code for a bad flag as for a bad spec.
    const int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitInvalid;
  }
  return kExitOk;
}

}  // namespace tuneplane::cli
