#include "client_cli/table.h"

#include <algorithm>

namespace tuneplane::cli {
namespace {

// Characters, not bytes: UTF-8 continuation bytes (10xxxxxx) do not start one.
size_t width(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string oneLine(std::string text) {
  for (char& c : text) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

std::string ellipsize(const std::string& text, size_t max_chars) {
  if (width(text) <= max_chars || max_chars == 0) return text;
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars - 1) return text.substr(0, i) + "…";
    ++chars;
  }
  return text;
}

std::string Table::render(bool aligned, const std::string& indent) const {
  std::vector<std::vector<std::string>> lines;
  lines.push_back(header_);
  for (const auto& row : rows_) lines.push_back(row);
  for (auto& line : lines) {
    for (auto& cell : line) cell = oneLine(cell);
  }
  std::vector<size_t> widths(header_.size(), 0);
  for (const auto& line : lines) {
    for (size_t i = 0; i < line.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], width(line[i]));
    }
  }
  std::string out;
  for (const auto& line : lines) {
    out += indent;
    for (size_t i = 0; i < line.size(); ++i) {
      const bool last = i + 1 == line.size();
      out += line[i];
      if (last) break;
      if (aligned) {
        out.append(widths[i] - width(line[i]) + 2, ' ');
      } else {
        out += '\t';
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace tuneplane::cli
