// JsonText: writes JSON text straight into a string, for the answers served most often
// (GET /v1/jobs/{id}), where building an nlohmann::json tree first — a std::map node and
// a string copy per field — cost more than the SQLite read. It writes exactly what
// api::dump() writes for the same value (keys in the order the caller gives, which must be
// nlohmann's sorted order; strings escaped alike; invalid UTF-8 → U+FFFD): json_views_test
// checks the two against each other. Thread-safety: none; one writer per string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::api {

class JsonText {
 public:
  explicit JsonText(std::string& out) : out_(out) {}

  JsonText& beginObject();
  JsonText& endObject();
  JsonText& beginArray();
  JsonText& endArray();
  // The next member's key. REQUIRES: inside an object, keys in ascending byte order.
  JsonText& key(std::string_view name);

  JsonText& string(std::string_view text);
  JsonText& integer(int64_t value);
  JsonText& unsignedInteger(uint64_t value);
  JsonText& boolean(bool value);
  JsonText& null();

 private:
  void separate();  // the comma before every element but a container's first

  std::string& out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace tuneplane::api
