#include "pipeline/node_exclusion.h"

#include <algorithm>

namespace tuneplane::pipeline {
namespace {

bool has(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// Whether `node` could run component `c`: in its partition, and with its constraint (a plain
// feature name here, as the site's GPU series give it) among the node's features.
bool couldRun(const slurm::NodeInfo& node, const launch::Component& c) {
  if (!has(node.partitions, c.partition)) return false;
  if (!c.constraint) return true;
  return has(node.features, *c.constraint) || has(node.active_features, *c.constraint);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::vector<std::string> applyExclusions(
    launch::LaunchRequest& request, const std::map<std::string, std::string>& avoid,
    const std::optional<std::vector<slurm::NodeInfo>>& inventory) {
  std::vector<std::string> notes;
  if (avoid.empty()) return notes;
  if (!inventory) {
    std::vector<std::string> names;
    for (const auto& [node, why] : avoid) names.push_back(node);
    notes.push_back("not excluding " + joined(names) +
                    ": Slurm's node list could not be read to check that the pools still fit");
    return notes;
  }
  for (launch::Component& c : request.components) {
    std::vector<std::string> excluded;
    int others = 0;
    for (const slurm::NodeInfo& node : *inventory) {
      if (!couldRun(node, c)) continue;
      if (avoid.count(node.name)) {
        excluded.push_back(node.name);
      } else {
        ++others;
      }
    }
    if (excluded.empty()) continue;
    std::string why;
    for (const auto& n : excluded) why += (why.empty() ? "" : "; ") + n + ": " + avoid.at(n);
    if (others < c.nodes) {
      notes.push_back("pool " + c.pool_name + " keeps " + joined(excluded) + " (" + why +
                      "): without it only " + std::to_string(others) + " node(s) of partition " +
                      c.partition + " could run it, and it needs " + std::to_string(c.nodes));
      continue;
    }
    c.excluded_nodes = excluded;
    notes.push_back("pool " + c.pool_name + " excludes " + joined(excluded) + " (" + why + ")");
  }
  return notes;
}

}  // namespace tuneplane::pipeline
