#include "spec/spec_parser.h"

#include <fstream>
#include <set>
#include <sstream>

#include "common/workdir_tree.h"
#include "spec/error_codes.h"
#include "spec/framework_config.h"
#include "spec/framework_rules.h"
#include "spec/names.h"
#include "spec/spec_limits.h"
#include "spec/yaml_reader.h"

namespace tuneplane::spec {
namespace {

using R = YamlReader;

// Every check reports into the reader and carries on, so one pass finds every problem.
class SpecParser {
 public:
  PartialSpec parse(std::string_view text) {
    const auto root = r_.parseRoot(text);
    if (!root) return {std::move(spec_), r_.takeErrors()};
    r_.checkMap(*root, "", {"apiVersion", "kind", "metadata", "spec"});
    parseHeader(*root);
    const YAML::Node metadata = r_.require(*root, "metadata", "");
    if (R::present(metadata)) parseMetadata(metadata, "metadata");
    const YAML::Node body = r_.require(*root, "spec", "");
    if (R::present(body) &&
        r_.checkMap(body, "spec",
                    {"framework", "resources", "data", "retry", "scheduling", "workdir"})) {
      const YAML::Node framework = r_.require(body, "framework", "spec");
      if (R::present(framework)) parseFramework(framework, "spec.framework");
      const YAML::Node resources = r_.require(body, "resources", "spec");
      if (R::present(resources)) parseResources(resources, "spec.resources");
      const YAML::Node data = R::get(body, "data");
      if (R::present(data)) parseData(data, "spec.data");
      const YAML::Node retry = R::get(body, "retry");
      if (R::present(retry)) parseRetry(retry, "spec.retry");
      const YAML::Node scheduling = R::get(body, "scheduling");
      if (R::present(scheduling)) parseScheduling(scheduling, "spec.scheduling");
      parseWorkdir(body);
    }
    PartialSpec partial{std::move(spec_), r_.takeErrors()};
    // Last: the framework's rules weigh fields from several sections (the config and
    // spec.retry.resume), each judged only where it was read cleanly.
    Errors framework = judgeFramework(partial, framework_keys_);
    partial.errors.insert(partial.errors.end(), framework.begin(), framework.end());
    return partial;
  }

 private:
  void parseHeader(const YAML::Node& root) {
    const YAML::Node api = r_.require(root, "apiVersion", "");
    if (R::present(api)) {
      if (auto v = r_.str(api, "apiVersion")) {
        if (*v != kApiVersion) {
          r_.report("unsupported_api_version", "apiVersion",
                    "'" + *v + "' is not supported; use " + kApiVersion);
        }
        spec_.api_version = *v;
      }
    }
    const YAML::Node kind = r_.require(root, "kind", "");
    if (R::present(kind)) {
      if (auto v = r_.str(kind, "kind")) {
        if (*v == "TrainingJob") {
          spec_.kind = JobKind::kTrainingJob;
        } else if (*v == "Playground") {
          spec_.kind = JobKind::kPlayground;
        } else if (*v == "ModelDeployment") {
          spec_.kind = JobKind::kModelDeployment;
        } else {
          r_.report("unknown_kind", "kind",
                    "'" + *v + "' is not a kind (TrainingJob, Playground, ModelDeployment)");
        }
      }
    }
  }

  void parseMetadata(const YAML::Node& node, const std::string& path) {
    if (!r_.checkMap(node, path, {"name", "labels"})) return;
    const YAML::Node name = r_.require(node, "name", path);
    if (R::present(name)) {
      if (auto v = r_.str(name, R::child(path, "name"))) {
        if (!isDnsLabel(*v)) {
          r_.report("invalid_name", R::child(path, "name"),
                    "'" + *v +
                        "' is not a DNS label (lower-case letters, digits and '-', starting and "
                        "ending with a letter or digit, at most 63 characters)");
        }
        spec_.metadata.name = *v;
      }
    }
    const YAML::Node labels = R::get(node, "labels");
    const std::string labels_path = R::child(path, "labels");
    if (R::present(labels) && fewEnough(labels, labels_path, kMaxLabels)) {
      if (auto v = r_.strMap(labels, labels_path)) {
        bool ok = true;
        for (const auto& [key, value] : *v) {
          if (!isLabelKey(key)) {
            r_.report("invalid_name", R::child(labels_path, key),
                      "a label key is [prefix/]name, the name at most 63 letters, digits, '-', "
                      "'_' or '.'");
          }
          ok = shortEnough(value.size(), kMaxLabelValueBytes, R::child(labels_path, key),
                           "a label value") &&
               ok;
        }
        if (ok) spec_.metadata.labels = std::move(*v);
      }
    }
  }

