// Printing helpers shared by the `tuneplane` commands.
#include "client_cli/output.h"

#include <ostream>

#include <CLI/CLI.hpp>

namespace tuneplane::cli {

Result<OutputFormat> parseOutputFormat(const std::string& value, bool allow_yaml) {
  if (value == "text") return OutputFormat::kText;
  if (value == "json") return OutputFormat::kJson;
  if (allow_yaml && value == "yaml") return OutputFormat::kYaml;
  return fail("cli.invalid_output", "--output",
              std::string(allow_yaml ? "--output must be 'text', 'json' or 'yaml', not '"
                                     : "--output must be 'text' or 'json', not '") +
                  value + "'");
}

void printErrorLines(std::ostream& out, const Errors& errors) {
  for (const Error& error : errors) out << error.describe() << '\n';
}

nlohmann::json errorsToJson(const Errors& errors) {
  nlohmann::json all = nlohmann::json::array();
  for (const Error& e : errors) {
    all.push_back({{"code", e.code}, {"field", e.field}, {"message", e.message}});
  }
  nlohmann::json out = all.at(0);
  out["errors"] = std::move(all);
  return out;
}

void failWith(const Errors& errors, OutputFormat format, int exit_code, std::ostream& out,
              std::ostream& err) {
  if (format == OutputFormat::kJson && !errors.empty()) {
    out << errorsToJson(errors).dump(2) << '\n';
  } else {
    printErrorLines(err, errors);
  }
  out.flush();
  err.flush();
  throw CLI::RuntimeError(exit_code);
}

Result<std::string> requireOption(const std::optional<std::string>& value,
                                  const std::string& option) {
  if (!value || value->empty()) {
    return fail("cli.missing_option", option, option + " is required");
  }
  return *value;
}

}  // namespace tuneplane::cli
