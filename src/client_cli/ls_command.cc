// `tuneplane ls JOB[:ATTEMPT|:checkpoints][/PATH]`: what a job's outputs hold, by name, before
// copying any (GET /v1/jobs/{id}/files, every page). The address is cp's (copy_paths.h): the
// latest attempt's output/ unless an attempt or the job's checkpoints/ is named, so what ls
// shows, cp fetches with the same words ("tuneplane cp JOB:checkpoints/checkpoint-200 .").
// A PATH that is a file lists that one entry (as ls does). Entries sorted by name; folders end
// in '/'. Text: TYPE SIZE MODIFIED NAME (aligned on a terminal, tab-separated for a pipe);
// -o json|yaml: the server's FileList with every page's items in one list. A page the server
// is too busy for is asked again, as cp asks it (busy_listing.h).
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "client_cli/busy_listing.h"
#include "client_cli/copy_paths.h"
#include "client_cli/exit_codes.h"
#include "client_cli/json_members.h"
#include "client_cli/server_commands.h"
#include "client_cli/table.h"
#include "common/human.h"
#include "common/percent_encoding.h"

namespace tuneplane::cli {
namespace {

// Entries asked for per page.
constexpr int kListPageSize = 1000;

using Listed = tl::expected<client::Json, ListingStopped>;

// Every page of `where`'s listing in one FileList (the first page's, "continue" emptied); a
// page the server is too busy for is asked again (busy_listing.h).
Listed listAll(client::ApiClient& api, client::Sleeper& sleeper, const std::string& job,
               client::FileLocation where) {
  std::string token;
  client::Json all;
  do {
    auto page = listPatiently(api, sleeper, job, where, {kListPageSize, token});
    if (!page) return page;
    // The attempt the first page chose stays the one listed, even if a retry starts.
    if (!where.attempt && (*page)["attempt"].is_number_integer()) {
      where.attempt = (*page)["attempt"].get<int>();
    }
    token = stringOf(*page, "continue");
    if (all.is_null()) {
      all = std::move(*page);
    } else {
      for (auto& item : (*page)["items"]) all["items"].push_back(std::move(item));
    }
  } while (!token.empty());
  all["continue"] = "";
  auto& items = all["items"];
  std::sort(items.begin(), items.end(), [](const client::Json& a, const client::Json& b) {
    return stringOf(a, "path_encoded") < stringOf(b, "path_encoded");
  });
  return all;
}

bool isNotADirectory(const ListingStopped& stopped) {
  return stopped.error && stopped.error->kind == client::FailureKind::kHttp &&
         !stopped.error->errors.empty() &&
         stopped.error->errors.front().code == "files.not_a_directory";
}

// A file's own entry: its folder listed, the entry kept whose exact path is `path`.
Listed listOneFile(client::ApiClient& api, client::Sleeper& sleeper, const std::string& job,
                   client::FileLocation where) {
  const std::string path = where.path;
  const auto slash = path.rfind('/');
  where.path = slash == std::string::npos ? "" : path.substr(0, slash);
  auto folder = listAll(api, sleeper, job, where);
  if (!folder) return folder;
  client::Json kept = client::Json::array();
  for (auto& item : (*folder)["items"]) {
    if (percentDecode(stringOf(item, "path_encoded")) == path) kept.push_back(std::move(item));
  }
  (*folder)["items"] = std::move(kept);
  return folder;
}

std::string areaText(const client::Json& list) {
  const std::string path = stringOf(list, "path");
  const std::string in = path.empty() ? "" : path + " in ";
  if (stringOf(list, "area") == "checkpoints") return in + "the job's checkpoints/";
  return fmt::format("{}output/ of attempt {}", in, integerOf(list, "attempt"));
}

}  // namespace

int runLs(const LsFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto source = parseCopySource(flags.source);
  if (!source) return session->fail({source.error()}, kExitInvalid);
  client::Sleeper& sleeper = io.sleeper;
  auto list = listAll(session->api(), sleeper, source->job, source->where);
  if (!list && isNotADirectory(list.error()) && !source->where.path.empty()) {
    list = listOneFile(session->api(), sleeper, source->job, source->where);
  }
  if (!list && !list.error().error) {
    session->note("interrupted while the server was busy; run the same command again");
    return kExitInterrupted;
  }
  if (!list) return session->fail(*list.error().error, false);
  if (session->format() != OutputFormat::kText) {
    session->printDocument(*list);
    return kExitOk;
  }
  Table table({"TYPE", "SIZE", "MODIFIED", "NAME"});
  for (const auto& item : (*list)["items"]) {
    const std::string type = stringOf(item, "type");
    const bool folder = type == "directory";
    table.add({type, folder ? "-" : formatBytes(static_cast<uint64_t>(integerOf(item, "size"))),
               stringOf(item, "modified"), stringOf(item, "name") + (folder ? "/" : "")});
  }
  session->note(fmt::format("{} of {}", areaText(*list), source->job));
  io.out << (table.empty() ? std::string("(empty)\n") : table.render(io.terminal));
  return kExitOk;
}

void addLsCommand(CLI::App& app, IoSource io) {
  auto flags = std::make_shared<LsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "ls",
      "List a job's output files (or its checkpoints) by name; cp fetches them by the same name");
  cmd->add_option("SOURCE", flags->source,
                  "JOB[:ATTEMPT|:checkpoints][/PATH]: the latest attempt's output/ unless an "
                  "attempt number or the job's checkpoints/ is named (as for cp)")
      ->required();
  addServerFlags(*cmd, flags->server);
  cmd->footer(kServerExitCodes);
  bindRunner(*cmd, flags, std::move(io), runLs);
}

}  // namespace tuneplane::cli