  void parseFramework(const YAML::Node& node, const std::string& path) {
    if (!r_.checkMap(node, path,
                     {"name", "task", "runtime_id", "image", "command", "args", "env", "config"}))
      return;
    Framework& f = spec_.framework;
    for (auto [key, out] : {std::pair{"name", &f.name}, std::pair{"task", &f.task}}) {
      const YAML::Node n = r_.require(node, key, path);
      if (!R::present(n)) continue;
      if (auto v = r_.str(n, R::child(path, key))) {
        if (!isDnsLabel(*v)) {
          r_.report("invalid_name", R::child(path, key),
                    "'" + *v + "' must be lower-case letters, digits and '-'");
        }
        *out = *v;
      }
    }
    f.runtime_id = nonEmpty(node, "runtime_id", path);
    f.image = nonEmpty(node, "image", path);
    // Whether a command or a config belongs here depends on the framework: judgeFramework.
    const YAML::Node command = R::get(node, "command");
    framework_keys_.command = R::present(command);
    if (R::present(command)) {
      if (auto v = argv(command, R::child(path, "command"))) {
        if (v->empty()) {
          r_.report("empty_list", R::child(path, "command"), "needs at least the program to run");
        } else if (v->front().empty()) {
          r_.report("empty_string", R::index(R::child(path, "command"), 0),
                    "the program to run is empty");
        }
        f.command = std::move(*v);
      }
    }
    const YAML::Node args = R::get(node, "args");
    framework_keys_.args = R::present(args);
    if (R::present(args)) {
      if (auto v = argv(args, R::child(path, "args"))) f.args = std::move(*v);
    }
    const YAML::Node env = R::get(node, "env");
    if (R::present(env)) parseEnv(env, R::child(path, "env"));
    const YAML::Node config = R::get(node, "config");
    framework_keys_.config = R::present(config);
    if (R::present(config)) f.config = readFrameworkConfig(r_, config, R::child(path, "config"));
  }

  void parseEnv(const YAML::Node& node, const std::string& path) {
    if (!fewEnough(node, path, kMaxEnvEntries)) return;
    auto env = r_.strMap(node, path);
    if (!env) return;
    bool ok = true;
    for (const auto& [name, value] : *env) {
      if (!isEnvName(name)) {
        r_.report("invalid_name", R::child(path, name),
                  "an environment variable name must match [A-Za-z_][A-Za-z0-9_]*");
      } else if (isReservedEnvName(name)) {
        r_.report(
            "reserved_env", R::child(path, name),
            "names starting with TUNEPLANE_, SLURM_ or tp_ are set by the platform, Slurm or the "
            "batch script");
      }
      // NAME=value is one string of the process's environment.
      ok = shortEnough(name.size() + 1 + value.size(), kMaxArgBytes, R::child(path, name),
                       "NAME=value") &&
           ok;
    }
    if (ok) spec_.framework.env = std::move(*env);
  }

  // command or args: at most kMaxArgvEntries entries, each shorter than the kernel takes.
  std::optional<std::vector<std::string>> argv(const YAML::Node& node, const std::string& path) {
    if (!fewEnough(node, path, kMaxArgvEntries)) return std::nullopt;
    auto v = r_.strList(node, path, Text::kAnyScalar);
    if (!v) return std::nullopt;
    bool ok = true;
    for (std::size_t i = 0; i < v->size(); ++i) {
      ok = shortEnough((*v)[i].size(), kMaxArgBytes, R::index(path, i), "an argument") && ok;
    }
    if (!ok) return std::nullopt;
    return v;
  }

  // A list or map given with more than `max` entries is too_many_entries (and not read).
  bool fewEnough(const YAML::Node& node, const std::string& path, std::size_t max) {
    if ((node.IsSequence() || node.IsMap()) && node.size() > max) {
      r_.report("too_many_entries", path,
                "has " + std::to_string(node.size()) + " entries; at most " + std::to_string(max) +
                    " are allowed");
      return false;
    }
    return true;
  }

