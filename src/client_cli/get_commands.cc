// `tuneplane get jobs [ID]` (also `get job ID`, `get [ID]`), `describe [job] ID` and
// `events ID`: reading jobs. Text for people (see
// job_views.h for the terminal/pipe rule), -o json|yaml with the server's objects verbatim:
// `get` prints the list answer ({"items", "continue"}; with --all every page's items in one
// list and an empty continue) or the job; `describe` prints {"job": …, "events": […]};
// `events` the events answer ({"items"}).
#include <memory>
#include <set>

#include <fmt/format.h>

#include "client_cli/exit_codes.h"
#include "client_cli/server_commands.h"

namespace tuneplane::cli {
namespace {

// A server that keeps handing out continue tokens cannot make --all loop forever.
constexpr int kMaxPages = 10000;

bool hasFilters(const GetFlags& flags) {
  return flags.phase || flags.name || flags.owner || !flags.labels.empty() || flags.limit ||
         flags.continue_token || flags.all;
}

std::string continueOf(const client::Json& page) {
  auto it = page.find("continue");
  return it != page.end() && it->is_string() ? it->get<std::string>() : "";
}

Status checkLabels(const std::vector<std::string>& labels) {
  for (const std::string& label : labels) {
    const auto equals = label.find('=');
    if (equals == std::string::npos || equals == 0) {
      return fail("cli.invalid_label", "-l", fmt::format("'{}' is not key=value", label));
    }
  }
  return ok();
}

int getOne(ServerSession& session, const std::string& id) {
  auto job = session.api().getJob(id);
  if (!job) return session.fail(job.error(), false);
  if (session.format() != OutputFormat::kText) {
    session.printDocument(*job);
    return kExitOk;
  }
  auto view = client::jobFromJson(*job);
  if (!view) return session.fail({view.error()}, kExitServer);
  session.io().out << jobsTable({*view}, session.view());
  return kExitOk;
}

}  // namespace

int runGet(const GetFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  if (flags.id) {
    if (hasFilters(flags)) {
      return session->fail({{"cli.invalid_option", "ID",
                             "filters and paging apply to the list: give a job ID or filters, "
                             "not both"}},
                           kExitInvalid);
    }
    return getOne(*session, *flags.id);
  }
  if (auto labels = checkLabels(flags.labels); !labels) {
    return session->fail({labels.error()}, kExitInvalid);
  }
  if (flags.limit && *flags.limit <= 0) {
    return session->fail({{"cli.invalid_option", "--limit", "--limit must be at least 1"}},
                         kExitInvalid);
  }
  client::ListQuery query{flags.phase,  flags.name,  flags.owner,
                          flags.labels, flags.limit, flags.continue_token};
  client::Json page;
  client::Json items = client::Json::array();
  std::set<std::string> seen;
  for (int pages = 0;; ++pages) {
    auto answer = session->api().listJobs(query);
    if (!answer) return session->fail(answer.error(), false);
    page = std::move(*answer);
    if (!page.contains("items") || !page["items"].is_array()) {
      return session->fail({{client::kErrBadResponse, "items", "the list answer has no items[]"}},
                           kExitServer);
    }
    for (auto& item : page["items"]) items.push_back(item);
    const std::string next = continueOf(page);
    if (!flags.all || next.empty()) break;
    if (!seen.insert(next).second || pages + 1 >= kMaxPages) {
      return session->fail({{client::kErrBadResponse, "continue",
                             "the server repeated a continue token: stopping --all"}},
                           kExitServer);
    }
    query.continue_token = next;
  }
  const std::string next = continueOf(page);
  if (session->format() != OutputFormat::kText) {
    if (flags.all) {
      session->printDocument(client::Json{{"items", std::move(items)}, {"continue", ""}});
    } else {
      session->printDocument(page);
    }
    return kExitOk;
  }
  client::Json all{{"items", std::move(items)}};
  auto jobs = client::jobsFromList(all);
  if (!jobs) return session->fail({jobs.error()}, kExitServer);
  io.out << jobsTable(*jobs, session->view());
  io.out.flush();
  if (!flags.all && !next.empty()) {
    session->note(fmt::format("more jobs: tuneplane get --continue {} (or --all)", next));
  }
  return kExitOk;
}

int runDescribe(const JobIdFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto job = session->api().getJob(flags.id);
  if (!job) return session->fail(job.error(), false);
  auto events = session->api().jobEvents(flags.id);
  if (!events) return session->fail(events.error(), false);
  if (session->format() != OutputFormat::kText) {
    const client::Json items =
        events->contains("items") ? (*events)["items"] : client::Json::array();
    session->printDocument(client::Json{{"job", *job}, {"events", items}});
    return kExitOk;
  }
  auto view = client::jobFromJson(*job);
  if (!view) return session->fail({view.error()}, kExitServer);
  auto event_views = client::eventsFromList(*events);
  if (!event_views) return session->fail({event_views.error()}, kExitServer);
  io.out << describeJob(*view, *event_views, session->view());
  return kExitOk;
}

int runEvents(const JobIdFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto events = session->api().jobEvents(flags.id);
  if (!events) return session->fail(events.error(), false);
  if (session->format() != OutputFormat::kText) {
    session->printDocument(*events);
    return kExitOk;
  }
  auto views = client::eventsFromList(*events);
  if (!views) return session->fail({views.error()}, kExitServer);
  io.out << eventsTable(*views, session->view());
  return kExitOk;
}

void addGetCommands(CLI::App& app, IoSource io) {
  auto get = std::make_shared<GetFlags>();
  CLI::App* cmd = app.add_subcommand(
      "get",
      "List your jobs (newest first), or show one job: ID NAME OWNER PHASE ATTEMPTS "
      "CREATED REASON. kubectl's forms work too: get jobs [ID], get job ID");
  cmd->add_option("ID", get->id, "A job id; without one, list jobs");
  cmd->add_option("--phase", get->phase, "Only jobs in this phase (e.g. Running, Failed)");
  cmd->add_option("--name", get->name, "Only jobs with this metadata.name");
  cmd->add_option("-l,--label", get->labels, "Only jobs with this label, key=value (repeatable)");
  cmd->add_option("--owner", get->owner, "Only this user's jobs (admins)");
  cmd->add_option("--limit", get->limit, "At most this many jobs per page");
  cmd->add_option("--continue", get->continue_token, "The page after this continue token");
  cmd->add_flag("--all", get->all, "Every page, following the continue tokens");
  addServerFlags(*cmd, get->server);
  const std::string footer =
      std::string(
          "On a terminal the table is aligned and times are relative (5m ago); piped, "
          "columns are\ntab-separated and times RFC 3339. -o json|yaml print the "
          "server's objects.\n") +
      kServerExitCodes;
  cmd->footer(footer);
  // `get jobs [ID]` and `get job ID`: the nouns take the ID; every other flag falls through
  // to `get`, whose callback runs the command once.
  CLI::App* jobs = cmd->add_subcommand("jobs", "List jobs, or show the job ID")->fallthrough();
  jobs->add_option("ID", get->id, "A job id; without one, list jobs");
  CLI::App* job = cmd->add_subcommand("job", "Show one job")->fallthrough();
  job->add_option("ID", get->id, "The job id")->required();
  // The nouns' own --help shows -o, --server and --token too (bound to the same flags).
  for (CLI::App* noun : {jobs, job}) {
    addServerFlags(*noun, get->server);
    noun->footer(footer);
  }
  cmd->require_subcommand(0, 1);
  bindRunner(*cmd, get, io, runGet);

  auto describe = std::make_shared<JobIdFlags>();
  cmd = app.add_subcommand(
      "describe",
      "Show a job in full: each attempt with its Slurm components, and the recent "
      "events (also: describe job ID)");
  CLI::Option* id = cmd->add_option("ID", describe->id, "The job id");
  addServerFlags(*cmd, describe->server);
  cmd->footer(kServerExitCodes);
  job = cmd->add_subcommand("job", "Show one job in full")->fallthrough();
  job->add_option("ID", describe->id, "The job id")->required();
  addServerFlags(*job, describe->server);
  job->footer(kServerExitCodes);
  cmd->require_subcommand(0, 1);
  // Either `describe ID` or `describe job ID`.
  cmd->callback([describe, io, id, job] {
    if (id->count() == 0 && job->count() == 0) throw CLI::RequiredError("ID");
    if (const int code = runDescribe(*describe, io()); code != 0) throw CLI::RuntimeError(code);
  });

  auto events = std::make_shared<JobIdFlags>();
  cmd = app.add_subcommand("events", "List every recorded transition of a job, oldest first");
  cmd->add_option("ID", events->id, "The job id")->required();
  addServerFlags(*cmd, events->server);
  cmd->footer(kServerExitCodes);
  bindRunner(*cmd, events, std::move(io), runEvents);
}

}  // namespace tuneplane::cli
