// Measures a YAML (or JSON) document as a reader will see it — every alias expanded — without
// building it, and stops at the first limit it crosses. yaml-cpp's node graph shares an
// anchor's node with each alias, so a 100 KB spec whose args alias an anchored 100 KB string
// a thousand times loads cheaply and explodes only when a reader copies the values out
// (issue 16: 2.4 s and ~500 MB at 104 KB). This pass runs yaml-cpp's event parser instead,
// remembering only each anchor's expanded size, so its memory is bounded by the input's and
// its time by the input's length; YamlReader::parseRoot loads the document only after it.
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tuneplane::spec {

// What a document may hold once its aliases are expanded.
struct DocumentLimits {
  std::size_t max_text_bytes;  // bytes of all scalars, keys included
  std::size_t max_values;      // nodes: scalars, nulls, lists and maps, keys included
};

// A job spec: what a user sends to the API. 1 MiB of text is the API's default body limit
// and thousands of times what a real spec holds; 16,384 values keep yaml-cpp's graph (about
// 460 bytes a node) under 8 MiB, and a spec with every list at its own limit (spec_limits.h)
// still fits.
inline constexpr DocumentLimits kSpecDocumentLimits{1024 * 1024, 16384};
// A site file or runtime registry: written by the operator, and larger (thousands of tokens
// or runtimes fit), but still bounded so an alias there cannot exhaust `serve` either.
inline constexpr DocumentLimits kOperatorDocumentLimits{4 * 1024 * 1024, 65536};

// The first problem found, as YamlReader reports it.
struct DocumentBreach {
  std::string kind;     // "document_too_large", "too_many_values" or "parse_error"
  std::string field;    // where the limit was crossed (a.b[0].c); "" for the root
  std::string message;  // for people; quotes no value of the document
};

// nullopt: the first document is well-formed and within `limits`. Only the first document
// is measured, because only it is loaded (YAML::Load).
std::optional<DocumentBreach> measureDocument(std::string_view text, const DocumentLimits& limits);

// The parse_error message for a syntax error at `line`, `column` (0-based, as yaml-cpp's Mark).
std::string parseErrorMessage(int line, int column, const std::string& what);

}  // namespace tuneplane::spec
