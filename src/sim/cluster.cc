#include "sim/cluster.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

namespace tuneplane::sim {

const NodeConfig* ClusterConfig::node(const std::string& wanted) const {
  for (const auto& n : nodes)
    if (n.name == wanted) return &n;
  return nullptr;
}

const PartitionConfig* ClusterConfig::partition(const std::string& wanted) const {
  for (const auto& p : partitions)
    if (p.name == wanted) return &p;
  return nullptr;
}

const PartitionConfig* ClusterConfig::defaultPartition() const {
  for (const auto& p : partitions)
    if (p.is_default) return &p;
  return partitions.empty() ? nullptr : &partitions.front();
}

ClusterConfig defaultCluster() {
  ClusterConfig c;
  c.nodes = {{"gpu1", 4, 4096, 2, "h100", {"h100"}},
             {"gpu2", 4, 4096, 2, "a100", {"a100"}},
             {"cpu1", 4, 4096, 0, "", {}}};
  c.partitions = {{"gpu", {"gpu1", "gpu2"}, false}, {"cpu", {"cpu1"}, true}};
  // The test cluster's users (uids as in its transcripts), whether or not this host has them.
  c.users = {
      {"tpuser", 1001, 1001, "tpuser"}, {"alice", 1002, 1002, "alice"}, {"bob", 1003, 1003, "bob"}};
  return c;
}

namespace {

std::vector<std::string> stringList(const YAML::Node& node) {
  std::vector<std::string> out;
  if (!node) return out;
  if (!node.IsSequence()) return {node.as<std::string>()};
  for (const auto& item : node) out.push_back(item.as<std::string>());
  return out;
}

// `users:` — [{name, uid, gid (default: uid), group (default: name)}].
std::vector<UnixUser> parseUsers(const YAML::Node& node) {
  std::vector<UnixUser> out;
  for (const auto& u : node) {
    UnixUser user;
    user.name = u["name"].as<std::string>();
    user.uid = u["uid"].as<uint32_t>();
    user.gid = u["gid"] ? u["gid"].as<uint32_t>() : user.uid;
    user.group = u["group"] ? u["group"].as<std::string>() : user.name;
    out.push_back(std::move(user));
  }
  return out;
}

// `accounting:` — {accounts: [...], qos: [...], users: [{name, accounts, default_account,
// qos, default_qos}]}.
Result<AccountingConfig> parseAccounting(const YAML::Node& node) {
  AccountingConfig a;
  if (!node.IsMap()) return fail("sim.cluster", "accounting", "accounting must be a mapping");
  a.accounts = stringList(node["accounts"]);
  if (node["qos"]) a.qos = stringList(node["qos"]);
  for (const auto& u : node["users"]) {
    AccountingUser user;
    user.name = u["name"].as<std::string>();
    user.accounts = stringList(u["accounts"]);
    if (u["default_account"]) user.default_account = u["default_account"].as<std::string>();
    if (u["qos"]) user.qos = stringList(u["qos"]);
    if (u["default_qos"]) user.default_qos = u["default_qos"].as<std::string>();
    const std::string field = "accounting.users." + user.name;
    for (const auto& account : user.accounts)
      if (std::find(a.accounts.begin(), a.accounts.end(), account) == a.accounts.end())
        return fail("sim.cluster", field, "unknown account " + account);
    if (!user.default_account.empty() && std::find(user.accounts.begin(), user.accounts.end(),
                                                   user.default_account) == user.accounts.end())
      return fail("sim.cluster", field, "default_account is not one of its accounts");
    for (const auto& qos : user.qos)
      if (std::find(a.qos.begin(), a.qos.end(), qos) == a.qos.end())
        return fail("sim.cluster", field, "unknown qos " + qos);
    a.users.push_back(std::move(user));
  }
  return a;
}

}  // namespace

Result<ClusterConfig> parseCluster(const std::string& text) {
  ClusterConfig c;
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return fail("sim.cluster", "", "cluster file must be a mapping");
    if (root["name"]) c.name = root["name"].as<std::string>();
    if (root["cluster_id"]) c.cluster_id = root["cluster_id"].as<uint16_t>();
    if (root["default_memory_mb"]) c.default_memory_mb = root["default_memory_mb"].as<int64_t>();
    for (const auto& n : root["nodes"]) {
      NodeConfig node;
      node.name = n["name"].as<std::string>();
      if (n["cpus"]) node.cpus = n["cpus"].as<int>();
      if (n["memory_mb"]) node.memory_mb = n["memory_mb"].as<int64_t>();
      if (n["gpus"]) node.gpus = n["gpus"].as<int>();
      if (n["gpu_type"]) node.gpu_type = n["gpu_type"].as<std::string>();
      if (n["features"])
        for (const auto& f : n["features"]) node.features.push_back(f.as<std::string>());
      c.nodes.push_back(std::move(node));
    }
    for (const auto& p : root["partitions"]) {
      PartitionConfig part;
      part.name = p["name"].as<std::string>();
      if (p["default"]) part.is_default = p["default"].as<bool>();
      const auto nodes = p["nodes"];
      if (nodes && nodes.IsSequence()) {
        for (const auto& n : nodes) part.nodes.push_back(n.as<std::string>());
      } else if (nodes) {
        part.nodes = expandHostlist(nodes.as<std::string>());
      }
      c.partitions.push_back(std::move(part));
    }
    if (root["users"]) c.users = parseUsers(root["users"]);
    if (root["accounting"]) {
      auto accounting = parseAccounting(root["accounting"]);
      if (!accounting) return fail(accounting.error());
      c.accounting = std::move(*accounting);
    }
  } catch (const YAML::Exception& e) {
    return fail("sim.cluster", "", std::string("cannot parse cluster file: ") + e.what());
  }
  if (c.nodes.empty() || c.partitions.empty())
    return fail("sim.cluster", "", "cluster file needs nodes and partitions");
  for (const auto& p : c.partitions)
    for (const auto& n : p.nodes)
      if (!c.node(n)) return fail("sim.cluster", "partitions." + p.name, "unknown node " + n);
  return c;
}

