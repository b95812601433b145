// The site file parser (parseSiteConfig / loadSiteConfigFile) and the path choosers.
// The runtime registry parser is in registry_loader.cc.
#include "catalog/site_loader.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "catalog/file_paths.h"
#include "spec/names.h"
#include "spec/yaml_reader.h"

namespace tuneplane::catalog {
namespace {

using spec::Text;
using spec::YamlReader;
using R = spec::YamlReader;

// slurm.api_version's form: "auto", or a REST API version "v<major>.<minor>.<micro>". Which
// versions TunePlane speaks is the slurm module's to say (slurm/slurm_api.h): the launch
// pipeline holds a site file's version to that list as it loads it (pipeline/launch_pipeline.h).
bool isApiVersionForm(const std::string& v) {
  if (v == "auto") return true;
  if (v.size() < 6 || v[0] != 'v') return false;
  int dots = 0;
  bool digit_before = false;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] == '.') {
      if (!digit_before) return false;
      ++dots;
      digit_before = false;
    } else if (v[i] >= '0' && v[i] <= '9') {
      digit_before = true;
    } else {
      return false;
    }
  }
  return dots == 2 && digit_before;
}

bool isGresType(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool hasControl(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

class SiteParser {
 public:
  explicit SiteParser(std::optional<std::string> base_dir) : base_dir_(std::move(base_dir)) {}

  Checked<SiteConfig> parse(std::string_view text) {
    const auto root = r_.parseRoot(text);
    if (!root) return failAll(r_.takeErrors());
    r_.checkMap(*root, "",
                {"slurm", "partitions", "gpu_series", "container_runtime", "staging_root",
                 "staging", "mounts", "runtime_registry_file", "ray", "default_time_limit",
                 "server"});  // `tuneplane serve`'s section, read by api/server_config.h
    const YAML::Node slurm = r_.require(*root, "slurm", "");
    if (R::present(slurm)) parseSlurm(slurm, "slurm");
    const YAML::Node partitions = R::get(*root, "partitions");
    if (R::present(partitions) &&
        r_.checkMap(partitions, "partitions", {"gpu", "cpu", "allowed"})) {
      if (auto v = nonEmpty(partitions, "gpu", "partitions")) site_.partitions.gpu = *v;
      if (auto v = nonEmpty(partitions, "cpu", "partitions")) site_.partitions.cpu = *v;
      const YAML::Node allowed = R::get(partitions, "allowed");
      if (R::present(allowed)) parseAllowedPartitions(allowed, "partitions.allowed");
    }
    const YAML::Node series = R::get(*root, "gpu_series");
    if (R::present(series)) parseGpuSeries(series, "gpu_series");
    const YAML::Node runtime = r_.require(*root, "container_runtime", "");
    if (R::present(runtime)) {
      if (auto v = r_.str(runtime, "container_runtime")) {
        if (*v == "pyxis") {
          site_.container_runtime = ContainerRuntime::kPyxis;
        } else if (*v == "apptainer") {
          site_.container_runtime = ContainerRuntime::kApptainer;
        } else {
          r_.report("invalid_value", "container_runtime",
                    "'" + *v + "' is not one of pyxis, apptainer");
        }
      }
    }
    const YAML::Node staging = r_.require(*root, "staging_root", "");
    if (R::present(staging)) {
      if (auto v = r_.str(staging, "staging_root")) {
        if (auto problem = mountPathProblem(*v)) {
          r_.report("invalid_path", "staging_root", *problem);
        }
        site_.staging_root = *v;
      }
    }
    const YAML::Node staging_section = R::get(*root, "staging");
    if (R::present(staging_section)) parseStaging(staging_section, "staging");
    const YAML::Node mounts = R::get(*root, "mounts");
    if (R::present(mounts)) parseMounts(mounts, "mounts");
    site_.runtime_registry_file = file(*root, "runtime_registry_file", "");
    const YAML::Node ray = R::get(*root, "ray");
    if (R::present(ray)) parseRay(ray, "ray");
    const YAML::Node time_limit = R::get(*root, "default_time_limit");
    if (R::present(time_limit)) {
      site_.default_time_limit = r_.timeLimit(time_limit, "default_time_limit");
    }
    if (r_.hasErrors()) return failAll(r_.takeErrors());
    return std::move(site_);
  }

 private:
  void parseSlurm(const YAML::Node& node, const std::string& path) {
    if (!r_.checkMap(
            node, path,
            {"url", "api_version", "user", "token_file", "jwt_key_file", "token_lifespan",
             "account", "qos", "job_environment", "ca_file", "client_cert", "client_key",
             "connect_timeout", "request_timeout", "unrunnable_grace", "failed_node_quarantine",
             "accept_exposed_credentials", "identity", "preemption_warning"}))
      return;
    SlurmSite& s = site_.slurm;
    const YAML::Node url = r_.require(node, "url", path);
    if (R::present(url)) {
      if (auto v = r_.str(url, R::child(path, "url"))) {
        const bool ok = (v->starts_with("http://") && v->size() > 7) ||
                        (v->starts_with("https://") && v->size() > 8) ||
                        (v->starts_with("unix:///") && v->size() > 8);
        if (!ok || hasControl(*v)) {
          r_.report("invalid_url", R::child(path, "url"),
                    "must be http://host:port, https://host:port or unix:///path/to/socket");
        }
        s.url = *v;
      }
    }
    if (auto v = r_.optStr(node, "api_version", path)) {
      if (!isApiVersionForm(*v)) {
        r_.report("unsupported_api_version", R::child(path, "api_version"),
                  "'" + *v +
                      "' is not a REST API version: auto (the newest both slurmrestd and "
                      "TunePlane speak) or one such as v0.0.45");
      }
      s.api_version = *v;
    }
    const YAML::Node user = r_.require(node, "user", path);
    if (R::present(user)) {
      if (auto v = r_.str(user, R::child(path, "user"))) {
        if (v->empty() || hasControl(*v)) {
          r_.report("invalid_name", R::child(path, "user"), "must be a user name");
        }
        s.user = *v;
      }
    }
    if (auto v = r_.optStr(node, "identity", path)) {
      if (*v == "shared") {
        s.identity = IdentityMode::kShared;
      } else if (*v == "per_user") {
        s.identity = IdentityMode::kPerUser;
      } else {
        r_.report("invalid_value", R::child(path, "identity"),
                  "'" + *v +
                      "' is not an identity mode: shared (every job runs as slurm.user) or "
                      "per_user (every job runs as its TunePlane user's Unix user)");
      }
    }
    s.token_file = file(node, "token_file", path);
    s.jwt_key_file = file(node, "jwt_key_file", path);
    const bool has_token = R::present(R::get(node, "token_file"));
    const bool has_key = R::present(R::get(node, "jwt_key_file"));
    if (has_token && has_key) {
      r_.report("conflicting_fields", R::child(path, "jwt_key_file"),
                "give exactly one of token_file and jwt_key_file, not both");
    } else if (!has_token && !has_key) {
      r_.report("missing_field", R::child(path, "token_file"),
                "give exactly one of token_file and jwt_key_file");
    }
    if (auto v = duration(node, "token_lifespan", path)) {
      s.token_lifespan = std::chrono::duration_cast<std::chrono::seconds>(*v);
    }
    s.account = nonEmpty(node, "account", path);
    s.qos = nonEmpty(node, "qos", path);
    const YAML::Node env = R::get(node, "job_environment");
    if (R::present(env)) {
      const std::string env_path = R::child(path, "job_environment");
      if (auto v = r_.strMap(env, env_path)) {
        for (const auto& [name, value] : *v) {
          if (!spec::isEnvName(name)) {
            r_.report("invalid_name", R::child(env_path, name),
                      "an environment variable name must match [A-Za-z_][A-Za-z0-9_]*");
          }
        }
        s.job_environment = std::move(*v);
      }
    }
    s.ca_file = file(node, "ca_file", path);
    s.client_cert = file(node, "client_cert", path);
    s.client_key = file(node, "client_key", path);
    if (R::present(R::get(node, "client_cert")) != R::present(R::get(node, "client_key"))) {
      r_.report("missing_field", R::child(path, s.client_cert ? "client_key" : "client_cert"),
                "client_cert and client_key go together");
    }
    if (auto v = duration(node, "connect_timeout", path)) s.connect_timeout = *v;
    if (auto v = duration(node, "request_timeout", path)) s.request_timeout = *v;
    if (auto v = duration(node, "unrunnable_grace", path)) s.unrunnable_grace = *v;
    if (auto v = duration(node, "failed_node_quarantine", path)) s.failed_node_quarantine = *v;
    const YAML::Node accept = R::get(node, "accept_exposed_credentials");
    if (R::present(accept)) {
      if (auto v = r_.boolean(accept, R::child(path, "accept_exposed_credentials"))) {
        s.accept_exposed_credentials = *v;
      }
    }
    const YAML::Node warning = R::get(node, "preemption_warning");
    if (R::present(warning)) {
      parsePreemptionWarning(warning, R::child(path, "preemption_warning"));
    }
  }

  // `on` (the default: USR2, 120 s), `off`, or {signal: USR2, before_end: 120s}, either key
  // optional (the map turns it on).
  void parsePreemptionWarning(const YAML::Node& node, const std::string& path) {
    PreemptionWarning& w = site_.slurm.preemption_warning;
    if (node.IsScalar()) {
      if (node.Scalar() == "off" || node.Scalar() == "on") {
        w.enabled = node.Scalar() == "on";
      } else {
        r_.report("invalid_value", path,
                  "'" + node.Scalar() +
                      "' is not a preemption warning: off, on, or a map with "
                      "signal and before_end");
      }
      return;
    }
    if (!r_.checkMap(node, path, {"signal", "before_end"})) return;
    w.enabled = true;
    if (auto v = r_.optStr(node, "signal", path)) {
      const auto& known = kPreemptionSignals;
      if (std::find(std::begin(known), std::end(known), *v) == std::end(known)) {
        r_.report("invalid_value", R::child(path, "signal"),
                  "'" + *v + "' is not a signal TunePlane sends: one of " + preemptionSignalList());
      } else {
        w.signal = *v;
      }
    }
    if (auto v = duration(node, "before_end", path)) {
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(*v);
      if (seconds.count() < 1 || seconds.count() > 65535 || seconds != *v) {
        r_.report("invalid_duration", R::child(path, "before_end"),
                  "must be whole seconds from 1 to 65535 (Slurm's kill_warning_delay is 16 "
                  "bits)");
      } else {
        w.before_end = seconds;
      }
    }
  }

  void parseAllowedPartitions(const YAML::Node& node, const std::string& path) {
    if (!node.IsSequence()) {
      r_.report("wrong_type", path, "must be a list of partition names");
      return;
    }
    std::vector<std::string> names;
    for (std::size_t i = 0; i < node.size(); ++i) {
      auto name = r_.str(node[i], R::index(path, i));
      if (!name) continue;
      if (name->empty() || hasControl(*name)) {
        r_.report("invalid_value", R::index(path, i), "must be a non-empty single-line string");
      } else if (std::find(names.begin(), names.end(), *name) == names.end()) {
        names.push_back(*name);
      }
    }
    site_.partitions.allowed = std::move(names);
  }

  void parseGpuSeries(const YAML::Node& node, const std::string& path) {
    if (!node.IsSequence()) {
      r_.report("wrong_type", path, "must be a list of GPU series");
      return;
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string p = R::index(path, i);
      const YAML::Node entry = node[i];
      if (!r_.checkMap(entry, p, {"name", "slurm_constraint", "gpus_per_node", "gres_type"}))
        continue;
      GpuSeries series;
      const YAML::Node name = r_.require(entry, "name", p);
      if (R::present(name)) {
        if (auto v = r_.str(name, R::child(p, "name"))) {
          if (!isGresType(*v)) {
            r_.report("invalid_name", R::child(p, "name"),
                      "must be letters, digits, '_', '-' and '.'");
          } else if (!names.insert(*v).second) {
            r_.report("duplicate_name", R::child(p, "name"), "series '" + *v + "' is named twice");
          }
          series.name = *v;
        }
      }
      // Absent is legal here: launch/ then rejects every pool of this series (fail-closed).
      if (auto v = r_.optStr(entry, "slurm_constraint", p)) {
        if (v->empty() || hasControl(*v)) {
          r_.report("invalid_value", R::child(p, "slurm_constraint"),
                    "must be a non-empty Slurm feature expression; omit it to disable the series");
        } else {
          series.slurm_constraint = *v;
        }
      }
      const YAML::Node gpus = r_.require(entry, "gpus_per_node", p);
      if (R::present(gpus)) {
        if (auto v = r_.int32(gpus, R::child(p, "gpus_per_node"))) {
          if (*v < 1) {
            r_.report("non_positive", R::child(p, "gpus_per_node"), "must be at least 1");
          }
          series.gpus_per_node = *v;
        }
      }
      if (auto v = r_.optStr(entry, "gres_type", p)) {
        if (!isGresType(*v)) {
          r_.report("invalid_name", R::child(p, "gres_type"),
                    "must be letters, digits, '_', '-' and '.' (it goes into gres/gpu:TYPE:N)");
        }
        series.gres_type = *v;
      }
      site_.gpu_series.push_back(std::move(series));
    }
  }

  void parseMounts(const YAML::Node& node, const std::string& path) {
    if (!node.IsSequence()) {
      r_.report("wrong_type", path, "must be a list of mounts");
      return;
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string p = R::index(path, i);
      const YAML::Node entry = node[i];
      if (!r_.checkMap(entry, p, {"source", "target", "read_only"})) continue;
      SiteMount mount;
      for (auto [key, out] :
           {std::pair{"source", &mount.source}, std::pair{"target", &mount.target}}) {
        const YAML::Node n = r_.require(entry, key, p);
        if (!R::present(n)) continue;
        if (auto v = r_.str(n, R::child(p, key))) {
          if (auto problem = mountPathProblem(*v))
            r_.report("invalid_path", R::child(p, key), *problem);
          *out = *v;
        }
      }
      const YAML::Node ro = R::get(entry, "read_only");
      if (R::present(ro)) {
        if (auto v = r_.boolean(ro, R::child(p, "read_only"))) mount.read_only = *v;
      }
      site_.mounts.push_back(std::move(mount));
    }
  }

  void parseStaging(const YAML::Node& node, const std::string& path) {
    if (!r_.checkMap(node, path, {"group"})) return;
    // Any name the host's group database may hold (LDAP names can have spaces), but never
    // ':' (the separator of /etc/group).
    if (auto v = nonEmpty(node, "group", path)) {
      if (v->find(':') != std::string::npos) {
        r_.report("invalid_name", R::child(path, "group"), "a group name cannot contain ':'");
      }
      site_.staging.group = *v;
    }
  }

  // Ray's own limits (it refuses the rest at start): ports 1-65535; worker ports and the
  // client server port from 1024; the worker range set as a pair, its top above its bottom.
  // Pinned ports must differ from each other and stay out of the worker range, or Ray's
  // processes would collide on their own node.
  void parseRay(const YAML::Node& node, const std::string& path) {
    if (!r_.checkMap(node, path,
                     {"port", "node_manager_port", "object_manager_port", "min_worker_port",
                      "max_worker_port", "ray_client_server_port", "dashboard_agent_listen_port",
                      "dashboard", "dashboard_port", "join_timeout_seconds", "executable"}))
      return;
    RayConfig& ray = site_.ray;
    for (auto [key, out, lowest] :
         {std::tuple{"port", &ray.port, 1},
          std::tuple{"node_manager_port", &ray.node_manager_port, 1},
          std::tuple{"object_manager_port", &ray.object_manager_port, 1},
          std::tuple{"min_worker_port", &ray.min_worker_port, 1024},
          std::tuple{"max_worker_port", &ray.max_worker_port, 1024},
          std::tuple{"ray_client_server_port", &ray.ray_client_server_port, 1024},
          std::tuple{"dashboard_agent_listen_port", &ray.dashboard_agent_listen_port, 1},
          std::tuple{"dashboard_port", &ray.dashboard_port, 1}}) {
      if (auto v = r_.optInt(node, key, path)) {
        if (*v < lowest || *v > 65535) {
          r_.report("invalid_port", R::child(path, key),
                    "must be a port between " + std::to_string(lowest) + " and 65535");
        }
        *out = *v;
      }
    }
    const YAML::Node dashboard = R::get(node, "dashboard");
    if (R::present(dashboard)) {
      if (auto v = r_.boolean(dashboard, R::child(path, "dashboard"))) ray.dashboard = *v;
    }
    if (ray.dashboard_port && !ray.dashboard) {
      r_.report("conflicting_fields", R::child(path, "dashboard_port"),
                "needs dashboard: true (the dashboard is off unless the site turns it on)");
    }
    checkRayPortsApart(ray, path);
    if (auto v = r_.optInt(node, "join_timeout_seconds", path)) {
      if (*v < 1) r_.report("non_positive", R::child(path, "join_timeout_seconds"), "must be >= 1");
      ray.join_timeout_seconds = *v;
    }
    if (auto v = nonEmpty(node, "executable", path)) ray.executable = *v;
  }

  void checkRayPortsApart(const RayConfig& ray, const std::string& path) {
    if (ray.min_worker_port.has_value() != ray.max_worker_port.has_value()) {
      const char* missing = ray.min_worker_port ? "max_worker_port" : "min_worker_port";
      r_.report("missing_field", R::child(path, missing),
                "min_worker_port and max_worker_port are pinned together");
    } else if (ray.min_worker_port && *ray.max_worker_port <= *ray.min_worker_port) {
      r_.report("invalid_port", R::child(path, "max_worker_port"), "must be above min_worker_port");
    }
    std::vector<std::pair<std::string, int>> seen;
    for (const auto& [name, value] : ray.pinnedPorts()) {
      if (name == "min_worker_port" || name == "max_worker_port") continue;
      for (const auto& [other, other_value] : seen) {
        if (value == other_value) {
          r_.report("invalid_port", R::child(path, name), "is also " + R::child(path, other));
        }
      }
      if (ray.min_worker_port && ray.max_worker_port && value >= *ray.min_worker_port &&
          value <= *ray.max_worker_port) {
        r_.report("invalid_port", R::child(path, name), "lies in the worker port range");
      }
      seen.emplace_back(name, value);
    }
  }

  std::optional<std::string> nonEmpty(const YAML::Node& map, std::string_view key,
                                      const std::string& path) {
    auto v = r_.optStr(map, key, path);
    if (v && (v->empty() || hasControl(*v))) {
      r_.report("invalid_value", R::child(path, key), "must be a non-empty single-line string");
      return std::nullopt;
    }
    return v;
  }

  // A file path, resolved against the site file's directory when relative.
  std::optional<std::string> file(const YAML::Node& map, std::string_view key,
                                  const std::string& path) {
    auto v = nonEmpty(map, key, path);
    if (!v) return std::nullopt;
    auto resolved = resolveAgainst(*v, base_dir_);
    if (!resolved) {
      r_.report("invalid_path", R::child(path, key),
                "a relative path needs the site file's directory; load the site from a file or "
                "give an absolute path");
    }
    return resolved;
  }

  // A positive duration: an integer (seconds) or a string such as "30m" or "500ms".
  std::optional<std::chrono::milliseconds> duration(const YAML::Node& map, std::string_view key,
                                                    const std::string& path) {
    const YAML::Node node = R::get(map, key);
    if (!R::present(node)) return std::nullopt;
    const std::string field = R::child(path, key);
    auto text = r_.str(node, field, Text::kAnyScalar);
    if (!text) return std::nullopt;
    std::optional<std::chrono::milliseconds> d;
    if (!text->empty() && text->find_first_not_of("0123456789") == std::string::npos &&
        text->size() < 10) {
      d = std::chrono::seconds(std::stoll(*text));
    } else {
      d = spec::parseDuration(*text);
    }
    if (!d || d->count() <= 0) {
      r_.report("invalid_duration", field,
                "'" + *text + "' is not a positive duration (seconds, or e.g. 30m, 1h, 500ms)");
      return std::nullopt;
    }
    return d;
  }

  std::optional<std::string> base_dir_;
  YamlReader r_{"site"};
  SiteConfig site_;
};

}  // namespace

Checked<SiteConfig> parseSiteConfig(std::string_view yaml_text) {
  return SiteParser(std::nullopt).parse(yaml_text);
}

Checked<SiteConfig> loadSiteConfigFile(const std::string& path) {
  const auto text = readWholeFile(path);
  if (!text) return failAll({Error{"site.unreadable_file", path, "cannot read the site file"}});
  return SiteParser(absoluteDirectoryOf(path)).parse(*text);
}

Result<std::string> registryPath(const SiteConfig& site,
                                 const std::optional<std::string>& env_override) {
  if (env_override && !env_override->empty()) return *env_override;
  if (site.runtime_registry_file) return *site.runtime_registry_file;
  return fail("site.no_runtime_registry", "runtime_registry_file",
              "no runtime registry: set TUNEPLANE_RUNTIME_REGISTRY_FILE or the site's "
              "runtime_registry_file");
}

Result<std::string> siteFilePath(const std::optional<std::string>& flag,
                                 const std::optional<std::string>& env_value) {
  if (flag && !flag->empty()) return *flag;
  if (env_value && !env_value->empty()) return *env_value;
  return fail("site.no_site_file", "--site",
              "no site file: pass --site or set TUNEPLANE_SITE_FILE");
}

}  // namespace tuneplane::catalog
