// A small OpenAPI 3 schema checker for the tests: type (object, array, string, integer,
// number, boolean), properties, items, enum, required, $ref to #/components/schemas/…,
// int32 ranges. Stricter than slurmrestd on purpose: an unknown property is an error (the
// server only warns, so a misspelt field would silently do nothing). One leniency, because
// real accepted requests use it: a plain integer where a *_no_val_struct is expected.
// Any schema keyword it does not know is reported, so it never passes by ignorance.
// Header-only because tests/CMakeLists.txt compiles only *_test.cc files.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tuneplane::slurm::openapi {

class SchemaChecker {
 public:
  explicit SchemaChecker(nlohmann::json document) : document_(std::move(document)) {}

  // Every problem of `value` against components.schemas[name], each "<path>: <problem>";
  // empty when it conforms.
  std::vector<std::string> check(const nlohmann::json& value, const std::string& name) const {
    std::vector<std::string> errors;
    checkNode(value, refSchema("#/components/schemas/" + name, errors, "#"), "#", errors);
    return errors;
  }

  // The property names of components.schemas[name] (empty when it has none).
  std::set<std::string> propertyNames(const std::string& name) const {
    std::set<std::string> names;
    const auto& schema = document_["components"]["schemas"][name];
    if (schema.contains("properties")) {
      for (const auto& [key, _] : schema["properties"].items()) names.insert(key);
    }
    return names;
  }

 private:
  const nlohmann::json& refSchema(const std::string& ref, std::vector<std::string>& errors,
                                  const std::string& path) const {
    static const nlohmann::json kEmpty = nlohmann::json::object();
    const std::string prefix = "#/components/schemas/";
    if (ref.rfind(prefix, 0) != 0) {
      errors.push_back(path + ": unsupported $ref " + ref);
      return kEmpty;
    }
    const auto& schemas = document_["components"]["schemas"];
    const std::string name = ref.substr(prefix.size());
    if (!schemas.contains(name)) {
      errors.push_back(path + ": unresolved $ref " + ref);
      return kEmpty;
    }
    return schemas[name];
  }

  static bool endsWith(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  }

  void checkNode(const nlohmann::json& value, const nlohmann::json& schema, const std::string& path,
                 std::vector<std::string>& errors) const {
    static const std::set<std::string> kKnown = {"$ref",        "type",   "properties",
                                                 "items",       "enum",   "required",
                                                 "description", "format", "deprecated"};
    for (const auto& [key, _] : schema.items()) {
      if (!kKnown.count(key)) errors.push_back(path + ": checker does not support '" + key + "'");
    }
    if (schema.contains("$ref")) {
      const std::string ref = schema["$ref"];
      if (endsWith(ref, "_no_val_struct") && value.is_number_integer()) return;
      checkNode(value, refSchema(ref, errors, path), path, errors);
      return;
    }
    if (schema.contains("type")) {
      const std::string type = schema["type"];
      bool ok = false;
      if (type == "object")
        ok = value.is_object();
      else if (type == "array")
        ok = value.is_array();
      else if (type == "string")
        ok = value.is_string();
      else if (type == "integer")
        ok = value.is_number_integer();
      else if (type == "number")
        ok = value.is_number();
      else if (type == "boolean")
        ok = value.is_boolean();
      else
        errors.push_back(path + ": unknown type " + type);
      if (!ok) {
        errors.push_back(path + ": expected " + type + ", got " + value.type_name());
        return;
      }
      if (type == "integer" && schema.value("format", "") == "int32") {
        const bool fits = value.is_number_unsigned() ? value.get<std::uint64_t>() <= INT32_MAX
                                                     : value.get<std::int64_t>() >= INT32_MIN &&
                                                           value.get<std::int64_t>() <= INT32_MAX;
        if (!fits) errors.push_back(path + ": out of int32 range");
      }
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const auto& option : schema["enum"]) found = found || option == value;
      if (!found) errors.push_back(path + ": " + value.dump() + " is not in the enum");
    }
    if (value.is_object() && schema.contains("properties")) {
      const auto& properties = schema["properties"];
      for (const auto& [key, member] : value.items()) {
        if (!properties.contains(key)) {
          errors.push_back(path + "/" + key + ": unknown property");
          continue;
        }
        checkNode(member, properties[key], path + "/" + key, errors);
      }
    }
    if (value.is_object() && schema.contains("required")) {
      for (const auto& key : schema["required"]) {
        if (!value.contains(key.get<std::string>())) {
          errors.push_back(path + ": missing required " + key.get<std::string>());
        }
      }
    }
    if (value.is_array() && schema.contains("items")) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        checkNode(value[i], schema["items"], path + "/" + std::to_string(i), errors);
      }
    }
  }

  nlohmann::json document_;
};

}  // namespace tuneplane::slurm::openapi