Result<ClusterConfig> loadCluster(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail("sim.cluster", path, "cannot read cluster file");
  std::stringstream text;
  text << in.rdbuf();
  return parseCluster(text.str());
}

std::vector<std::string> expandHostlist(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  int depth = 0;
  auto flush = [&]() {
    if (item.empty()) return;
    const auto open = item.find('[');
    const auto close = item.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      out.push_back(item);
    } else {
      const std::string prefix = item.substr(0, open);
      const std::string suffix = item.substr(close + 1);
      std::stringstream ranges(item.substr(open + 1, close - open - 1));
      std::string range;
      while (std::getline(ranges, range, ',')) {
        const auto dash = range.find('-');
        const std::string lo = range.substr(0, dash);
        const std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
        const long a = std::stol(lo), b = std::stol(hi);
        for (long i = a; i <= b; ++i) {
          std::string num = std::to_string(i);
          if (num.size() < lo.size()) num.insert(0, lo.size() - num.size(), '0');
          out.push_back(prefix + num + suffix);
        }
      }
    }
    item.clear();
  };
  for (char ch : list) {
    if (ch == '[') ++depth;
    if (ch == ']') --depth;
    if (ch == ',' && depth == 0) {
      flush();
    } else {
      item += ch;
    }
  }
  flush();
  return out;
}

std::string compressHostlist(const std::vector<std::string>& names) {
  // Groups "prefixN" names with the same prefix into prefix[a-b,c]; order kept by prefix.
  std::vector<std::string> prefixes;
  std::map<std::string, std::vector<long>> numbers;
  std::vector<std::string> plain;
  for (const auto& name : names) {
    size_t cut = name.size();
    while (cut > 0 && std::isdigit(static_cast<unsigned char>(name[cut - 1]))) --cut;
    if (cut == name.size() || cut == 0 || name[cut] == '0') {
      prefixes.push_back("=" + name);
      continue;
    }
    const std::string prefix = name.substr(0, cut);
    if (!numbers.count(prefix)) prefixes.push_back(prefix);
    numbers[prefix].push_back(std::stol(name.substr(cut)));
  }
  std::string out;
  for (const auto& prefix : prefixes) {
    if (!out.empty()) out += ',';
    if (prefix[0] == '=') {
      out += prefix.substr(1);
      continue;
    }
    auto nums = numbers[prefix];
    std::sort(nums.begin(), nums.end());
    if (nums.size() == 1) {
      out += prefix + std::to_string(nums[0]);
      continue;
    }
    out += prefix + "[";
    for (size_t i = 0; i < nums.size();) {
      size_t j = i;
      while (j + 1 < nums.size() && nums[j + 1] == nums[j] + 1) ++j;
      if (i) out += ',';
      out += std::to_string(nums[i]);
      if (j > i) out += "-" + std::to_string(nums[j]);
      i = j + 1;
    }
    out += "]";
  }
  return out;
}

}  // namespace tuneplane::sim
