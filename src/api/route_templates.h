// The route templates the server registers (job_routes.cc, system_routes.cc,
// console_routes.cc), in one table: the only values the `route` label of /metrics takes,
// besides "unmatched" (no route matched) and "other" (anything else handed in). A label's
// values must come from a fixed set, or every new string a client sends makes a new series
// (issue 16). A route added to the server belongs here too; ApiFixture's TearDown fails any
// route test whose requests were counted as "other".
#pragma once

#include <array>
#include <string_view>

namespace tuneplane::api {

inline constexpr std::array<std::string_view, 19> kRouteTemplates = {
    "/v1/jobs",
    "/v1/jobs/{id}",
    "/v1/jobs/{id}/events",
    "/v1/jobs/{id}/cancel",
    "/v1/jobs/{id}/attempts/{n}/abandon",
    "/v1/jobs/{id}/logs",
    "/v1/validate",
    "/v1/playgrounds",
    "/v1/deployments",
    "/v1/capabilities",
    "/v1/doctor",
    "/v1/whoami",
    "/v1/openapi.json",
    "/healthz",
    "/readyz",
    "/metrics",
    "/",
    "/ui/",
    "/ui/{path}",
};
inline constexpr std::string_view kUnmatchedRoute = "unmatched";  // no route matched
inline constexpr std::string_view kOtherLabel = "other";          // outside the fixed set

// The HTTP methods counted by name (RFC 9110 §9 and PATCH); any other is "other".
inline constexpr std::array<std::string_view, 7> kCountedMethods = {
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};

}  // namespace tuneplane::api
