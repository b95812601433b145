// One finding of `tuneplane doctor`: a named check, its verdict (ok / warn / fail / skip),
// why, how to fix it, and the facts behind it. The judgement functions of this module
// return these; the CLI prints them as text or as one JSON document. Plain values.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tuneplane::doctor {

enum class CheckStatus {
  kOk,    // what was checked is as it should be
  kWarn,  // legal and usable, but worth the operator's attention; not a failure by default
  kFail,  // jobs will not run (or not safely) until it is fixed
  kSkip,  // could not be checked because an earlier check failed; `message` says which
};

const char* toString(CheckStatus status);  // "ok", "warn", "fail", "skip"

struct CheckResult {
  std::string name;  // stable, e.g. "slurmrestd", "partition/gpu", "artifact/<id>"
  CheckStatus status = CheckStatus::kOk;
  std::string message;  // what was found, for people; never a credential
  std::string fix;      // what to do about it; empty when ok or skipped
  nlohmann::json details = nlohmann::json::object();  // the facts it was judged on
};

CheckResult okCheck(std::string name, std::string message,
                    nlohmann::json details = nlohmann::json::object());
CheckResult warnCheck(std::string name, std::string message, std::string fix,
                      nlohmann::json details = nlohmann::json::object());
CheckResult failCheck(std::string name, std::string message, std::string fix,
                      nlohmann::json details = nlohmann::json::object());
CheckResult skipCheck(std::string name, std::string why);

struct Summary {
  int ok = 0;
  int warn = 0;
  int fail = 0;
  int skip = 0;
};
Summary summarize(const std::vector<CheckResult>& checks);

// Whether the site passed: no check failed or was skipped, and — when `strict` — none warned.
bool passed(const std::vector<CheckResult>& checks, bool strict);

// The stable JSON document of `doctor -o json`:
// {"version":1,"site":…,"passed":bool,"strict":bool,"summary":{"ok","warn","fail","skip"},
//  "checks":[{"name","status","message","fix","details"},…]}
nlohmann::json reportToJson(const std::string& site_path, const std::vector<CheckResult>& checks,
                            bool strict);

// The text report: one line per check ("  fail  partition/gpu  <message>"), a "fix:" line
// under each that is not ok, and a closing summary line saying whether the site passed.
std::string reportToText(const std::string& site_path, const std::vector<CheckResult>& checks,
                         bool strict);

}  // namespace tuneplane::doctor
