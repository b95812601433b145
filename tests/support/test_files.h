// Whole-file reads and writes for tests: binary, no newline translation. A file that cannot
// be read reads as empty (the assertion that follows fails naming what was expected).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tuneplane::test {

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void writeFile(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

// Writes the file, then sets its permission bits to exactly `mode`.
inline void writeFile(const std::filesystem::path& path, const std::string& content,
                      std::filesystem::perms mode) {
  writeFile(path, content);
  std::filesystem::permissions(path, mode);
}

}  // namespace tuneplane::test