  // A string of `size` bytes over `max` is too_long; the message never quotes it.
  bool shortEnough(std::size_t size, std::size_t max, const std::string& field,
                   std::string_view what) {
    if (size <= max) return true;
    r_.report("too_long", field,
              std::string(what) + " of " + std::to_string(size) + " bytes is longer than the " +
                  std::to_string(max) + " allowed");
    return false;
  }

  void parseResources(const YAML::Node& node, const std::string& path) {
    if (!r_.checkMap(node, path, {"time_limit", "pools"})) return;
    // Optional: without it the site's default_time_limit, else the partition's, applies.
    const YAML::Node tl = R::get(node, "time_limit");
    if (R::present(tl)) spec_.resources.time_limit = r_.timeLimit(tl, R::child(path, "time_limit"));
    const std::string pools_path = R::child(path, "pools");
    const YAML::Node pools = r_.require(node, "pools", path);
    if (!R::present(pools)) return;
    if (!pools.IsSequence()) {
      r_.report("wrong_type", pools_path, "must be a list of pools");
      return;
    }
    if (pools.size() == 0) r_.report("empty_list", pools_path, "needs at least one pool");
    std::set<std::string> names;
    for (std::size_t i = 0; i < pools.size(); ++i) {
      const std::string p = R::index(pools_path, i);
      Pool pool;
      if (parsePool(pools[i], p, pool) && !pool.name.empty() && !names.insert(pool.name).second) {
        r_.report("duplicate_name", R::child(p, "name"), "pool '" + pool.name + "' is named twice");
      }
      spec_.resources.pools.push_back(std::move(pool));
    }
  }

  bool parsePool(const YAML::Node& node, const std::string& path, Pool& pool) {
    if (!r_.checkMap(node, path,
                     {"name", "gpu_series", "nodes", "gpus_per_node", "cpus", "memory_gb",
                      "scratch_gb", "partition"}))
      return false;
    const YAML::Node name = r_.require(node, "name", path);
    if (R::present(name)) {
      if (auto v = r_.str(name, R::child(path, "name"))) {
        if (!isDnsLabel(*v)) {
          r_.report("invalid_name", R::child(path, "name"), "'" + *v + "' is not a DNS label");
        }
        pool.name = *v;
      }
    }
    pool.gpu_series = nonEmpty(node, "gpu_series", path);
    pool.partition = nonEmpty(node, "partition", path);
    if (auto v = count(node, "nodes", path, 1, false)) pool.nodes = *v;
    if (auto v = count(node, "gpus_per_node", path, 0, false)) pool.gpus_per_node = *v;
    if (auto v = count(node, "cpus", path, 1, true)) pool.cpus = *v;
    if (auto v = count(node, "memory_gb", path, 1, true)) pool.memory_gb = *v;
    if (R::present(R::get(node, "scratch_gb")))
      pool.scratch_gb = count(node, "scratch_gb", path, 0, false);
    return true;
  }

  void parseData(const YAML::Node& node, const std::string& path) {
    if (!r_.checkMap(node, path, {"volumes"})) return;
    const YAML::Node volumes = R::get(node, "volumes");
    if (!R::present(volumes)) return;
    const std::string vpath = R::child(path, "volumes");
    if (!volumes.IsSequence()) {
      r_.report("wrong_type", vpath, "must be a list");
      return;
    }
    // Entries are kept only to be named in launch/'s refusal; their inner shape belongs to
    // backends that support volumes, so it is not checked here.
    for (std::size_t i = 0; i < volumes.size(); ++i) {
      const YAML::Node v = volumes[i];
      const YAML::Node name = v.IsMap() ? R::get(v, "name") : v;
      Volume volume{R::index(vpath, i)};
      if (name.IsScalar() && name.Scalar().find('\0') == std::string::npos)
        volume.name = name.Scalar();
      spec_.data.volumes.push_back(std::move(volume));
    }
  }

