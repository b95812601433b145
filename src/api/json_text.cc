// See json_text.h.
#include "api/json_text.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace tuneplane::api {
namespace {

// nlohmann's escapes for ASCII: the short forms JSON defines, \u00xx (lower-case hex) for the
// other control characters, everything else as is (appended a run at a time). Returns false
// at the first byte >= 0x80, having appended part of `text`: the caller drops that part.
bool appendAsciiEscaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t plain = 0;  // start of the run not yet appended
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) return false;
    if (c != '"' && c != '\\' && c >= 0x20) continue;
    out.append(text.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  out.append(text.data() + plain, text.size() - plain);
  return true;
}

}  // namespace

void JsonText::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_ += ',';
  first_.back() = false;
}

JsonText& JsonText::beginObject() {
  separate();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonText& JsonText::endObject() {
  out_ += '}';
  first_.pop_back();
  return *this;
}

JsonText& JsonText::beginArray() {
  separate();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonText& JsonText::endArray() {
  out_ += ']';
  first_.pop_back();
  return *this;
}

JsonText& JsonText::key(std::string_view name) {
  string(name);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonText& JsonText::string(std::string_view text) {
  separate();
  const std::size_t start = out_.size();
  out_ += '"';
  if (appendAsciiEscaped(out_, text)) {
    out_ += '"';
  } else {
    // UTF-8 validation and the U+FFFD replacement are nlohmann's, as in api::dump().
    out_.resize(start);
    out_ += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return *this;
}

JsonText& JsonText::integer(int64_t value) {
  separate();
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  out_.append(buf, end);
  return *this;
}

JsonText& JsonText::unsignedInteger(uint64_t value) {
  separate();
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  out_.append(buf, end);
  return *this;
}

JsonText& JsonText::boolean(bool value) {
  separate();
  out_ += value ? "true" : "false";
  return *this;
}

JsonText& JsonText::null() {
  separate();
  out_ += "null";
  return *this;
}

}  // namespace tuneplane::api
