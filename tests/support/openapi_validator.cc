// See openapi_validator.h.
#include "support/openapi_validator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "support/test_paths.h"

namespace tuneplane::test {
namespace {

using nlohmann::json;

// The schema keywords this validator checks, and the ones that are only notes.
const std::set<std::string>& knownKeywords() {
  static const std::set<std::string> known = {
      "$ref",  "type",  "enum",    "properties", "required",    "additionalProperties",
      "items", "anyOf", "minimum", "maximum",    "description", "format"};
  return known;
}

std::vector<std::string> splitPath(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto slash = path.find('/', start);
    parts.emplace_back(path.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

bool isParameter(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

// Whether `segments` matches `tmpl`; `absorb`: a last parameter named {path} may span the
// rest (the server's /ui/{path} serves nested files).
bool matches(const std::vector<std::string>& tmpl, const std::vector<std::string>& segments,
             bool absorb) {
  if (tmpl.size() > segments.size()) return false;
  if (tmpl.size() < segments.size() && !(absorb && !tmpl.empty() && tmpl.back() == "{path}")) {
    return false;
  }
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (isParameter(tmpl[i])) {
      if (segments[i].empty()) return false;
    } else if (tmpl[i] != segments[i]) {
      return false;
    }
  }
  return true;
}

std::string mediaType(std::string_view content_type) {
  std::string type(content_type.substr(0, content_type.find(';')));
  while (!type.empty() && type.back() == ' ') type.pop_back();
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return type;
}

std::string typeOf(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "boolean";
  if (value.is_number_integer()) return "integer";
  if (value.is_number()) return "number";
  if (value.is_string()) return "string";
  if (value.is_array()) return "array";
  return "object";
}

bool hasType(const json& value, const std::string& type) {
  const std::string actual = typeOf(value);
  return actual == type || (type == "number" && actual == "integer");
}

void collectProblems(const OpenApiValidator& validator, const json& schema,
                     const std::string& where, std::vector<std::string>& problems);

}  // namespace

OpenApiValidator::OpenApiValidator(json document) : document_(std::move(document)) {}

const OpenApiValidator& OpenApiValidator::repository() {
  static const OpenApiValidator validator = [] {
    std::ifstream in(sourceDir() / "docs" / "openapi.json");
    std::stringstream text;
    text << in.rdbuf();
    return OpenApiValidator(json::parse(text.str(), nullptr, /*allow_exceptions=*/false));
  }();
  return validator;
}

const json& OpenApiValidator::resolve(const json& node) const {
  static const json kNothing;
  const json* at = &node;
  for (int hops = 0; at->is_object() && at->contains("$ref") && hops < 16; ++hops) {
    const std::string ref = (*at)["$ref"].get<std::string>();
    if (!ref.starts_with("#/")) return kNothing;
    try {
      at = &document_.at(json::json_pointer(ref.substr(1)));
    } catch (const json::exception&) {
      return kNothing;
    }
  }
  return *at;
}

namespace {

void collectProblems(const OpenApiValidator& validator, const json& schema,
                     const std::string& where, std::vector<std::string>& problems) {
  if (schema.is_boolean()) return;
  if (!schema.is_object()) {
    problems.push_back(where + ": a schema must be an object or a boolean");
    return;
  }
  for (const auto& [key, value] : schema.items()) {
    if (!knownKeywords().contains(key)) {
      problems.push_back(where + ": keyword '" + key + "' is not checked by the test validator");
    }
  }
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"].get<std::string>();
    if (!ref.starts_with("#/") ||
        !validator.document().contains(json::json_pointer(ref.substr(1)))) {
      problems.push_back(where + ": $ref '" + ref + "' resolves to nothing");
    }
  }
  if (schema.contains("properties")) {
    for (const auto& [name, sub] : schema["properties"].items()) {
      collectProblems(validator, sub, where + ".properties." + name, problems);
    }
  }
  for (const char* key : {"additionalProperties", "items"}) {
    if (schema.contains(key)) collectProblems(validator, schema[key], where + "." + key, problems);
  }
  if (schema.contains("anyOf")) {
    for (std::size_t i = 0; i < schema["anyOf"].size(); ++i) {
      collectProblems(validator, schema["anyOf"][i], where + ".anyOf[" + std::to_string(i) + "]",
                      problems);
    }
  }
}

}  // namespace

std::vector<std::string> OpenApiValidator::documentProblems() const {
  std::vector<std::string> problems;
  if (!document_.is_object() || document_.value("openapi", "") != "3.1.0") {
    return {"not an OpenAPI 3.1.0 document (or docs/openapi.json could not be read)"};
  }
  for (const auto& [name, schema] : document_["components"]["schemas"].items()) {
    collectProblems(*this, schema, "components.schemas." + name, problems);
  }
  const auto walkContent = [&](const json& content, const std::string& where) {
    for (const auto& [type, media] : content.items()) {
      if (media.contains("schema"))
        collectProblems(*this, media["schema"], where + "." + type, problems);
    }
  };
  for (const auto& [name, response] : document_["components"]["responses"].items()) {
    if (response.contains("content"))
      walkContent(response["content"], "components.responses." + name);
  }
  for (const auto& [path, item] : document_["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      const std::string where = method + " " + path;
      for (const auto& p : op.value("parameters", json::array())) {
        collectProblems(*this, p["schema"], where + " parameter " + p.value("name", ""), problems);
      }
      if (op.contains("requestBody")) walkContent(op["requestBody"]["content"], where + " body");
      for (const auto& [status, response] : op["responses"].items()) {
        const json& r = resolve(response);
        if (r.is_null()) problems.push_back(where + " " + status + ": $ref resolves to nothing");
        if (r.contains("content")) walkContent(r["content"], where + " " + status);
      }
    }
  }
  return problems;
}

std::string OpenApiValidator::validate(const json& value, const json& schema) const {
  return validateAt(value, schema, "$", 0);
}

std::string OpenApiValidator::validateAt(const json& value, const json& schema,
                                         const std::string& where, int depth) const {
  if (depth > 64) return where + ": schema nests too deeply (a $ref cycle?)";
  if (schema.is_boolean()) return schema.get<bool>() ? "" : where + ": nothing is allowed here";
  if (!schema.is_object()) return where + ": the document's schema is not an object";
  for (const auto& [key, unused] : schema.items()) {
    if (!knownKeywords().contains(key)) return where + ": unsupported keyword '" + key + "'";
  }
  if (schema.contains("$ref")) {
    const json& target = resolve(schema);
    if (target.is_null()) return where + ": $ref " + schema["$ref"].dump() + " resolves to nothing";
    if (auto problem = validateAt(value, target, where, depth + 1); !problem.empty())
      return problem;
  }
  if (schema.contains("type")) {
    const json& type = schema["type"];
    bool any = false;
    for (const auto& t : type.is_array() ? type : json::array({type})) {
      any = any || hasType(value, t.get<std::string>());
    }
    if (!any) return where + ": " + typeOf(value) + " where the document says " + type.dump();
  }
  if (schema.contains("enum")) {
    const auto& options = schema["enum"];
    if (std::find(options.begin(), options.end(), value) == options.end()) {
      return where + ": " + value.dump() + " is not one of " + options.dump();
    }
  }
  if (value.is_number()) {
    if (schema.contains("minimum") && value.get<double>() < schema["minimum"].get<double>()) {
      return where + ": " + value.dump() + " is below the minimum";
    }
    if (schema.contains("maximum") && value.get<double>() > schema["maximum"].get<double>()) {
      return where + ": " + value.dump() + " is above the maximum";
    }
  }
  if (value.is_object()) {
    for (const auto& name : schema.value("required", json::array())) {
      if (!value.contains(name.get<std::string>())) {
        return where + ": no '" + name.get<std::string>() + "' (required by the document)";
      }
    }
    const json properties = schema.value("properties", json::object());
    for (const auto& [name, member] : value.items()) {
      const std::string at = where + "." + name;
      if (properties.contains(name)) {
        if (auto problem = validateAt(member, properties[name], at, depth + 1); !problem.empty()) {
          return problem;
        }
      } else if (schema.contains("additionalProperties")) {
        if (auto problem = validateAt(member, schema["additionalProperties"], at, depth + 1);
            !problem.empty()) {
          return problem == at + ": nothing is allowed here"
                     ? at + ": a member the document does not describe"
                     : problem;
        }
      }
    }
  }
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (auto problem = validateAt(value[i], schema["items"],
                                    where + "[" + std::to_string(i) + "]", depth + 1);
          !problem.empty()) {
        return problem;
      }
    }
  }
  if (schema.contains("anyOf")) {
    std::string first;
    for (const auto& option : schema["anyOf"]) {
      auto problem = validateAt(value, option, where, depth + 1);
      if (problem.empty()) return "";
      if (first.empty()) first = problem;
    }
    return where + ": matches none of anyOf (first: " + first + ")";
  }
  return "";
}

