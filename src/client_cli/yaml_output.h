// `-o yaml`: a JSON document printed as YAML, the same data in the same key order. Strings
// that YAML would read as something else (true, null, 12, 1.5, an empty string) are
// double-quoted; multi-line strings (a spec, a log) become literal blocks when they
// round-trip exactly, else double-quoted with escapes. Pure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tuneplane::cli {

// A YAML document ending in a newline.
std::string toYaml(const nlohmann::ordered_json& document);

}  // namespace tuneplane::cli
