// See copy_paths.h.
#include "client_cli/copy_paths.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include <fmt/format.h>

namespace tuneplane::cli {
namespace {

Error badSource(const std::string& why) {
  return {"cli.invalid_source", "SOURCE", why};
}

bool isJobIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

}  // namespace

Result<CopySource> parseCopySource(std::string_view text) {
  constexpr std::string_view kForm = "JOB[:ATTEMPT|:checkpoints][/PATH]";
  CopySource out;
  const auto slash = text.find('/');
  const std::string_view head = text.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : text.substr(slash + 1);
  const auto colon = head.find(':');
  out.job = std::string(head.substr(0, colon));
  if (out.job.empty()) {
    return fail(badSource(fmt::format("'{}' names no job: expected {}", text, kForm)));
  }
  if (!std::all_of(out.job.begin(), out.job.end(), isJobIdChar)) {
    return fail(badSource(fmt::format(
        "'{}' is not a job id (lower-case letters, digits and '-'): expected {}", out.job, kForm)));
  }
  if (colon != std::string_view::npos) {
    const std::string_view which = head.substr(colon + 1);
    if (which == "checkpoints") {
      out.where.area = "checkpoints";
    } else {
      int number = 0;
      const auto [end, ec] = std::from_chars(which.data(), which.data() + which.size(), number);
      if (which.empty() || ec != std::errc() || end != which.data() + which.size() || number < 1) {
        return fail(badSource(fmt::format(
            "'{}' after ':' is neither an attempt number nor 'checkpoints': expected {}", which,
            kForm)));
      }
      out.where.attempt = number;
    }
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  out.where.path = std::string(path);  // the server checks the rules and names the one broken
  return out;
}

std::string sourceBaseName(const CopySource& source) {
  const std::string& path = source.where.path;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool isSafeEntryName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

std::string localTarget(const std::string& destination, bool destination_is_directory,
                        const std::string& base_name) {
  if (!destination_is_directory || base_name.empty()) return destination;
  std::string dir = destination;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return (dir == "/" ? dir : dir + "/") + base_name;
}

std::string partialPath(const std::string& final_path) {
  const auto slash = final_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : final_path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? final_path : final_path.substr(slash + 1);
  // FNV-1a, 64 bits: stable across builds and platforms (std::hash is not).
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return fmt::format("{}.tuneplane-part-{:016x}", dir, hash);
}

}  // namespace tuneplane::cli
