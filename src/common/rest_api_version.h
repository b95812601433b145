// The order of Slurm REST API version names, for the client and the simulator alike.
#pragma once

#include <array>
#include <charconv>
#include <string_view>

namespace tuneplane {

// "v0.0.44" → {0, 0, 44}, to order versions by; unparsable parts count as 0.
inline std::array<int, 3> restApiVersionNumbers(std::string_view name) {
  std::array<int, 3> out{};
  if (!name.empty() && name.front() == 'v') name.remove_prefix(1);
  for (int& part : out) {
    const size_t dot = name.find('.');
    const std::string_view digits = name.substr(0, dot);
    std::from_chars(digits.data(), digits.data() + digits.size(), part);
    name = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  }
  return out;
}

}  // namespace tuneplane
