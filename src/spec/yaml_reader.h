// Reads a parsed YAML (or JSON) tree into plain values while collecting every structural
// problem — unknown or duplicate keys, wrong types, missing fields, NUL bytes — each with
// its dotted field path and a stable code "<prefix>.<kind>" (see spec/error_codes.h for the
// kinds). Shared by the spec, site and registry parsers so all three report alike.
// Not thread-safe: one reader per parse. Never throws.
#pragma once

#include <chrono>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/result.h"
#include "spec/document_measure.h"

namespace tuneplane::spec {

// How strictly a scalar must be a string.
enum class Text {
  kString,     // names, ids, paths: an unquoted 12, true or 1.5 is a wrong_type
  kAnyScalar,  // argv entries, env and label values: any scalar, kept as written
};

class YamlReader {
 public:
  // `prefix` is "spec", "site" or "registry"; `limits` bound the document parseRoot loads.
  explicit YamlReader(std::string prefix, DocumentLimits limits = kOperatorDocumentLimits)
      : prefix_(std::move(prefix)), limits_(limits) {}

  // Parses `text`; on a syntax error, a document over the limits (measured with its aliases
  // expanded before anything is built: document_too_large, too_many_values), an empty
  // document or a root that is not a map, reports it and returns nullopt.
  std::optional<YAML::Node> parseRoot(std::string_view text);

  // Records a problem; the code is prefix + "." + kind.
  void report(std::string_view kind, std::string field, std::string message);
  bool hasErrors() const { return !errors_.empty(); }
  Errors takeErrors() { return std::move(errors_); }

  static std::string child(const std::string& path, std::string_view key);
  static std::string index(const std::string& path, std::size_t i);

  // A value is present when the key exists and is not null (`key: ~` means unset).
  static bool present(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }
  // Lookup without inserting (operator[] on a non-const node would insert).
  static YAML::Node get(const YAML::Node& map, std::string_view key);

  // `node` is a map whose keys are all strings in `allowed`; reports unknown and duplicate
  // keys. Returns false (after reporting wrong_type) when it is not a map at all.
  bool checkMap(const YAML::Node& node, const std::string& path,
                std::initializer_list<std::string_view> allowed);
  // Same, for maps whose keys are free (env, labels): only duplicates are reported.
  bool checkMap(const YAML::Node& node, const std::string& path);

  // Reports missing_field when `map[key]` is absent or null; returns the node either way.
  YAML::Node require(const YAML::Node& map, std::string_view key, const std::string& path);

  // Typed reads of a present node; each reports and returns nullopt on a bad value.
  std::optional<std::string> str(const YAML::Node& node, const std::string& path,
                                 Text text = Text::kString);
  std::optional<long long> integer(const YAML::Node& node, const std::string& path);
  std::optional<int> int32(const YAML::Node& node, const std::string& path);
  std::optional<bool> boolean(const YAML::Node& node, const std::string& path);
  // A Slurm time limit: a duration that is a positive whole number of minutes ("90m", "2h",
  // "1d", "1h30m"); anything else is an invalid_duration. The spec's time_limit and the
  // site's default_time_limit both read through here, so they accept the same text.
  std::optional<std::chrono::minutes> timeLimit(const YAML::Node& node, const std::string& path);
  std::optional<std::vector<std::string>> strList(const YAML::Node& node, const std::string& path,
                                                  Text text = Text::kString);
  // A map of string keys to scalar values (kept in key order).
  std::optional<std::map<std::string, std::string>> strMap(const YAML::Node& node,
                                                           const std::string& path,
                                                           Text values = Text::kAnyScalar);

  // Convenience for optional members: absent/null → nullopt without a report.
  std::optional<std::string> optStr(const YAML::Node& map, std::string_view key,
                                    const std::string& path);
  std::optional<int> optInt(const YAML::Node& map, std::string_view key, const std::string& path);

 private:
  std::string prefix_;
  DocumentLimits limits_;
  Errors errors_;
};

}  // namespace tuneplane::spec
