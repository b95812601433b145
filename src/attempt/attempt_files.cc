// Safe reads of an attempt's logs/ (see attempt_files.h).
#include "attempt/attempt_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attempt/error_codes.h"
#include "common/unique_fd.h"
#include "slurm/resume_record.h"
#include "slurm/script_renderer.h"
#include "staging/staging_paths.h"

namespace tuneplane::attempt {
namespace {

using nlohmann::json;

UniqueFd openLogsDir(const std::string& attempt_dir) {
  UniqueFd attempt(::open(attempt_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!attempt.valid()) return UniqueFd();
  const std::string logs(staging::kLogsDir);
  return UniqueFd(
      ::openat(attempt.get(), logs.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// nullopt when the file does not exist; an error when it exists but is not safe to read.
Result<std::optional<std::string>> readSmallFile(int dir_fd, const std::string& name) {
  // O_NONBLOCK: a FIFO planted under the name must not block the loop.
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::optional<std::string>();
    return fail(codes::kBadSentinel, name,
                name + ": cannot open (" + std::string(std::strerror(errno)) + ")");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail(codes::kBadSentinel, name, name + ": not a regular file");
  }
  if (st.st_size > static_cast<off_t>(kMaxSentinelBytes)) {
    return fail(codes::kBadSentinel, name,
                name + ": larger than " + std::to_string(kMaxSentinelBytes) + " bytes");
  }
  std::string text(kMaxSentinelBytes + 1, '\0');
  size_t have = 0;
  while (have < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(codes::kBadSentinel, name, name + ": read failed");
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  if (have > kMaxSentinelBytes) {
    return fail(codes::kBadSentinel, name, name + ": grew while being read");
  }
  text.resize(have);
  return std::optional<std::string>(std::move(text));
}

Result<json> parseObject(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return fail(codes::kBadSentinel, "", "not a JSON object");
  if (!doc.contains("version") || doc["version"] != 1) {
    return fail(codes::kBadSentinel, "version", "version is not 1");
  }
  return doc;
}

template <typename T>
Result<T> field(const json& doc, const char* name) {
  auto it = doc.find(name);
  if (it == doc.end()) return fail(codes::kBadSentinel, name, std::string(name) + " missing");
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string())
      return fail(codes::kBadSentinel, name, std::string(name) + " not a string");
  } else {
    if (!it->is_number_integer()) {
      return fail(codes::kBadSentinel, name, std::string(name) + " not an integer");
    }
  }
  return it->get<T>();
}

}  // namespace

Result<StartSentinel> parseStartSentinel(std::string_view text) {
  auto doc = parseObject(text);
  if (!doc) return tl::unexpected(doc.error());
  auto node = field<std::string>(*doc, "node");
  auto time = field<int64_t>(*doc, "time");
  if (!node) return tl::unexpected(node.error());
  if (!time) return tl::unexpected(time.error());
  return StartSentinel{*node, *time};
}

Result<ExitSentinel> parseExitSentinel(std::string_view text) {
  auto doc = parseObject(text);
  if (!doc) return tl::unexpected(doc.error());
  auto node = field<std::string>(*doc, "node");
  auto code = field<int64_t>(*doc, "exit_code");
  auto start = field<int64_t>(*doc, "start_time");
  auto end = field<int64_t>(*doc, "end_time");
  if (!node) return tl::unexpected(node.error());
  if (!code) return tl::unexpected(code.error());
  if (!start) return tl::unexpected(start.error());
  if (!end) return tl::unexpected(end.error());
  if (*code < 0 || *code > 255) {
    return fail(codes::kBadSentinel, "exit_code", "exit_code outside 0..255");
  }
  return ExitSentinel{*node, static_cast<int>(*code), *start, *end};
}

std::optional<uint64_t> parseClaim(std::string_view text) {
  if (text.size() < 2 || text.size() > 11 || text.back() != '\n') return std::nullopt;
  uint64_t id = 0;
  for (char c : text.substr(0, text.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + static_cast<uint64_t>(c - '0');
  }
  return id == 0 ? std::nullopt : std::optional<uint64_t>(id);
}

Result<int64_t> parseResumeRecord(std::string_view text) {
  auto doc = parseObject(text);
  if (!doc) return tl::unexpected(doc.error());
  auto step = field<int64_t>(*doc, "step");
  if (!step) return tl::unexpected(step.error());
  if (*step < 0) return fail(codes::kBadSentinel, "step", "step is negative");
  return *step;
}

std::optional<int64_t> readResumeStep(const std::string& attempt_dir) {
  UniqueFd logs = openLogsDir(attempt_dir);
  if (!logs.valid()) return std::nullopt;
  auto text = readSmallFile(logs.get(), std::string(slurm::kResumeRecordFile));
  if (!text || !*text) return std::nullopt;
  auto step = parseResumeRecord(**text);
  return step ? std::optional<int64_t>(*step) : std::nullopt;
}

AttemptSentinels readSentinels(const std::string& attempt_dir,
                               const std::vector<std::string>& pools) {
  AttemptSentinels out;
  UniqueFd logs = openLogsDir(attempt_dir);
  if (!logs.valid()) {
    if (errno != ENOENT) out.problems.push_back("logs/: " + std::string(std::strerror(errno)));
    return out;
  }
  const std::string claim_name(slurm::kClaimFile);
  if (auto claim = readSmallFile(logs.get(), claim_name); !claim) {
    out.problems.push_back(claim.error().message);
  } else if (*claim) {
    out.claimed_by = parseClaim(**claim);
  }
  for (const std::string& pool : pools) {
    const std::string start_name = slurm::sentinelFileName(slurm::kStartSentinel, pool);
    const std::string exit_name = slurm::sentinelFileName(slurm::kExitSentinel, pool);
    auto start_text = readSmallFile(logs.get(), start_name);
    if (!start_text) {
      out.problems.push_back(start_text.error().message);
    } else if (*start_text) {
      auto parsed = parseStartSentinel(**start_text);
      if (parsed) {
        out.start[pool] = *parsed;
      } else {
        out.problems.push_back(start_name + ": " + parsed.error().message);
      }
    }
    auto exit_text = readSmallFile(logs.get(), exit_name);
    if (!exit_text) {
      out.problems.push_back(exit_text.error().message);
    } else if (*exit_text) {
      auto parsed = parseExitSentinel(**exit_text);
      if (parsed) {
        out.exit[pool] = *parsed;
      } else {
        out.problems.push_back(exit_name + ": " + parsed.error().message);
      }
    }
  }
  return out;
}

bool schedulerLogExists(const std::string& attempt_dir, const std::string& pool) {
  UniqueFd logs = openLogsDir(attempt_dir);
  if (!logs.valid()) return false;
  struct stat st {};
  const std::string name = pool + ".out";
  return ::fstatat(logs.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

Result<std::string> readStagedFile(const std::string& attempt_dir, std::string_view name) {
  const std::string path = staging::attemptFile(attempt_dir, name);
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(codes::kStagedAttemptInvalid, path, "cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return fail(codes::kStagedAttemptInvalid, path, "cannot read " + path);
  return text.str();
}

AttemptSentinels PosixAttemptReader::sentinels(const std::string& attempt_dir,
                                               const std::vector<std::string>& pools) {
  return readSentinels(attempt_dir, pools);
}

bool PosixAttemptReader::schedulerLogExists(const std::string& attempt_dir,
                                            const std::string& pool) {
  return attempt::schedulerLogExists(attempt_dir, pool);
}

Result<std::string> PosixAttemptReader::stagedFile(const std::string& attempt_dir,
                                                   std::string_view name) {
  return readStagedFile(attempt_dir, name);
}

AttemptReader& posixAttemptReader() {
  static PosixAttemptReader reader;
  return reader;
}

}  // namespace tuneplane::attempt
