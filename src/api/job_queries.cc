#include "api/job_queries.h"

#include <charconv>

namespace tuneplane::api {
namespace {

bool has(const QueryParams& params, const std::string& key) {
  return params.find(key) != params.end();
}

// The first value of `key`, "" when absent.
std::string value(const QueryParams& params, const std::string& key) {
  const auto it = params.find(key);
  return it == params.end() ? std::string() : it->second;
}

Error badParameter(const std::string& name, const std::string& why) {
  return {"api.invalid_parameter", name, why};
}

}  // namespace

std::optional<int> parseBoundedInt(const std::string& text, int min, int max) {
  int parsed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (ec != std::errc() || end != text.data() + text.size() || parsed < min || parsed > max) {
    return std::nullopt;
  }
  return parsed;
}

tl::expected<store::JobQuery, Refusal> parseJobListQuery(const QueryParams& params,
                                                         const Principal& who) {
  store::JobQuery query;
  Errors errors;
  if (has(params, "phase")) {
    const std::string phase = value(params, "phase");
    if (auto parsed = phase::parseJobPhase(phase)) {
      query.phase = *parsed;
    } else {
      errors.push_back(badParameter("phase", "'" + phase + "' is not a job phase"));
    }
  }
  if (has(params, "name")) query.name = value(params, "name");
  if (has(params, "label")) {
    const std::string label = value(params, "label");
    const auto eq = label.find('=');
    if (eq == std::string::npos || eq == 0) {
      errors.push_back(badParameter("label", "expected label=KEY=VALUE"));
    } else {
      query.label = {label.substr(0, eq), label.substr(eq + 1)};
    }
  }
  if (has(params, "limit")) {
    if (auto limit = parseBoundedInt(value(params, "limit"), 1, 1000)) {
      query.limit = *limit;
    } else {
      errors.push_back(badParameter("limit", "must be an integer 1..1000"));
    }
  }
  query.continue_token = value(params, "continue");
  const std::string owner = value(params, "owner");
  if (who.admin) {
    if (!owner.empty()) query.owner = owner;
  } else if (!owner.empty() && owner != who.user) {
    return tl::unexpected(
        Refusal{403, {{"auth.forbidden", "owner", "only an admin lists other users' jobs"}}});
  } else {
    query.owner = who.user;
  }
  if (!errors.empty()) return tl::unexpected(Refusal{400, std::move(errors)});
  return query;
}

tl::expected<LogQuery, Refusal> parseLogQuery(const QueryParams& params) {
  LogQuery query;
  const std::string stream = value(params, "stream");
  if (stream == "stderr") {
    query.stream = attempt::LogStream::kStderr;
  } else if (!stream.empty() && stream != "stdout") {
    return tl::unexpected(Refusal{400, {badParameter("stream", "must be stdout or stderr")}});
  }
  if (has(params, "attempt")) {
    query.attempt_given = true;
    query.attempt_number = parseBoundedInt(value(params, "attempt"), 1, 1'000'000);
  }
  query.component = value(params, "component");
  return query;
}

}  // namespace tuneplane::api
