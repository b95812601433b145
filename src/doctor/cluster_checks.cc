#include "doctor/cluster_checks.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "doctor/constraint.h"
#include "doctor/gres.h"
#include "doctor/slurm_checks.h"

namespace tuneplane::doctor {
namespace {

using nlohmann::json;
using slurm::NodeInfo;
using slurm::PartitionInfo;

constexpr size_t kMaxNamesListed = 8;

// "a, b, c" — at most kMaxNamesListed, then "and N more".
std::string listNames(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::vector<std::string> shown(names.begin(),
                                 names.begin() + std::min(names.size(), kMaxNamesListed));
  std::string out = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > shown.size()) out += fmt::format(" and {} more", names.size() - shown.size());
  return out;
}

std::string clusterName(const SlurmFacts& f) {
  if (f.ping && *f.ping && !(*f.ping)->cluster.empty()) return (*f.ping)->cluster;
  return "the cluster";
}

// A node's available features (what Slurm matches --constraint against), plus the active
// ones in case a site reports only those.
std::vector<std::string> featuresOf(const NodeInfo& node) {
  std::vector<std::string> out = node.features;
  for (const auto& f : node.active_features)
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  return out;
}

bool inAny(const NodeInfo& node, const std::vector<std::string>& partitions) {
  return std::any_of(node.partitions.begin(), node.partitions.end(), [&](const std::string& p) {
    return std::find(partitions.begin(), partitions.end(), p) != partitions.end();
  });
}

// A node that cannot start jobs now (its state array holds one of these).
bool unavailable(const NodeInfo& node) {
  static const std::set<std::string> kUnavailable = {"DOWN",   "DRAIN",   "FAIL",
                                                     "FUTURE", "INVALID", "NOT_RESPONDING"};
  return std::any_of(node.state.begin(), node.state.end(),
                     [](const std::string& s) { return kUnavailable.count(s) > 0; });
}

json nodeJson(const NodeInfo& n, int64_t gpus) {
  return {{"name", n.name}, {"partitions", n.partitions}, {"features", featuresOf(n)},
          {"gres", n.gres}, {"state", n.state},           {"gpus_of_type", gpus}};
}

std::vector<std::string> names(const std::vector<const NodeInfo*>& nodes) {
  std::vector<std::string> out;
  for (const auto* n : nodes) out.push_back(n->name);
  return out;
}

// "gpu1 (gpu:h100:2), gpu2 (gpu:a100:2)" for messages about GRES.
std::string withGres(const std::vector<const NodeInfo*>& nodes) {
  std::vector<std::string> out;
  for (const auto* n : nodes)
    out.push_back(fmt::format("{} ({})", n->name, n->gres.empty() ? "no GRES" : n->gres));
  return listNames(out);
}

// A suggestion for a series without a constraint: the features of nodes carrying its GRES.
std::string constraintSuggestion(const catalog::GpuSeries& s, const SlurmFacts& f) {
  if (s.gres_type.empty() || !f.nodes || !*f.nodes) return "";
  std::set<std::string> features;
  std::vector<std::string> holders;
  for (const auto& n : **f.nodes) {
    if (gpusOfType(parseGres(n.gres), s.gres_type) == 0) continue;
    holders.push_back(n.name);
    for (const auto& feature : featuresOf(n)) features.insert(feature);
  }
  if (holders.empty()) return "";
  return fmt::format(" (nodes with gpu:{} — {} — have the features: {})", s.gres_type,
                     listNames(holders),
                     listNames(std::vector<std::string>(features.begin(), features.end())));
}

bool has(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool isOff(const std::vector<std::string>& modes) {
  return has(modes, "DISABLED") || has(modes, "OFF");
}

// The PreemptMode that applies to the partition's jobs: its own, or the cluster's where it has
// none ("CLUSTER_GLOBAL", an empty list, or none reported: v0.0.44).
std::vector<std::string> effectiveMode(const PartitionInfo& p,
                                       const std::vector<std::string>& cluster_mode) {
  std::vector<std::string> own;
  if (p.preempt_mode) {
    for (const auto& m : *p.preempt_mode)
      if (m != "CLUSTER_GLOBAL") own.push_back(m);
  }
  return own.empty() ? cluster_mode : own;
}

constexpr const char* kSuspended =
    "if Slurm preempts a job here, it is suspended, not ended, and gets no warning "
    "(PreemptMode SUSPEND)";
constexpr const char* kNoGraceReported =
    "what a job preempted here gets is not known (no GraceTime reported)";
constexpr const char* kNoGrace =
    "if Slurm preempts a job here, it gets no warning: GraceTime 0 ends it at once";

std::string termWarningOff(int64_t grace) {
  return fmt::format(
      "if Slurm preempts a job here, it gets TERM and {} s before it ends (GraceTime; "
      "slurm.preemption_warning is off)",
      grace);
}

// Why the cluster's settings are not known, for the message that then names both outcomes.
std::string whyNoConf(const std::optional<slurm::SlurmResult<slurm::ControllerConfig>>& conf) {
  if (!conf) return "GET /conf was not asked";
  if (conf->error().error.code == slurm::kErrConfUnavailable) return conf->error().error.message;
  return "GET /conf failed: " + conf->error().describe();
}

// With the cluster's settings unknown: what the partition's own record tells.
std::string outcomeWithoutConf(const catalog::PreemptionWarning& warning, const PartitionInfo& p,
                               const std::string& why) {
  const std::vector<std::string> modes = effectiveMode(p, {});
  if (isOff(modes)) return "jobs here are not preempted (PreemptMode OFF)";
  if (has(modes, "SUSPEND")) return kSuspended;
  if (!p.grace_time) return kNoGraceReported;
  if (*p.grace_time <= 0) return kNoGrace;
  if (!warning.enabled) return termWarningOff(*p.grace_time);
  return fmt::format(
      "if Slurm preempts a job here, it gets {} and {} s to save where PreemptParameters has "
      "send_user_signal, else TERM and {} s (GraceTime); the cluster's PreemptType and "
      "PreemptParameters are not known: {}",
      warning.signal, *p.grace_time, *p.grace_time, why);
}

// preempt/qos: slurmctld takes the grace time from the preempted job's QOS, not its partition
// (preempt.c), and doctor reads no QOS.
std::string outcomeUnderQos(const catalog::PreemptionWarning& warning, bool user_signal) {
  std::string gets = "TERM";
  std::string why = "slurm.preemption_warning is off";
  if (warning.enabled) {
    gets = user_signal ? warning.signal : "TERM";
    why = user_signal ? "PreemptParameters has send_user_signal"
                      : "not the warning: PreemptParameters lacks send_user_signal";
  }
  return fmt::format(
      "if Slurm preempts a job here, it gets {} and its QOS's GraceTime before it ends ({}); "
      "with PreemptType preempt/qos the QOS's GraceTime applies, which doctor does not read "
      "(0: no warning, it ends at once)",
      gets, why);
}

}  // namespace

std::string preemptionOutcome(
    const catalog::PreemptionWarning& warning, const PartitionInfo& p,
    const std::optional<slurm::SlurmResult<slurm::ControllerConfig>>& conf) {
  if (!conf || !*conf) return outcomeWithoutConf(warning, p, whyNoConf(conf));
  const slurm::ControllerConfig& c = **conf;
  if (c.preempt_type.empty()) return outcomeWithoutConf(warning, p, "GET /conf shows none");
  if (c.preempt_type == "preempt/none") {
    return "jobs here are not preempted (PreemptType preempt/none)";
  }
  const std::vector<std::string> modes = effectiveMode(p, c.preempt_mode);
  if (isOff(modes)) return "jobs here are not preempted (PreemptMode OFF)";
  if (has(modes, "SUSPEND")) return kSuspended;
  const bool user_signal = has(c.preempt_parameters, "send_user_signal");
  if (c.preempt_type == "preempt/qos") return outcomeUnderQos(warning, user_signal);
  if (!p.grace_time) return kNoGraceReported;
  if (*p.grace_time <= 0) return kNoGrace;
  if (!warning.enabled) return termWarningOff(*p.grace_time);
  if (user_signal) {
    return fmt::format(
        "if Slurm preempts a job here, it gets {} and {} s to save (GraceTime; "
        "PreemptParameters has send_user_signal)",
        warning.signal, *p.grace_time);
  }
  return fmt::format(
      "if Slurm preempts a job here, it gets TERM and {} s (GraceTime), not the warning: "
      "PreemptParameters lacks send_user_signal",
      *p.grace_time);
}

namespace {

CheckResult checkOnePartition(const catalog::SiteConfig& site, const ConfiguredPartition& cp,
                              const SlurmFacts& f) {
  const std::string name = "partition/" + cp.name;
  const std::string by = fmt::format("{}", fmt::join(cp.named_by, ", "));
  json details = {{"partition", cp.name}, {"named_by", cp.named_by}};
  if (auto why = whyNoClusterFacts(f)) return skipCheck(name, *why);
  if (!f.partitions || !*f.partitions) {
    const std::string error =
        f.partitions ? f.partitions->error().describe() : "slurmrestd was not asked";
    return failCheck(name, "cannot list the partitions (GET /partitions/): " + error,
                     "read slurmrestd's log for this request", details);
  }
  const auto& all = **f.partitions;
  auto it = std::find_if(all.begin(), all.end(),
                         [&](const PartitionInfo& p) { return p.name == cp.name; });
  if (it == all.end()) {
    std::vector<std::string> existing;
    for (const auto& p : all) existing.push_back(p.name);
    details["existing"] = existing;
    const std::string message =
        fmt::format("partition '{}' (named by {}) does not exist on {}; it has: {}", cp.name, by,
                    clusterName(f), listNames(existing));
    const std::string fix =
        fmt::format("set {} to an existing partition, or create '{}' in slurm.conf", by, cp.name);
    const bool only_gpu_default =
        cp.named_by == std::vector<std::string>{"partitions.gpu"} && site.gpu_series.empty();
    if (only_gpu_default) {
      return warnCheck(name, message + " (this site defines no GPU series, so nothing uses it)",
                       fix, details);
    }
    return failCheck(name, message, fix, details);
  }
  details["state"] = it->state;
  details["nodes"] = it->nodes;
  details["total_nodes"] = it->total_nodes;
  const std::string state =
      it->state.empty() ? "state not reported" : fmt::format("{}", fmt::join(it->state, ","));
  const bool up =
      it->state.empty() || std::find(it->state.begin(), it->state.end(), "UP") != it->state.end();
  if (!up) {
    return warnCheck(
        name,
        fmt::format("partition '{}' is {}: jobs queue there but do not start", cp.name, state),
        fmt::format("`scontrol update partitionname={} state=UP` once its nodes are "
                    "ready",
                    cp.name),
        details);
  }
  if (it->total_nodes == 0 && it->nodes.empty()) {
    return warnCheck(name, fmt::format("partition '{}' has no nodes", cp.name),
                     fmt::format("add nodes to '{}' in slurm.conf (Nodes=…)", cp.name), details);
  }
  details["grace_time"] = it->grace_time ? json(*it->grace_time) : json(nullptr);
  details["preempt_mode"] = it->preempt_mode ? json(*it->preempt_mode) : json(nullptr);
  if (f.conf && *f.conf) {
    details["cluster_preemption"] = {{"preempt_type", (*f.conf)->preempt_type},
                                     {"preempt_mode", (*f.conf)->preempt_mode},
                                     {"preempt_parameters", (*f.conf)->preempt_parameters}};
  } else {
    details["cluster_preemption"] = nullptr;
  }
  return okCheck(name,
                 fmt::format("partition '{}' exists ({}, {} node{}: {}); {}", cp.name, state,
                             it->total_nodes, it->total_nodes == 1 ? "" : "s", it->nodes,
                             preemptionOutcome(site.slurm.preemption_warning, *it, f.conf)),
                 details);
}

CheckResult checkOneSeries(const catalog::SiteConfig& site, const catalog::GpuSeries& s,
                           const SlurmFacts& f) {
  const std::string name = "gpu_series/" + s.name;
  const std::vector<std::string> partitions = partitionsForSeries(site, s);
  const std::string where = fmt::format("{}", fmt::join(partitions, ", "));
  const std::string gres = s.gres_type.empty() ? "gpu" : "gpu:" + s.gres_type;
  json details = {{"series", s.name},
                  {"constraint", s.slurm_constraint ? json(*s.slurm_constraint) : json(nullptr)},
                  {"gres_type", s.gres_type},
                  {"gpus_per_node", s.gpus_per_node},
                  {"partitions", partitions}};
  if (!s.slurm_constraint) {
    return warnCheck(name,
                     fmt::format("series '{}' has no slurm_constraint: launch refuses every pool "
                                 "of it (fail-closed), so no job can use it",
                                 s.name),
                     fmt::format("add `slurm_constraint: FEATURE` to series '{}' to run it{}",
                                 s.name, constraintSuggestion(s, f)),
                     details);
  }
  const std::string& text = *s.slurm_constraint;
  auto constraint = Constraint::parse(text);
  if (!constraint) {
    return warnCheck(name,
                     fmt::format("doctor cannot evaluate slurm_constraint of series '{}': {}",
                                 s.name, constraint.error().message),
                     "check it by hand on a Slurm host (`sinfo -N -o '%N %P %f %G'`); doctor "
                     "reads features joined by & (and), | (or) and parentheses",
                     details);
  }
  if (auto why = whyNoClusterFacts(f)) return skipCheck(name, *why);
  if (!f.nodes || !*f.nodes) {
    const std::string error = f.nodes ? f.nodes->error().describe() : "slurmrestd was not asked";
    return failCheck(name, "cannot list the nodes (GET /nodes/): " + error,
                     "read slurmrestd's log for this request", details);
  }
  const auto& nodes = **f.nodes;

  std::set<std::string> known;
  for (const auto& n : nodes)
    for (const auto& feature : featuresOf(n)) known.insert(feature);
  std::vector<std::string> unknown;
  for (const auto& feature : constraint->features())
    if (!known.count(feature)) unknown.push_back(feature);
  if (!unknown.empty()) {
    details["unknown_features"] = unknown;
    return failCheck(
        name,
        fmt::format("slurm_constraint '{}' of series '{}' names {} no node has ({}): Slurm "
                    "refuses every job of this series (invalid feature specification)",
                    text, s.name, unknown.size() == 1 ? "a feature" : "features",
                    listNames(unknown)),
        fmt::format("use features the nodes have ({}), or give the nodes the feature in "
                    "slurm.conf (Features=…)",
                    listNames(std::vector<std::string>(known.begin(), known.end()))),
        details);
  }

  // With node counts (fat*4) the request spans several nodes: judge each feature alone.
  auto satisfies = [&](const NodeInfo& n) {
    if (!constraint->usesCounts()) return constraint->matches(featuresOf(n));
    const auto have = featuresOf(n);
    return std::any_of(constraint->features().begin(), constraint->features().end(),
                       [&](const std::string& feature) {
                         return std::find(have.begin(), have.end(), feature) != have.end();
                       });
  };
  std::vector<const NodeInfo*> here;
  std::vector<const NodeInfo*> elsewhere;
  for (const auto& n : nodes) {
    if (!satisfies(n)) continue;
    (inAny(n, partitions) ? here : elsewhere).push_back(&n);
  }
  if (here.empty() && elsewhere.empty()) {
    return failCheck(name,
                     fmt::format("no node satisfies slurm_constraint '{}' of series '{}' (its "
                                 "features exist, but no node has them together)",
                                 text, s.name),
                     "change slurm_constraint to what one node offers, or the nodes' features",
                     details);
  }
  const auto& candidates = here.empty() ? elsewhere : here;
  int64_t most = 0;
  std::vector<const NodeInfo*> enough;
  json listed = json::array();
  for (const auto* n : candidates) {
    const int64_t gpus = gpusOfType(parseGres(n->gres), s.gres_type);
    listed.push_back(nodeJson(*n, gpus));
    most = std::max(most, gpus);
    if (gpus >= s.gpus_per_node) enough.push_back(n);
  }
  details["matching_nodes"] = listed;
  if (most == 0) {
    return failCheck(name,
                     fmt::format("none of the nodes that satisfy '{}' has GRES {}: {}", text, gres,
                                 withGres(candidates)),
                     s.gres_type.empty()
                         ? "declare the nodes' GPUs as GRES (Gres=gpu:N in slurm.conf)"
                         : fmt::format("set gres_type of series '{}' to the GPU type those nodes "
                                       "declare, or change slurm_constraint so it selects nodes "
                                       "with {}",
                                       s.name, gres),
                     details);
  }
  if (enough.empty()) {
    return failCheck(
        name,
        fmt::format("series '{}' says gpus_per_node: {}, but the nodes that satisfy "
                    "'{}' have at most {} GPUs of GRES {} ({}): Slurm refuses a pool "
                    "asking for more",
                    s.name, s.gpus_per_node, text, most, gres, withGres(candidates)),
        fmt::format("set gpus_per_node: {} for series '{}' (the most one node has)", most, s.name),
        details);
  }
  if (here.empty()) {
    std::vector<std::string> parts;
    for (const auto* n : enough)
      for (const auto& p : n->partitions)
        if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
    return warnCheck(name,
                     fmt::format("no node of partition {} satisfies '{}'; nodes {} (partition {}) "
                                 "do, so pools of series '{}' must name one of those partitions",
                                 where, text, listNames(names(enough)), listNames(parts), s.name),
                     "set partitions.gpu to a partition holding these nodes, or name it as "
                     "`partition:` in the pools of this series",
                     details);
  }
  if (std::all_of(enough.begin(), enough.end(),
                  [](const NodeInfo* n) { return unavailable(*n); })) {
    std::vector<std::string> states;
    for (const auto* n : enough)
      states.push_back(fmt::format("{} {}", n->name, fmt::join(n->state, ",")));
    return warnCheck(name,
                     fmt::format("every node that can run series '{}' is unavailable ({}): its "
                                 "jobs will pend",
                                 s.name, listNames(states)),
                     "bring the nodes back (`scontrol update nodename=NODE state=resume` once "
                     "healthy)",
                     details);
  }
  return okCheck(name,
                 fmt::format("slurm_constraint '{}' selects {} in partition {}, with GRES {} "
                             "(up to {} per node; the series needs {})",
                             text, listNames(names(enough)), where, gres, most, s.gpus_per_node),
                 details);
}

}  // namespace

std::vector<ConfiguredPartition> configuredPartitions(const catalog::SiteConfig& site) {
  std::vector<ConfiguredPartition> out;
  auto add = [&](const std::string& partition, const std::string& by) {
    if (partition.empty()) return;
    for (auto& existing : out) {
      if (existing.name != partition) continue;
      if (std::find(existing.named_by.begin(), existing.named_by.end(), by) ==
          existing.named_by.end()) {
        existing.named_by.push_back(by);
      }
      return;
    }
    out.push_back({partition, {by}});
  };
  add(site.partitions.gpu, "partitions.gpu");
  add(site.partitions.cpu, "partitions.cpu");
  for (const auto& series : site.gpu_series) {
    for (const auto& p : partitionsForSeries(site, series)) {
      // The default GPU partition is already listed; only a series' own partition is new.
      if (p != site.partitions.gpu) add(p, "gpu_series " + series.name);
    }
  }
  return out;
}

std::vector<std::string> partitionsForSeries(const catalog::SiteConfig& site,
                                             const catalog::GpuSeries& /*series*/) {
  // Launch puts a GPU pool in the pool's own partition, else partitions.gpu; the site file
  // gives a series no partition of its own (yet), so its default is partitions.gpu.
  return {site.partitions.gpu};
}

std::vector<CheckResult> checkPartitions(const catalog::SiteConfig& site, const SlurmFacts& f) {
  std::vector<CheckResult> out;
  for (const auto& cp : configuredPartitions(site)) out.push_back(checkOnePartition(site, cp, f));
  return out;
}

std::vector<CheckResult> checkGpuSeries(const catalog::SiteConfig& site, const SlurmFacts& f) {
  std::vector<CheckResult> out;
  for (const auto& series : site.gpu_series) out.push_back(checkOneSeries(site, series, f));
  return out;
}

}  // namespace tuneplane::doctor
