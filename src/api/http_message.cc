// See http_message.h.
#include "api/http_message.h"

#include <algorithm>

#include "common/percent_encoding.h"

namespace tuneplane::api {
namespace {

char lowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

bool HeaderNameLess::operator()(std::string_view a, std::string_view b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](char x, char y) { return lowerAscii(x) < lowerAscii(y); });
}

std::string HttpRequest::header(std::string_view name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

void HttpResponse::setBody(std::string body_text, std::string_view content_type) {
  body = std::move(body_text);
  const auto [first, last] = headers.equal_range(std::string_view("Content-Type"));
  headers.erase(first, last);
  headers.emplace("Content-Type", std::string(content_type));
}

Status parseTarget(std::string_view target, std::string& path, QueryParams& params) {
  const auto query_start = target.find('?');
  auto decoded = percentDecode(target.substr(0, query_start));
  if (!decoded) {
    return fail("api.bad_request", "path", "a '%' in the path is not followed by two hex digits");
  }
  path = std::move(*decoded);
  if (query_start == std::string_view::npos) return {};
  std::string_view query = target.substr(query_start + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    auto name = percentDecode(pair.substr(0, eq), /*plus_is_space=*/true);
    auto value =
        percentDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1),
                      /*plus_is_space=*/true);
    if (!name) {
      return fail("api.bad_request", "query",
                  "a '%' in a parameter's name is not followed by two hex digits");
    }
    if (!value) {  // named as every other bad parameter is (job_queries.h)
      return fail("api.invalid_parameter", *name,
                  "a '%' in the value is not followed by two hex digits");
    }
    if (name->empty()) continue;
    params.emplace(std::move(*name), std::move(*value));
  }
  return {};
}

}  // namespace tuneplane::api
