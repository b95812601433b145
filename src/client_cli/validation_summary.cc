// See validation_summary.h.
#include "client_cli/validation_summary.h"

#include <ostream>
#include <string>

#include <fmt/format.h>

#include "client_cli/json_members.h"

namespace tuneplane::cli {
namespace {

// Which time limit applies and where it came from (launch::TimeLimitSource's names).
std::string timeLimitText(const client::Json& limit) {
  const std::string source = stringOf(limit, "source");
  const std::string minutes = fmt::format("{} min", integerOf(limit, "minutes"));
  if (source == "spec") return minutes + " (from spec.resources.time_limit)";
  if (source == "site_default") {
    return minutes + " (the site's default_time_limit; the spec sets none)";
  }
  return "the partition's default (neither the spec nor the site sets one; none is sent)";
}

}  // namespace

void printValidationSummary(std::ostream& out, const client::Json& summary) {
  out << fmt::format("valid: {} ({})\n", stringOf(summary, "job_name"),
                     stringOf(summary, "framework"));
  if (const auto artifact = summary.find("artifact"); artifact != summary.end()) {
    out << fmt::format("  runtime: {}, {} (sha256 verified)\n",
                       stringOf(summary, "container_runtime"), stringOf(*artifact, "path"));
  }
  if (const auto limit = summary.find("time_limit"); limit != summary.end()) {
    out << "  time limit: " << timeLimitText(*limit) << "\n";
  }
  const auto components = summary.find("components");
  if (components == summary.end() || !components->is_array()) return;
  for (std::size_t i = 0; i < components->size(); ++i) {
    const client::Json& c = (*components)[i];
    out << fmt::format(
        "  component {}: pool {}, {} node(s) x {} GPU(s), {} CPU(s), {} MiB, partition {}", i,
        stringOf(c, "pool"), integerOf(c, "nodes"), integerOf(c, "gpus_per_node"),
        integerOf(c, "cpus_per_node"), integerOf(c, "memory_mb"), stringOf(c, "partition"));
    if (const std::string constraint = stringOf(c, "constraint"); !constraint.empty()) {
      out << ", constraint " << constraint;
    }
    out << "\n";
  }
}

}  // namespace tuneplane::cli
