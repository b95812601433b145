// Printing helpers shared by the `tuneplane` commands: the output format flag, errors as
// lines ("field: message [code]") or as JSON ({"code","field","message","errors":[…]}),
// and the CLI11 exit convention (throw CLI::RuntimeError(code), see exit_codes.h).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tuneplane::cli {

enum class OutputFormat {
  kText,  // for people
  kJson,  // for scripts: one JSON document on stdout
  kYaml,  // for scripts and people: the same document as YAML (server verbs only)
};

// "text" or "json" (and "yaml" when `allow_yaml`); errors: "cli.invalid_output" (field
// "--output").
Result<OutputFormat> parseOutputFormat(const std::string& value, bool allow_yaml = false);

// One line per error, "field: message [code]".
void printErrorLines(std::ostream& out, const Errors& errors);

// {"code","field","message"} of the first error, plus "errors": [all of them].
// REQUIRES: !errors.empty().
nlohmann::json errorsToJson(const Errors& errors);

// Prints `errors` in `format` (text → `err` stream, json → `out` stream), then ends the
// command with `exit_code` by throwing CLI::RuntimeError.
[[noreturn]] void failWith(const Errors& errors, OutputFormat format, int exit_code,
                           std::ostream& out, std::ostream& err);

// A required option CLI11 does not enforce (so its absence exits 2, not CLI11's 106).
Result<std::string> requireOption(const std::optional<std::string>& value,
                                  const std::string& option);

}  // namespace tuneplane::cli
