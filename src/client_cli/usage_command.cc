// `tuneplane usage [--by user|team|owner|job] [--since T] [--until T] [--user U]…`: CPU-hours
// and GPU-hours from Slurm's own accounting (GET /v1/usage; docs/users.md, "Usage"). A time is
// what the server takes (a date, an RFC 3339 time, Unix seconds) or a duration back from now
// ("7d", "12h", "1d12h"), sent as Unix seconds. Text: one table row per user, team, owner or
// job with the TOTAL last, the window on stderr; -o json|yaml: the server's answer verbatim.
// A site without accounting: the server's message and exit 1 (no figures are made up).
#include <memory>

#include <fmt/format.h>

#include "client_cli/exit_codes.h"
#include "client_cli/json_members.h"
#include "client_cli/server_commands.h"
#include "client_cli/table.h"
#include "spec/names.h"

namespace tuneplane::cli {
namespace {

constexpr const char* kAccountingUnavailable = "usage.accounting_unavailable";

// A --since/--until value as sent: a duration back from `now_ms` becomes Unix seconds; any
// other text goes as written (the server judges it, naming the flag's parameter).
std::string timeParameter(const std::string& text, int64_t now_ms) {
  if (auto ago = spec::parseDuration(text)) {
    return std::to_string((now_ms - ago->count()) / 1000);
  }
  return text;
}

double numberOf(const client::Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string hoursCell(const client::Json& figures, const char* key) {
  return fmt::format("{:.2f}", numberOf(figures, key));
}

std::string runsCell(const client::Json& figures) {
  return fmt::format("{}", static_cast<int64_t>(numberOf(figures, "runs")));
}

std::string attemptsText(const client::Json& item) {
  std::string out;
  auto it = item.find("attempts");
  if (it == item.end() || !it->is_array()) return out;
  for (const auto& n : *it) {
    if (n.is_number_integer()) out += (out.empty() ? "" : ",") + std::to_string(n.get<int>());
  }
  return out;
}

// The report as a table: the grouping's columns, the figures, and for user and team the share
// of TunePlane's jobs; a TOTAL row last.
std::string reportTable(const client::Json& report, bool aligned) {
  const std::string by = stringOf(report, "by");
  const bool split = by == "user" || by == "team";
  std::vector<std::string> header;
  if (by == "job") {
    header = {"JOB", "OWNER", "USER", "TEAM", "ATTEMPTS"};
  } else {
    header = {by == "team" ? "TEAM" : by == "owner" ? "OWNER" : "USER"};
  }
  for (const char* column : {"CPU-HOURS", "GPU-HOURS", "RUNS"}) header.push_back(column);
  if (split) {
    for (const char* column : {"TUNEPLANE CPU-H", "TUNEPLANE GPU-H"}) header.push_back(column);
  }
  Table table(header);
  auto figures = [&](std::vector<std::string> row, const client::Json& f) {
    row.push_back(hoursCell(f, "cpu_hours"));
    row.push_back(hoursCell(f, "gpu_hours"));
    row.push_back(runsCell(f));
    if (split) {
      const auto tp = f.find("tuneplane");
      const client::Json none = client::Json::object();
      const client::Json& t = tp != f.end() && tp->is_object() ? *tp : none;
      row.push_back(hoursCell(t, "cpu_hours"));
      row.push_back(hoursCell(t, "gpu_hours"));
    }
    table.add(std::move(row));
  };
  const auto items = report.find("items");
  if (items != report.end() && items->is_array()) {
    for (const auto& item : *items) {
      if (by == "job") {
        figures({stringOf(item, "job"), stringOf(item, "owner"), stringOf(item, "user"),
                 stringOf(item, "team"), attemptsText(item)},
                item);
      } else {
        figures({stringOf(item, by == "team" ? "team" : by == "owner" ? "owner" : "user")}, item);
      }
    }
  }
  const auto total = report.find("total");
  if (total != report.end() && total->is_object()) {
    std::vector<std::string> row = {"TOTAL"};
    if (by == "job") row.insert(row.end(), {"", "", "", ""});
    figures(std::move(row), *total);
  }
  return table.render(aligned);
}

}  // namespace

int runUsage(const UsageFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  client::UsageQuery query;
  query.by = flags.by;
  const int64_t now_ms = io.clock.nowMs();
  if (flags.since) query.since = timeParameter(*flags.since, now_ms);
  if (flags.until) query.until = timeParameter(*flags.until, now_ms);
  query.users = flags.users;
  auto report = session->api().usage(query);
  if (!report) {
    const auto& errors = report.error().errors;
    if (!errors.empty() && errors.front().code == kAccountingUnavailable) {
      return session->fail(errors, kExitFailure);
    }
    return session->fail(report.error(), false);
  }
  if (session->format() != OutputFormat::kText) {
    session->printDocument(*report);
    return kExitOk;
  }
  io.out << reportTable(*report, io.terminal);
  session->note(
      fmt::format("usage from Slurm's accounting (slurmdbd), {} to {}; {}",
                  stringOf(*report, "since"), stringOf(*report, "until"),
                  stringOf(*report, "scope") == "all" ? "every user's runs" : "your runs only"));
  return kExitOk;
}

void addUsageCommand(CLI::App& app, IoSource io) {
  auto flags = std::make_shared<UsageFlags>();
  CLI::App* cmd = app.add_subcommand(
      "usage", "CPU-hours and GPU-hours from Slurm's accounting, per user, team, owner or job");
  addServerFlags(*cmd, flags->server);
  cmd->add_option("--by", flags->by,
                  "Group by user (Slurm's user, the default), team (Slurm account), owner "
                  "(TunePlane user) or job (TunePlane job)")
      ->check(CLI::IsMember({"user", "team", "owner", "job"}));
  cmd->add_option("--since", flags->since,
                  "Start: a date (2026-12-01, UTC), an RFC 3339 time, Unix seconds, or a "
                  "duration ago (7d, 12h); default: 7 days before --until");
  cmd->add_option("--until", flags->until, "End (excluded), as --since; default: now");
  cmd->add_option("--user", flags->users,
                  "Only this Slurm user's runs (repeatable; admins, or your own Unix user)");
  cmd->footer(std::string("Exit 1: the site has no accounting (no slurmdbd, or slurmrestd does "
                          "not load openapi/slurmdbd).\n") +
              kServerExitCodes);
  bindRunner(*cmd, flags, std::move(io), runUsage);
}

}  // namespace tuneplane::cli
