#include "slurm/hostlist.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace tuneplane::slurm {
namespace {

// Top-level items of `list`: split on commas outside brackets.
std::vector<std::string_view> items(std::string_view list) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      if (i > start) out.push_back(list.substr(start, i - start));
      start = i + 1;
    } else if (list[i] == '[') {
      ++depth;
    } else if (list[i] == ']' && depth > 0) {
      --depth;
    }
  }
  return out;
}

bool number(std::string_view text, long long& value) {
  if (text.empty() || text.size() > 12) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value >= 0;
}

std::string padded(long long value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

}  // namespace

std::vector<std::string> expandHostlist(std::string_view list) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](std::string name) {
    if (out.size() < kMaxHostlistNodes && seen.insert(name).second) out.push_back(std::move(name));
  };
  for (std::string_view item : items(list)) {
    const std::size_t open = item.find('[');
    const std::size_t close = item.find(']', open == std::string_view::npos ? 0 : open);
    if (open == std::string_view::npos || close == std::string_view::npos) {
      add(std::string(item));
      continue;
    }
    const std::string_view prefix = item.substr(0, open);
    const std::string_view suffix = item.substr(close + 1);
    const std::string_view ranges = item.substr(open + 1, close - open - 1);
    for (std::string_view range : items(ranges)) {
      const std::size_t dash = range.find('-');
      long long first = 0, last = 0;
      const std::string_view from = range.substr(0, dash);
      const std::string_view to = dash == std::string_view::npos ? from : range.substr(dash + 1);
      if (!number(from, first) || !number(to, last) || last < first) {
        add(std::string(item));  // not a range Slurm would write: keep it whole
        break;
      }
      for (long long n = first; n <= last && out.size() < kMaxHostlistNodes; ++n) {
        add(std::string(prefix) + padded(n, from.size()) + std::string(suffix));
      }
    }
  }
  return out;
}

}  // namespace tuneplane::slurm
