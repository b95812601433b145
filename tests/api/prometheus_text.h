// Reading Prometheus' text format in tests: a sample's value by its exact series, the number
// of series, and the format's rules checked over a whole /metrics answer (every sample's
// family declared with # HELP and # TYPE before it, histogram samples only
// _bucket/_sum/_count).
#pragma once

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tuneplane::api::testing {

// The value of the sample whose series (name and labels, as written) is `series`.
inline std::optional<double> sampleValue(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nullopt;
}

// The number of series (sample lines) in an exposition.
inline std::size_t seriesCount(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::size_t count = 0;
  while (std::getline(in, line)) count += !line.empty() && line[0] != '#';
  return count;
}

// Every rule broken, one sentence each; empty when the text is well formed.
inline std::vector<std::string> expositionProblems(const std::string& text) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> type_of;
  std::map<std::string, bool> has_help;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0) {
      has_help[line.substr(7, line.find(' ', 7) - 7)] = true;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      type_of[name] = type;
      continue;
    }
    const std::string name = line.substr(0, line.find_first_of("{ "));
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (family.size() > s.size() && family.compare(family.size() - s.size(), s.size(), s) == 0 &&
          type_of.count(family.substr(0, family.size() - s.size()))) {
        family = family.substr(0, family.size() - s.size());
      }
    }
    if (!type_of.count(family)) problems.push_back(name + ": no # TYPE before it");
    if (!has_help.count(family)) problems.push_back(name + ": no # HELP before it");
    if (type_of.count(family) && type_of[family] == "histogram" && family == name) {
      problems.push_back(name + ": a histogram sample without _bucket/_sum/_count");
    }
  }
  return problems;
}

}  // namespace tuneplane::api::testing
