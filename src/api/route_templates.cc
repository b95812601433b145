// See route_templates.h.
#include "api/route_templates.h"

namespace tuneplane::api {

bool matchRoute(std::string_view route, std::string_view path, std::vector<std::string>& captures) {
  captures.clear();
  std::size_t r = 0;
  std::size_t p = 0;
  while (r < route.size()) {
    if (route[r] != '{') {
      if (p >= path.size() || path[p] != route[r]) return false;
      ++r;
      ++p;
      continue;
    }
    const std::size_t close = route.find('}', r);
    if (close == std::string_view::npos) return false;  // not a template this table holds
    const std::string_view name = route.substr(r + 1, close - r - 1);
    r = close + 1;
    const bool rest = name == "path" && r == route.size();
    const std::size_t end = rest ? path.size() : std::min(path.find('/', p), path.size());
    const std::string_view part = path.substr(p, end - p);
    if (part.empty()) return false;
    if (name == "n" && part.find_first_not_of("0123456789") != std::string_view::npos) {
      return false;
    }
    captures.emplace_back(part);
    p = end;
  }
  return p == path.size();
}

}  // namespace tuneplane::api
