#include "catalog/file_paths.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tuneplane::catalog {

std::optional<std::string> resolveAgainst(const std::string& value,
                                          const std::optional<std::string>& base_dir) {
  const std::filesystem::path p(value);
  if (p.is_absolute()) return value;
  if (!base_dir) return std::nullopt;
  return (std::filesystem::path(*base_dir) / p).lexically_normal().string();
}

std::optional<std::string> mountPathProblem(std::string_view path) {
  if (!path.starts_with('/')) return "must be an absolute path";
  for (char c : path) {
    if (c == ',' || c == ':') return "must not contain ',' or ':' (mount list separators)";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return "must not contain control characters";
    }
  }
  for (const auto& part : std::filesystem::path(path)) {
    if (part == "..") return "must not contain a '..' component";
  }
  return std::nullopt;
}

std::string directoryOf(const std::string& file) {
  const std::filesystem::path parent = std::filesystem::path(file).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

std::string absoluteDirectoryOf(const std::string& file) {
  std::error_code ec;
  const auto dir = std::filesystem::absolute(directoryOf(file), ec);
  return ec ? directoryOf(file) : dir.lexically_normal().string();
}

std::optional<std::string> readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

}  // namespace tuneplane::catalog
