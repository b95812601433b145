#include "doctor/check.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace tuneplane::doctor {

const char* toString(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kSkip:
      return "skip";
  }
  return "fail";
}

CheckResult okCheck(std::string name, std::string message, nlohmann::json details) {
  return {std::move(name), CheckStatus::kOk, std::move(message), "", std::move(details)};
}

CheckResult warnCheck(std::string name, std::string message, std::string fix,
                      nlohmann::json details) {
  return {std::move(name), CheckStatus::kWarn, std::move(message), std::move(fix),
          std::move(details)};
}

CheckResult failCheck(std::string name, std::string message, std::string fix,
                      nlohmann::json details) {
  return {std::move(name), CheckStatus::kFail, std::move(message), std::move(fix),
          std::move(details)};
}

CheckResult skipCheck(std::string name, std::string why) {
  // No fix of its own: the message names the failed check whose fix applies.
  return {std::move(name), CheckStatus::kSkip, "not checked: " + why, "", nlohmann::json::object()};
}

Summary summarize(const std::vector<CheckResult>& checks) {
  Summary s;
  for (const auto& c : checks) {
    switch (c.status) {
      case CheckStatus::kOk:
        ++s.ok;
        break;
      case CheckStatus::kWarn:
        ++s.warn;
        break;
      case CheckStatus::kFail:
        ++s.fail;
        break;
      case CheckStatus::kSkip:
        ++s.skip;
        break;
    }
  }
  return s;
}

bool passed(const std::vector<CheckResult>& checks, bool strict) {
  const Summary s = summarize(checks);
  return s.fail == 0 && s.skip == 0 && (!strict || s.warn == 0);
}

nlohmann::json reportToJson(const std::string& site_path, const std::vector<CheckResult>& checks,
                            bool strict) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : checks) {
    list.push_back({{"name", c.name},
                    {"status", toString(c.status)},
                    {"message", c.message},
                    {"fix", c.fix},
                    {"details", c.details}});
  }
  const Summary s = summarize(checks);
  return {{"version", 1},
          {"site", site_path},
          {"passed", passed(checks, strict)},
          {"strict", strict},
          {"summary", {{"ok", s.ok}, {"warn", s.warn}, {"fail", s.fail}, {"skip", s.skip}}},
          {"checks", std::move(list)}};
}

std::string reportToText(const std::string& site_path, const std::vector<CheckResult>& checks,
                         bool strict) {
  size_t width = 0;
  for (const auto& c : checks) width = std::max(width, c.name.size());
  std::string out = fmt::format("tuneplane doctor: site {}\n\n", site_path);
  const std::string indent(2 + 4 + 2 + width + 2, ' ');
  for (const auto& c : checks) {
    out += fmt::format("  {:<4}  {:<{}}  {}\n", toString(c.status), c.name, width, c.message);
    if (c.status != CheckStatus::kOk && !c.fix.empty()) {
      out += fmt::format("{}fix: {}\n", indent, c.fix);
    }
  }
  const Summary s = summarize(checks);
  const bool ok = passed(checks, strict);
  out += fmt::format("\n{} checks: {} ok, {} warn, {} fail, {} skipped — {}\n", checks.size(), s.ok,
                     s.warn, s.fail, s.skip,
                     ok ? (s.warn > 0 ? "passed, with warnings" : "passed")
                        : (s.fail + s.skip > 0 ? "FAILED" : "FAILED (--strict: warnings fail)"));
  return out;
}

}  // namespace tuneplane::doctor