  void parseRetry(const YAML::Node& node, const std::string& path) {
    if (!r_.checkMap(node, path,
                     {"max_attempts", "backoff_seconds", "on", "resume", "max_preemptions"})) {
      return;
    }
    if (auto v = count(node, "max_attempts", path, 1, false)) spec_.retry.max_attempts = *v;
    if (auto v = count(node, "max_preemptions", path, 0, false)) spec_.retry.max_preemptions = *v;
    if (auto v = count(node, "backoff_seconds", path, 0, false)) spec_.retry.backoff_seconds = *v;
    const YAML::Node resume = R::get(node, "resume");
    if (R::present(resume)) {
      if (auto v = r_.boolean(resume, R::child(path, "resume"))) spec_.retry.resume = *v;
    }
    const YAML::Node on = R::get(node, "on");
    if (!R::present(on)) return;
    if (auto v = r_.str(on, R::child(path, "on"))) {
      if (*v == "infrastructure") {
        spec_.retry.on = RetryOn::kInfrastructure;
      } else if (*v == "any") {
        spec_.retry.on = RetryOn::kAny;
      } else if (*v == "never") {
        spec_.retry.on = RetryOn::kNever;
      } else {
        r_.report("invalid_value", R::child(path, "on"),
                  "'" + *v + "' is not one of infrastructure, any, never");
      }
    }
  }

  void parseScheduling(const YAML::Node& node, const std::string& path) {
    if (!r_.checkMap(node, path, {"account", "qos"})) return;
    for (auto [key, out] : {std::pair{"account", &spec_.scheduling.account},
                            std::pair{"qos", &spec_.scheduling.qos}}) {
      auto v = r_.optStr(node, key, path);
      if (!v) continue;
      if (!isSlurmName(*v)) {
        r_.report("invalid_name", R::child(path, key),
                  "'" + *v + "' is not a Slurm name (letters, digits, '_', '-', '.'; at most 64)");
        continue;
      }
      *out = *v;
    }
  }

  void parseWorkdir(const YAML::Node& body) {
    auto v = r_.optStr(body, "workdir", "spec");
    if (!v) return;
    std::string hex = workdir::referenceHex(*v);
    if (hex.empty()) {
      r_.report("invalid_value", "spec.workdir",
                "must be 'sha256:' and 64 lower-case hex digits, the name of an uploaded folder "
                "(tuneplane submit --workdir DIR writes it)");
      return;
    }
    spec_.workdir = std::move(hex);
  }

  // An optional string that, when given, must not be empty.
  std::optional<std::string> nonEmpty(const YAML::Node& map, std::string_view key,
                                      const std::string& path) {
    auto v = r_.optStr(map, key, path);
    if (v && v->empty()) {
      r_.report("empty_string", R::child(path, key), "must not be empty; omit it instead");
      return std::nullopt;
    }
    return v;
  }

  // An integer that must be >= min (1: non_positive, 0: negative). Absent → nullopt, and a
  // missing_field report when required.
  std::optional<int> count(const YAML::Node& map, std::string_view key, const std::string& path,
                           int min, bool required) {
    const YAML::Node node = required ? r_.require(map, key, path) : R::get(map, key);
    if (!R::present(node)) return std::nullopt;
    const std::string field = R::child(path, key);
    const auto v = r_.int32(node, field);
    if (!v) return std::nullopt;
    if (*v < min) {
      r_.report(min >= 1 ? "non_positive" : "negative", field,
                "must be at least " + std::to_string(min) + ", not " + std::to_string(*v));
      return std::nullopt;
    }
    return v;
  }

  YamlReader r_{"spec", kSpecDocumentLimits};
  JobSpec spec_;
  FrameworkKeys framework_keys_;
};

}  // namespace

PartialSpec parsePartialJobSpec(std::string_view text) {
  return SpecParser().parse(text);
}

PartialSpec loadPartialJobSpecFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {{}, {Error{codes::kUnreadableFile, path, "cannot read the spec file"}}};
  std::ostringstream text;
  text << in.rdbuf();
  return parsePartialJobSpec(text.str());
}

namespace {

Checked<JobSpec> completeOrErrors(PartialSpec partial) {
  if (!partial.complete()) return failAll(std::move(partial.errors));
  return std::move(partial.spec);
}

}  // namespace

Checked<JobSpec> parseJobSpec(std::string_view text) {
  return completeOrErrors(parsePartialJobSpec(text));
}

Checked<JobSpec> loadJobSpecFile(const std::string& path) {
  return completeOrErrors(loadPartialJobSpecFile(path));
}

}  // namespace tuneplane::spec
