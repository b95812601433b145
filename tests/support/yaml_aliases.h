// YAML documents that expand when their aliases are read ("billion laughs"), for the tests of
// the document limits (spec/document_measure.h) in the spec, site and registry parsers.
#pragma once

#include <string>

namespace tuneplane::test {

// `levels` top-level keys x0…: x0 anchors a list of ten scalars, each xN a list of ten
// aliases of x(N-1). Values, with the root map: 13 up to x0's end, then 2 + 10 × (the
// expanded size of the level below) per level: 125, 1,237, 12,349; x4's k-th alias ends at
// 12,351 + 11,111 × k.
inline std::string nestedAliases(int levels = 10) {
  std::string text = "x0: &l0 [a, a, a, a, a, a, a, a, a, a]\n";
  for (int level = 1; level < levels; ++level) {
    const std::string below = "*l" + std::to_string(level - 1);
    text += "x" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) text += (i ? ", " : "") + below;
    text += "]\n";
  }
  return text;
}

}  // namespace tuneplane::test
