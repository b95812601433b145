#include "doctor/gres.h"

#include <cctype>

namespace tuneplane::doctor {
namespace {

// Splits on `sep` outside parentheses ("gpu:a:2(S:0,1),b:1" has two entries).
std::vector<std::string_view> splitTop(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && depth > 0) --depth;
    if (text[i] == sep && depth == 0) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(text.substr(start));
  return out;
}

bool allDigits(std::string_view s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// "4", "4K", "2M", "1G": Slurm scales counts of non-GPU GRES (bandwidth, …) with suffixes.
bool parseCount(std::string_view s, int64_t* out) {
  int64_t scale = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K':
      case 'k':
        scale = 1024;
        break;
      case 'M':
      case 'm':
        scale = 1024 * 1024;
        break;
      case 'G':
      case 'g':
        scale = int64_t{1024} * 1024 * 1024;
        break;
      default:
        break;
    }
    if (scale != 1) s.remove_suffix(1);
  }
  if (!allDigits(s)) return false;
  *out = std::stoll(std::string(s)) * scale;
  return true;
}

}  // namespace

std::vector<GresEntry> parseGres(std::string_view text) {
  std::vector<GresEntry> out;
  if (text.empty() || text == "(null)") return out;
  for (std::string_view item : splitTop(text, ',')) {
    if (auto paren = item.find('('); paren != std::string_view::npos) item = item.substr(0, paren);
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (size_t i = 0; i <= item.size(); ++i) {
      if (i == item.size() || item[i] == ':') {
        parts.push_back(item.substr(start, i - start));
        start = i + 1;
      }
    }
    if (parts.empty() || parts[0].empty()) continue;
    GresEntry entry;
    entry.name = std::string(parts[0]);
    if (entry.name.rfind("gres/", 0) == 0) entry.name.erase(0, 5);
    if (parts.size() == 2) {
      // "gpu:2" is a count; "gpu:h100" a type with one unit.
      if (!parseCount(parts[1], &entry.count)) entry.type = std::string(parts[1]);
    } else if (parts.size() >= 3) {
      entry.type = std::string(parts[1]);
      if (!parseCount(parts[2], &entry.count)) entry.count = 1;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

int64_t gpusOfType(const std::vector<GresEntry>& gres, const std::string& type) {
  int64_t total = 0;
  for (const auto& g : gres) {
    if (g.name != "gpu") continue;
    if (!type.empty() && g.type != type) continue;
    total += g.count;
  }
  return total;
}

}  // namespace tuneplane::doctor
