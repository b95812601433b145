// `tuneplane capabilities`: what the site offers a spec (GET /v1/capabilities) — the runtimes
// a spec may name and the frameworks each provides, the GPU series with GPUs per node and
// the Slurm constraint their pools get, the partitions, the limits, and what Slurm cannot run
// here. For people: a few short tables (aligned on a terminal, tab-separated for a pipe);
// -o json|yaml: the server's answer verbatim.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "client_cli/exit_codes.h"
#include "client_cli/json_members.h"
#include "client_cli/server_commands.h"
#include "client_cli/table.h"
#include "common/human.h"

namespace tuneplane::cli {
namespace {

std::string joined(const client::Json& names) {
  std::string out;
  if (!names.is_array()) return out;
  for (const auto& name : names) {
    if (name.is_string()) out += (out.empty() ? "" : ", ") + name.get<std::string>();
  }
  return out;
}

const client::Json& member(const client::Json& object, const char* key) {
  static const client::Json kNone;
  const auto it = object.find(key);
  return it == object.end() ? kNone : *it;
}

void printRuntimes(std::ostream& out, const client::Json& caps, bool aligned) {
  Table table({"RUNTIME", "FORMAT", "FRAMEWORKS"});
  for (const auto& r : member(caps, "runtimes")) {
    table.add({stringOf(r, "id"), stringOf(r, "format"), joined(member(r, "frameworks"))});
  }
  out << "Runtimes (spec.framework.runtime_id):\n";
  out << (table.empty() ? "  none registered\n" : table.render(aligned, "  "));
}

void printGpuSeries(std::ostream& out, const client::Json& caps, bool aligned) {
  Table table({"GPU SERIES", "GPUS/NODE", "GRES", "CONSTRAINT", "USABLE"});
  for (const auto& s : member(caps, "gpu_series")) {
    const bool usable = member(s, "usable").is_boolean() && member(s, "usable").get<bool>();
    table.add({stringOf(s, "name"), std::to_string(integerOf(s, "gpus_per_node")),
               stringOf(s, "gres_type"), stringOf(s, "slurm_constraint"),
               usable ? "yes" : "no: " + stringOf(s, "reason")});
  }
  out << "GPU series (spec.resources.pools[].gpu_series):\n";
  out << (table.empty() ? "  none: this site runs CPU-only jobs\n" : table.render(aligned, "  "));
}

void printPartitions(std::ostream& out, const client::Json& caps) {
  const client::Json& partitions = member(caps, "partitions");
  out << "Partitions (spec.resources.pools[].partition):\n";
  out << fmt::format("  {} (default for GPU pools), {} (default for CPU-only pools)\n",
                     stringOf(partitions, "gpu"), stringOf(partitions, "cpu"));
  const client::Json& allowed = member(partitions, "allowed");
  if (allowed.is_array()) {
    out << "  a pool may name: " << joined(allowed) << "\n";
  } else {
    out << "  a pool may name any partition (the site lists none: Slurm judges it)\n";
  }
}

void printLimits(std::ostream& out, const client::Json& caps) {
  const client::Json& limits = member(caps, "limits");
  out << "Limits:\n";
  out << fmt::format("  logs: the last {} and at most {} lines of each file\n",
                     formatBytes(static_cast<uint64_t>(integerOf(limits, "log_bytes"))),
                     integerOf(limits, "log_lines"));
  out << fmt::format("  code (--workdir): at most {} in {} files and folders\n",
                     formatBytes(static_cast<uint64_t>(integerOf(limits, "workdir_max_bytes"))),
                     integerOf(limits, "workdir_max_files"));
  std::string refused;
  for (const auto& [name, kind] : member(caps, "kinds").items()) {
    if (member(kind, "supported") == false) refused += (refused.empty() ? "" : ", ") + name;
  }
  for (const auto& [name, feature] : member(caps, "features").items()) {
    if (member(feature, "supported") == false) refused += (refused.empty() ? "" : ", ") + name;
  }
  if (!refused.empty()) out << "  not on Slurm: " << refused << "\n";
}

}  // namespace

int runCapabilities(const CapabilitiesFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto caps = session->api().capabilities();
  if (!caps) return session->fail(caps.error(), false);
  if (session->format() != OutputFormat::kText) {
    session->printDocument(*caps);
    return kExitOk;
  }
  const bool aligned = io.terminal;
  io.out << fmt::format("Site: {} backend, {} containers, Slurm REST API {}\n",
                        stringOf(*caps, "backend"), stringOf(*caps, "container_runtime"),
                        stringOf(*caps, "slurm_api_version"));
  printRuntimes(io.out, *caps, aligned);
  printGpuSeries(io.out, *caps, aligned);
  printPartitions(io.out, *caps);
  printLimits(io.out, *caps);
  return kExitOk;
}

void addCapabilitiesCommand(CLI::App& app, IoSource io) {
  auto flags = std::make_shared<CapabilitiesFlags>();
  CLI::App* cmd = app.add_subcommand(
      "capabilities",
      "Show what the site offers a spec: runtimes and their frameworks, GPU series (GPUs per\n"
      "node, Slurm constraint), partitions, limits, and what Slurm cannot run here");
  addServerFlags(*cmd, flags->server);
  cmd->footer(kServerExitCodes);
  bindRunner(*cmd, flags, std::move(io), runCapabilities);
}

}  // namespace tuneplane::cli
