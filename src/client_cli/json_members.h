// Reading one member of a server's JSON object for a text view, forgivingly: a member that is
// missing or of another type reads as empty (an older or newer server's answer still prints;
// -o json shows the document as it is). Pure.
#pragma once

#include <string>

#include "client/api_client.h"

namespace tuneplane::cli {

// The string member `key` of `object`; "" when absent or not a string.
inline std::string stringOf(const client::Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The integer member `key` of `object`; 0 when absent or not an integer.
inline long long integerOf(const client::Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

}  // namespace tuneplane::cli