std::string OpenApiValidator::matchPath(std::string_view target) const {
  const std::string_view path = target.substr(0, target.find('?'));
  const auto segments = splitPath(path);
  if (!document_.is_object() || !document_.contains("paths")) return "";
  for (bool absorb : {false, true}) {
    for (const auto& [tmpl, item] : document_["paths"].items()) {
      if (matches(splitPath(tmpl), segments, absorb)) return tmpl;
    }
  }
  return "";
}

std::vector<std::string> OpenApiValidator::operations() const {
  std::vector<std::string> out;
  if (!document_.is_object() || !document_.contains("paths")) return out;
  for (const auto& [tmpl, item] : document_["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      std::string upper = method;
      std::transform(upper.begin(), upper.end(), upper.begin(),
                     [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      out.push_back(upper + " " + tmpl);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const json* OpenApiValidator::responseFor(std::string_view method, std::string_view target,
                                          int status, std::string& problem) const {
  const std::string what =
      std::string(method) + " " + std::string(target) + " → " + std::to_string(status) + ": ";
  if (!document_.is_object() || !document_.contains("paths")) {
    problem = what + "docs/openapi.json could not be read";
    return nullptr;
  }
  std::string verb(method == "HEAD" ? "get" : method);
  std::transform(verb.begin(), verb.end(), verb.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string tmpl = matchPath(target);
  const json* op = nullptr;
  if (!tmpl.empty() && document_["paths"][tmpl].contains(verb))
    op = &document_["paths"][tmpl][verb];
  if (op == nullptr) {
    // No operation: only the router's and the transport's refusals may answer.
    static const std::set<int> kRefusals = {400, 404, 405, 413, 431, 503};
    if (!kRefusals.contains(status)) {
      problem = what + "no operation in the document for " + verb + " " +
                (tmpl.empty() ? "(no path matches)" : tmpl);
      return nullptr;
    }
    const json& refusal = resolve({{"$ref", "#/components/responses/NotFound"}});
    if (refusal.is_null()) problem = what + "the document has no components.responses.NotFound";
    return refusal.is_null() ? nullptr : &refusal;
  }
  const json& responses = (*op)["responses"];
  const std::string code = std::to_string(status);
  const std::string range = code.substr(0, 1) + "XX";
  for (const std::string& key : {code, range, std::string("default")}) {
    if (responses.contains(key)) return &resolve(responses[key]);
  }
  problem = what + "status not in the document's responses for " + verb + " " + tmpl;
  return nullptr;
}

std::string OpenApiValidator::checkStatus(std::string_view method, std::string_view target,
                                          int status) const {
  std::string problem;
  responseFor(method, target, status, problem);
  return problem;
}

std::string OpenApiValidator::checkAnswer(std::string_view method, std::string_view target,
                                          int status, std::string_view content_type,
                                          const std::string& body) const {
  const std::string what =
      std::string(method) + " " + std::string(target) + " → " + std::to_string(status) + ": ";
  const bool head = method == "HEAD";
  std::string problem;
  const json* response = responseFor(method, target, status, problem);
  if (response == nullptr) return problem;
  if (!response->contains("content")) {
    return body.empty() || head ? "" : what + "a body where the document describes none";
  }
  const json& content = (*response)["content"];
  const std::string type = mediaType(content_type);
  const json* media = nullptr;
  if (content.contains(type)) {
    media = &content[type];
  } else if (content.contains("*/*")) {
    media = &content["*/*"];
  } else {
    return what + "Content-Type '" + std::string(content_type) + "' is not among " + [&] {
      std::string types;
      for (const auto& [t, unused] : content.items()) types += (types.empty() ? "" : ", ") + t;
      return types;
    }();
  }
  if (head || type != "application/json" || !media->contains("schema")) return "";
  const json value = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return what + "the body is not JSON";
  const std::string mismatch = validate(value, (*media)["schema"]);
  return mismatch.empty() ? "" : what + mismatch;
}

void validateAnswersOf(httplib::Client& client) {
  client.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    const std::string problem = OpenApiValidator::repository().checkAnswer(
        req.method, req.path, res.status, res.get_header_value("Content-Type"), res.body);
    if (!problem.empty())
      ADD_FAILURE() << "answer not as docs/openapi.json describes it: " << problem;
  });
}

}  // namespace tuneplane::test
