// The routes of the API server, in one table: every (method, path template) pair it answers;
// the router matches a request's path against the template itself (matchRoute). The route files
// (job_routes.cc, file_routes.cc, system_routes.cc, console_routes.cc) register their handlers by
// (method, template), and ApiServer::start refuses a registration that is not in the table and a
// table entry that has no handler, so the table is what the server serves. It is also the fixed set
// of the `route` label of /metrics, besides "unmatched" (no route matched) and "other" (anything
// else handed in): a label's values must come from a fixed set, or every new string a
// client sends makes a new series (issue 16). ApiFixture's TearDown fails any route test
// whose requests were counted as "other".
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::api {

struct RouteTemplate {
  std::string_view method;  // "GET" or "POST"
  std::string_view path;    // the template: "/v1/jobs/{id}"; the /metrics route label
};

inline constexpr std::array<RouteTemplate, 24> kRouteTable = {{
    {"POST", "/v1/jobs"},
    {"POST", "/v1/workdirs"},
    {"GET", "/v1/jobs"},
    {"GET", "/v1/jobs/{id}"},
    {"GET", "/v1/jobs/{id}/events"},
    {"POST", "/v1/jobs/{id}/cancel"},
    {"POST", "/v1/jobs/{id}/attempts/{n}/abandon"},
    {"GET", "/v1/jobs/{id}/logs"},
    {"GET", "/v1/jobs/{id}/files"},
    {"GET", "/v1/jobs/{id}/files/content"},
    {"POST", "/v1/validate"},
    {"POST", "/v1/playgrounds"},
    {"POST", "/v1/deployments"},
    {"GET", "/v1/capabilities"},
    {"GET", "/v1/doctor"},
    {"GET", "/v1/whoami"},
    {"GET", "/v1/usage"},
    {"GET", "/v1/openapi.json"},
    {"GET", "/healthz"},
    {"GET", "/readyz"},
    {"GET", "/metrics"},
    {"GET", "/"},
    {"GET", "/ui/"},
    {"GET", "/ui/{path}"},
}};

// Every route of the server (kRouteTable), for whoever enumerates the API.
inline std::span<const RouteTemplate> routeTable() {
  return kRouteTable;
}

// The table's entry for (method, path template), or nullptr.
constexpr const RouteTemplate* findRoute(std::string_view method, std::string_view path) {
  for (const auto& route : kRouteTable) {
    if (route.method == method && route.path == path) return &route;
  }
  return nullptr;
}

// Whether the decoded request path `path` fits the template `route`: its literal characters
// are equal; "{path}", the template's last part, stands for the rest of the path (one
// character or more, '/' included); "{n}" for one segment of digits; any other "{…}" for one
// segment (one character or more, no '/'). The parts that fit each "{…}", in order, go to
// `captures` (cleared first). No regular expression: a request is matched in one pass per
// route, with no allocation but the captures.
bool matchRoute(std::string_view route, std::string_view path, std::vector<std::string>& captures);

namespace detail {
constexpr std::size_t countDistinctPaths() {
  std::size_t n = 0;
  for (std::size_t i = 0; i < kRouteTable.size(); ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i; ++j) seen = seen || kRouteTable[j].path == kRouteTable[i].path;
    if (!seen) ++n;
  }
  return n;
}
}  // namespace detail

// The table's path templates, each once, in the table's order: the `route` label's values.
inline constexpr auto kRouteTemplates = [] {
  std::array<std::string_view, detail::countDistinctPaths()> paths{};
  std::size_t n = 0;
  for (const auto& route : kRouteTable) {
    bool seen = false;
    for (std::size_t j = 0; j < n; ++j) seen = seen || paths[j] == route.path;
    if (!seen) paths[n++] = route.path;
  }
  return paths;
}();

inline constexpr std::string_view kUnmatchedRoute = "unmatched";  // no route matched
inline constexpr std::string_view kOtherLabel = "other";          // outside the fixed set

// The HTTP methods counted by name (RFC 9110 §9 and PATCH); any other is "other".
inline constexpr std::array<std::string_view, 7> kCountedMethods = {
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};

}  // namespace tuneplane::api
