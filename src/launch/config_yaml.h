// A JSON object as a YAML file that LlamaFactory reads back to the same values. LlamaFactory
// loads its config with OmegaConf over PyYAML (YAML 1.1), and its JSON loading is broken on
// its main branch (`json.load(Path(...))` in hparams/parser.py), so TunePlane writes YAML, in
// a form both YAML 1.1 and 1.2 readers agree on:
//   - one top-level `key: value` line per key, in key order; a nested list or map is written
//     in flow style on its line ({"a": 1, "b": [2, 3]}), so the file stays flat;
//   - null, true, false; integers in decimal; floats always with a '.' and a signed exponent
//     (1.0e-05), which PyYAML's float pattern needs ("1e-05" is a string to it);
//   - a string bare only when it cannot be read as anything else (letters, digits and
//     "_./-", starting with a letter, '_' or '/', and not a YAML 1.1 word such as yes, on or
//     null); otherwise double-quoted, with '"', '\' and every control, C1, line-separator
//     and non-character escaped (\xXX, \uXXXX), so no byte of a value can end the scalar,
//     start a line, or be folded.
// Pure.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tuneplane::launch {

// The YAML text: `comment` first (each line prefixed "# ", control characters replaced by
// '?'), then the members of `object`. REQUIRES: object.is_object(), with no NaN or infinity
// in it (spec::readFrameworkConfig refuses them).
std::string configYaml(const nlohmann::json& object, std::string_view comment);

// One scalar or collection as written after "key: " (exposed for tests).
std::string yamlValue(const nlohmann::json& value);

}  // namespace tuneplane::launch
