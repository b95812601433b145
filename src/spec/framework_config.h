// spec.framework.config: a first-class framework's own configuration (LlamaFactory's keys),
// read from the spec's YAML or JSON into JSON values, so that what the user wrote means one
// thing wherever it goes (the store, launch.json, the YAML file TunePlane writes for the
// framework: launch/config_yaml.h). Scalars are typed as YAML 1.2's core schema and JSON type
// them: a quoted scalar is a string; an unquoted one is null, a boolean, an integer, a float,
// or else a string. One trap is refused rather than guessed: an unquoted yes/no/on/off, which
// YAML 1.2 reads as a string but LlamaFactory's YAML 1.1 reader as a boolean (and the string
// "no" is true to Python). Not thread-safe (reports into the reader); never throws.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "spec/yaml_reader.h"

namespace tuneplane::spec {

// How deep lists and maps may nest inside the config. LlamaFactory's keys are flat; a few
// take a small map (ray_init_kwargs). The bound keeps every walk over the value shallow.
inline constexpr int kMaxConfigDepth = 16;
// The bytes of one key. YAML readers take a key of at most 1,024 characters on its line
// (PyYAML and yaml-cpp both), and a key may be written escaped (\xXX: four characters a byte);
// LlamaFactory's argument names are a few dozen.
inline constexpr std::size_t kMaxConfigKeyBytes = 200;

// Reads `node` (present) as a config map. Reports into `reader`, each problem with its path
// under `path`: wrong_type (not a map; a tag other than !!str; a key that is not a string),
// duplicate_key, nul_byte, invalid_utf8, out_of_range (an integer beyond 64 bits), invalid_value
// (infinity, NaN), ambiguous_value (unquoted yes/no/on/off), too_deep, too_long (a key).
// nullopt when anything was reported.
std::optional<nlohmann::json> readFrameworkConfig(YamlReader& reader, const YAML::Node& node,
                                                  const std::string& path);

}  // namespace tuneplane::spec
