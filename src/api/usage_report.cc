// See usage_report.h.
#include "api/usage_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "api/json_views.h"
#include "common/text_checks.h"
#include "launch/attempt_identity.h"
#include "staging/staging_paths.h"

namespace tuneplane::api {
namespace {

using nlohmann::json;

// The parts of `path` between slashes (none empty: "a//b" gives nothing).
std::optional<std::vector<std::string_view>> components(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (part.empty()) return std::nullopt;
    parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
    if (path.empty()) return std::nullopt;
  }
  return parts;
}

// 1, 2, …: decimal, no sign, no leading zero, at most 9 digits.
std::optional<int> attemptNumber(std::string_view text) {
  if (text.empty() || text.size() > 9 || text.front() == '0') return std::nullopt;
  int n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

// The seconds of `run` inside `window`; nullopt when it never started or does not overlap.
std::optional<int64_t> secondsIn(const slurm::AccountingRun& run, const UsageWindow& window,
                                 int64_t now) {
  if (run.start_time <= 0) return std::nullopt;
  // Cancelled while pending: slurmctld stamps its start and end with the moment it ended.
  const bool cancelled =
      std::find(run.state.begin(), run.state.end(), "CANCELLED") != run.state.end();
  if (cancelled && run.end_time > 0 && run.end_time <= run.start_time) return std::nullopt;
  const int64_t start = run.start_time;
  const int64_t end = std::max(start, run.end_time > 0 ? run.end_time : now);
  if (start >= window.until || end < window.since) return std::nullopt;
  const int64_t low = std::max(start, window.since);
  const int64_t high = std::min(end, window.until);
  if (high < low) return std::nullopt;
  const int64_t wall = end - start;
  if (wall <= 0) return 0;
  const int64_t suspended = std::clamp<int64_t>(run.suspended, 0, wall);
  return (high - low) * (wall - suspended) / wall;
}

UsageFigures& operator+=(UsageFigures& a, const UsageFigures& b) {
  a.cpu_seconds += b.cpu_seconds;
  a.gpu_seconds += b.gpu_seconds;
  a.runs += b.runs;
  return a;
}

double toHours(int64_t seconds) {
  return std::round(static_cast<double>(seconds) / 3.6) / 1000.0;  // to the 1/1000 hour
}

json figuresJson(const UsageFigures& f) {
  return {{"cpu_hours", toHours(f.cpu_seconds)},
          {"gpu_hours", toHours(f.gpu_seconds)},
          {"cpu_seconds", f.cpu_seconds},
          {"gpu_seconds", f.gpu_seconds},
          {"runs", f.runs}};
}

// Exactly `n` decimal digits at `text`'s start, as a number; nullopt otherwise.
std::optional<int> digits(std::string_view text, size_t n) {
  if (text.size() < n) return std::nullopt;
  int value = 0;
  for (size_t i = 0; i < n; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

std::optional<AttemptRef> attemptOfDirectory(std::string_view staging_root,
                                             std::string_view working_directory) {
  while (staging_root.size() > 1 && staging_root.back() == '/') staging_root.remove_suffix(1);
  if (working_directory.size() > 1 && working_directory.back() == '/') {
    working_directory.remove_suffix(1);
  }
  if (staging_root.empty() || staging_root.front() != '/') return std::nullopt;
  const std::string prefix = staging_root == "/" ? "/" : std::string(staging_root) + "/";
  if (!working_directory.starts_with(prefix)) return std::nullopt;
  auto parts = components(working_directory.substr(prefix.size()));
  if (!parts) return std::nullopt;
  std::vector<std::string_view>& p = *parts;
  if (p.size() == 6 && p[0] == staging::kUsersDir && isUnixUserName(p[1])) {
    p.erase(p.begin(), p.begin() + 2);
  }
  if (p.size() != 4 || p[0] != staging::kJobsDir || p[2] != staging::kAttemptsDir) {
    return std::nullopt;
  }
  if (!launch::isValidJobId(p[1])) return std::nullopt;
  auto n = attemptNumber(p[3]);
  if (!n) return std::nullopt;
  return AttemptRef{std::string(p[1]), *n};
}

int64_t runSecondsIn(const slurm::AccountingRun& run, const UsageWindow& window, int64_t now) {
  return secondsIn(run, window, now).value_or(0);
}

std::string_view toString(UsageGrouping by) {
  switch (by) {
    case UsageGrouping::kUser:
      return "user";
    case UsageGrouping::kTeam:
      return "team";
    case UsageGrouping::kOwner:
      return "owner";
    case UsageGrouping::kJob:
      return "job";
  }
  return "user";
}

std::optional<UsageGrouping> parseUsageGrouping(std::string_view text) {
  for (auto by :
       {UsageGrouping::kUser, UsageGrouping::kTeam, UsageGrouping::kOwner, UsageGrouping::kJob}) {
    if (text == toString(by)) return by;
  }
  return std::nullopt;
}

UsageReport buildUsageReport(const std::vector<slurm::AccountingRun>& runs, const UsageInput& input,
                             const OwnershipLookup& lookup) {
  UsageReport report;
  report.window = input.window;
  report.by = input.by;
  report.everyone = input.scope.everyone;
  std::set<std::tuple<std::string, uint64_t, int64_t, int64_t>> seen;
  std::map<std::string, std::optional<JobOwnership>> owners;  // the store's answers, by job id
  std::map<std::string, UsageRow> rows;
  for (const auto& run : runs) {
    if (!seen.emplace(run.cluster, run.job_id, run.submit_time, run.start_time).second) continue;
    const auto seconds = secondsIn(run, input.window, input.now);
    if (!seconds) continue;
    // Whether the run is TunePlane's: its directory, the store's job, the user it ran as.
    const auto ref = attemptOfDirectory(input.staging_root, run.working_directory);
    const JobOwnership* job = nullptr;
    if (ref) {
      auto known = owners.find(ref->job_id);
      if (known == owners.end()) {
        known = owners.emplace(ref->job_id, lookup ? lookup(ref->job_id) : std::nullopt).first;
      }
      if (known->second) {
        const std::string& runs_as =
            known->second->run_as.empty() ? input.service_user : known->second->run_as;
        if (run.user == runs_as) job = &*known->second;
      }
    }
    const bool tuneplane = job != nullptr;
    const UsageScope& scope = input.scope;
    const bool visible = scope.everyone || (tuneplane && job->owner == scope.user) ||
                         (!tuneplane && !scope.unix_user.empty() && run.user == scope.unix_user &&
                          scope.unix_user != input.service_user);
    if (!visible) continue;
    const UsageFigures figures{*seconds * run.cpus, *seconds * run.gpus, 1};
    report.total += figures;
    if (tuneplane) report.total_tuneplane += figures;
    std::string key;
    switch (input.by) {
      case UsageGrouping::kUser:
        key = run.user;
        break;
      case UsageGrouping::kTeam:
        key = run.account;
        break;
      case UsageGrouping::kOwner:
        if (!tuneplane) continue;
        key = job->owner;
        break;
      case UsageGrouping::kJob:
        if (!tuneplane) continue;
        key = ref->job_id;
        break;
    }
    UsageRow& row = rows[key];
    row.key = key;
    row.all += figures;
    if (tuneplane) row.tuneplane += figures;
    if (input.by == UsageGrouping::kJob) {
      if (row.attempts.empty()) {
        row.owner = job->owner;
        row.user = run.user;
        row.team = run.account;
      }
      auto at = std::lower_bound(row.attempts.begin(), row.attempts.end(), ref->attempt);
      if (at == row.attempts.end() || *at != ref->attempt) row.attempts.insert(at, ref->attempt);
    }
  }
  for (auto& [key, row] : rows) report.rows.push_back(std::move(row));
  return report;
}

json usageReportJson(const UsageReport& report) {
  json items = json::array();
  for (const auto& row : report.rows) {
    json item = json::object();
    switch (report.by) {
      case UsageGrouping::kUser:
        item["user"] = row.key;
        break;
      case UsageGrouping::kTeam:
        item["team"] = row.key;
        break;
      case UsageGrouping::kOwner:
        item["owner"] = row.key;
        break;
      case UsageGrouping::kJob:
        item["job"] = row.key;
        item["owner"] = row.owner;
        item["user"] = row.user;
        item["team"] = row.team;
        item["attempts"] = row.attempts;
        break;
    }
    item.update(figuresJson(row.all));
    if (report.by == UsageGrouping::kUser || report.by == UsageGrouping::kTeam) {
      item["tuneplane"] = figuresJson(row.tuneplane);
    }
    items.push_back(std::move(item));
  }
  json total = figuresJson(report.total);
  total["tuneplane"] = figuresJson(report.total_tuneplane);
  return {{"since", timeText(report.window.since * 1000)},
          {"until", timeText(report.window.until * 1000)},
          {"by", std::string(toString(report.by))},
          {"scope", report.everyone ? "all" : "own"},
          {"items", std::move(items)},
          {"total", std::move(total)}};
}

std::optional<int64_t> parseUsageTime(std::string_view text) {
  using namespace std::chrono;
  if (!text.empty() && text.size() <= 12 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::stoll(std::string(text));
  }
  const auto y = digits(text, 4);
  if (!y || text.size() < 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  const auto mo = digits(text.substr(5), 2);
  const auto d = digits(text.substr(8), 2);
  if (!mo || !d) return std::nullopt;
  const year_month_day date{year(*y), month(static_cast<unsigned>(*mo)),
                            day(static_cast<unsigned>(*d))};
  if (!date.ok()) return std::nullopt;
  int64_t seconds = duration_cast<std::chrono::seconds>(sys_days(date).time_since_epoch()).count();
  if (text.size() == 10) return seconds;
  std::string_view rest = text.substr(10);
  if (rest.size() < 9 || (rest[0] != 'T' && rest[0] != 't') || rest[3] != ':' || rest[6] != ':') {
    return std::nullopt;
  }
  const auto h = digits(rest.substr(1), 2);
  const auto mi = digits(rest.substr(4), 2);
  const auto s = digits(rest.substr(7), 2);
  if (!h || !mi || !s || *h > 23 || *mi > 59 || *s > 60) return std::nullopt;
  seconds += *h * 3600 + *mi * 60 + *s;
  rest.remove_prefix(9);
  if (!rest.empty() && rest[0] == '.') {  // a fraction: whole seconds are enough here
    rest.remove_prefix(1);
    size_t n = 0;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n == 0) return std::nullopt;
    rest.remove_prefix(n);
  }
  if (rest == "Z" || rest == "z") return seconds;
  if (rest.size() != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':') return std::nullopt;
  const auto oh = digits(rest.substr(1), 2);
  const auto om = digits(rest.substr(4), 2);
  if (!oh || !om || *oh > 23 || *om > 59) return std::nullopt;
  const int64_t offset = *oh * 3600 + *om * 60;
  return rest[0] == '+' ? seconds - offset : seconds + offset;
}

}  // namespace tuneplane::api
