#include "store/continue_token.h"

#include <nlohmann/json.hpp>

#include "common/jwt.h"
#include "store/error_codes.h"

namespace tuneplane::store {
namespace {

using nlohmann::json;

constexpr int kTokenVersion = 1;

json optionalText(const std::optional<std::string>& value) {
  return value ? json(*value) : json(nullptr);
}

// The filters a token is bound to. The limit is not one of them: a client may change its
// page size between pages.
json filtersOf(const JobQuery& query) {
  json filters;
  filters["owner"] = optionalText(query.owner);
  filters["phase"] = query.phase ? json(std::string(toString(*query.phase))) : json(nullptr);
  filters["name"] = optionalText(query.name);
  filters["label"] =
      query.label ? json::array({query.label->first, query.label->second}) : json(nullptr);
  return filters;
}

tl::unexpected<Error> badToken(const std::string& why) {
  return fail(codes::kBadContinue, "continue",
              "the continue token " + why + "; start again from the first page (no token)");
}

}  // namespace

std::string encodeContinue(const ListPosition& after, const JobQuery& query) {
  const json token = {
      {"v", kTokenVersion}, {"c", after.created_ms}, {"i", after.id}, {"f", filtersOf(query)}};
  return jwt::base64UrlEncode(token.dump(-1, ' ', false, json::error_handler_t::replace));
}

Result<ListPosition> decodeContinue(std::string_view token, const JobQuery& query) {
  if (token.size() > kMaxContinueTokenBytes) return badToken("is too long");
  auto bytes = jwt::base64UrlDecode(token);
  if (!bytes) return badToken("is not base64url");
  const json parsed = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return badToken("is not one this server made");
  const auto version = parsed.find("v");
  const auto created = parsed.find("c");
  const auto id = parsed.find("i");
  const auto filters = parsed.find("f");
  if (version == parsed.end() || created == parsed.end() || id == parsed.end() ||
      filters == parsed.end() || parsed.size() != 4) {
    return badToken("is not one this server made");
  }
  if (!version->is_number_integer() || version->get<int64_t>() != kTokenVersion) {
    return badToken("has an unknown version");
  }
  if (!created->is_number_integer() || !id->is_string() || id->get<std::string>().empty()) {
    return badToken("is not one this server made");
  }
  if (*filters != filtersOf(query)) {
    return badToken("was made for a listing with other filters");
  }
  return ListPosition{created->get<int64_t>(), id->get<std::string>()};
}

}  // namespace tuneplane::store
