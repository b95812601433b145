// Columns for people and for pipes. Aligned (two spaces between columns, the last column
// unpadded) for a terminal; tab-separated for everything else, so `cut -f` and `awk -F'\t'`
// see one field per column whatever the values hold. Tabs and line breaks inside a value
// become spaces in both. Pure.
#pragma once

#include <string>
#include <vector>

namespace tuneplane::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  // REQUIRES: row.size() == header.size().
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Every line starts with `indent` and ends with '\n'.
  std::string render(bool aligned, const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// `text` cut to `max_chars` characters (UTF-8 aware), ending in "…" when cut.
std::string ellipsize(const std::string& text, size_t max_chars);

}  // namespace tuneplane::cli
