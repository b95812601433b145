// The runtime registry parser (parseRuntimeRegistry / loadRuntimeRegistryFile), declared in
// site_loader.h. Artifact paths resolve against the registry file's directory.
#include <set>

#include "catalog/file_paths.h"
#include "catalog/site_loader.h"
#include "spec/names.h"
#include "spec/yaml_reader.h"

namespace tuneplane::catalog {
namespace {

using R = spec::YamlReader;

// Lower-case letters and digits, with '-', '_' and '.' inside: "custom-torch-2.3".
bool isRuntimeId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(id.front()) || !alnum(id.back())) return false;
  for (char c : id) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// 64 hex digits in any case; returned lower-case.
std::optional<std::string> normalSha256(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  std::string out(hex);
  for (char& c : out) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  return out;
}

class RegistryParser {
 public:
  explicit RegistryParser(std::optional<std::string> base_dir) : base_dir_(std::move(base_dir)) {}

  Checked<RuntimeRegistry> parse(std::string_view text) {
    const auto root = r_.parseRoot(text);
    if (!root) return failAll(r_.takeErrors());
    r_.checkMap(*root, "", {"runtimes"});
    const YAML::Node list = r_.require(*root, "runtimes", "");
    if (R::present(list)) {
      if (!list.IsSequence()) {
        r_.report("wrong_type", "runtimes", "must be a list of runtimes");
      } else {
        std::set<std::string> ids;
        for (std::size_t i = 0; i < list.size(); ++i) {
          const std::string p = R::index("runtimes", i);
          Runtime runtime;
          if (!parseRuntime(list[i], p, runtime)) continue;
          if (!runtime.id.empty() && !ids.insert(runtime.id).second) {
            r_.report("duplicate_id", R::child(p, "id"),
                      "runtime id '" + runtime.id + "' appears twice");
          }
          registry_.runtimes.push_back(std::move(runtime));
        }
      }
    }
    if (r_.hasErrors()) return failAll(r_.takeErrors());
    return std::move(registry_);
  }

 private:
  bool parseRuntime(const YAML::Node& node, const std::string& p, Runtime& runtime) {
    if (!r_.checkMap(node, p, {"id", "format", "path", "sha256", "frameworks"})) return false;
    if (auto v = required(node, "id", p)) {
      if (!isRuntimeId(*v)) {
        r_.report("invalid_name", R::child(p, "id"),
                  "'" + *v + "' must be lower-case letters and digits with '-', '_' or '.' inside");
      }
      runtime.id = *v;
    }
    if (auto v = required(node, "format", p)) {
      if (*v == "sqsh") {
        runtime.format = ArtifactFormat::kSqsh;
      } else if (*v == "sif") {
        runtime.format = ArtifactFormat::kSif;
      } else {
        r_.report("invalid_value", R::child(p, "format"), "'" + *v + "' is not one of sqsh, sif");
      }
    }
    if (auto v = required(node, "path", p)) {
      auto resolved = v->empty() ? std::nullopt : resolveAgainst(*v, base_dir_);
      if (!resolved) {
        r_.report("invalid_path", R::child(p, "path"),
                  "must be an absolute path, or relative to the registry file's directory when "
                  "loaded from a file");
      } else {
        runtime.path = *resolved;
      }
    }
    if (auto v = required(node, "sha256", p, spec::Text::kAnyScalar)) {
      if (auto hex = normalSha256(*v)) {
        runtime.sha256 = *hex;
      } else {
        r_.report("invalid_sha256", R::child(p, "sha256"), "must be 64 hexadecimal digits");
      }
    }
    const YAML::Node frameworks = R::get(node, "frameworks");
    if (R::present(frameworks)) {
      const std::string fp = R::child(p, "frameworks");
      if (auto v = r_.strList(frameworks, fp)) {
        for (std::size_t i = 0; i < v->size(); ++i) {
          if (!spec::isDnsLabel((*v)[i])) {
            r_.report("invalid_name", R::index(fp, i), "a framework name is a DNS label");
          }
        }
        runtime.frameworks = std::move(*v);
      }
    }
    return true;
  }

  std::optional<std::string> required(const YAML::Node& node, std::string_view key,
                                      const std::string& p, spec::Text text = spec::Text::kString) {
    const YAML::Node n = r_.require(node, key, p);
    if (!R::present(n)) return std::nullopt;
    return r_.str(n, R::child(p, key), text);
  }

  std::optional<std::string> base_dir_;
  R r_{"registry"};
  RuntimeRegistry registry_;
};

}  // namespace

Checked<RuntimeRegistry> parseRuntimeRegistry(std::string_view text) {
  return RegistryParser(std::nullopt).parse(text);
}

Checked<RuntimeRegistry> loadRuntimeRegistryFile(const std::string& path) {
  const auto text = readWholeFile(path);
  if (!text) {
    return failAll({Error{"registry.unreadable_file", path, "cannot read the runtime registry"}});
  }
  return RegistryParser(absoluteDirectoryOf(path)).parse(*text);
}

}  // namespace tuneplane::catalog
