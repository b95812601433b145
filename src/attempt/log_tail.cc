// readLogTail: open without following links, fstat, one pread from the end, then the pure cut.
#include "attempt/log_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unicode/utf8.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "attempt/error_codes.h"
#include "common/unique_fd.h"
#include "spec/names.h"
#include "staging/staging_paths.h"

namespace tuneplane::attempt {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

const uint8_t* bytesOf(std::string_view text) {
  return reinterpret_cast<const uint8_t*>(text.data());
}

// Calls `each(piece, ill_formed)` for every well-formed run and every maximal ill-formed
// subsequence of `text`, in order, while `each` returns true.
template <typename Each>
void forEachPiece(std::string_view text, Each each) {
  const uint8_t* s = bytesOf(text);
  const auto length = static_cast<int32_t>(text.size());
  int32_t i = 0;
  int32_t run = 0;  // start of the current well-formed run
  while (i < length) {
    // Logs are mostly ASCII: skip it eight bytes at a time (no byte with the high bit set).
    while (length - i >= 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, s + i, sizeof word);
      if ((word & 0x8080808080808080ull) != 0) break;
      i += 8;
    }
    if (i == length) break;
    const int32_t start = i;
    UChar32 c = 0;
    U8_NEXT(s, i, length, c);
    if (c < 0) {
      if (start > run && !each(text.substr(run, start - run), false)) return;
      if (!each(text.substr(start, i - start), true)) return;
      run = i;
    }
  }
  if (length > run) each(text.substr(run), false);
}

bool isWellFormed(std::string_view text) {
  bool well_formed = true;
  forEachPiece(text, [&](std::string_view, bool ill_formed) {
    well_formed = !ill_formed;
    return well_formed;
  });
  return well_formed;
}

// Size of `text` once each ill-formed subsequence is replaced by U+FFFD.
std::size_t sanitizedSize(std::string_view text) {
  std::size_t size = 0;
  forEachPiece(text, [&](std::string_view piece, bool ill_formed) {
    size += ill_formed ? kReplacement.size() : piece.size();
    return true;
  });
  return size;
}

std::string sanitize(std::string_view text, std::size_t& replaced) {
  std::string out;
  out.reserve(text.size());
  forEachPiece(text, [&](std::string_view piece, bool ill_formed) {
    if (ill_formed) ++replaced;
    out.append(ill_formed ? kReplacement : piece);
    return true;
  });
  return out;
}

// Bytes at the end of `text` that begin a character whose remaining bytes are not written
// yet (a lead byte followed by fewer trail bytes than it announces); 0 when none.
std::size_t incompleteTail(std::string_view text) {
  const uint8_t* s = bytesOf(text);
  const std::size_t n = text.size();
  for (std::size_t back = 1; back <= 4 && back <= n; ++back) {
    const uint8_t b = s[n - back];
    if (U8_IS_TRAIL(b)) continue;
    const bool lead = U8_IS_LEAD(b);
    return lead && static_cast<std::size_t>(U8_COUNT_TRAIL_BYTES(b)) >= back ? back : 0;
  }
  return 0;
}

// Index of the first byte of the line that ends at `end` (exclusive; the line's own '\n',
// if any, is at end - 1). 0 when no earlier '\n' exists in text[0, end).
std::size_t lineStart(std::string_view text, std::size_t end) {
  std::size_t search = end;
  if (search > 0 && text[search - 1] == '\n') --search;
  const void* nl = search > 0 ? ::memrchr(text.data(), '\n', search) : nullptr;
  return nl == nullptr ? 0
                       : static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) + 1;
}

std::size_t skipTrailBytes(std::string_view text, std::size_t pos) {
  // At most 3: no character has more continuation bytes, so the 4th of a run is ill-formed
  // and shown as U+FFFD, not skipped (a window of 0x87 bytes once showed only the text
  // after them: found by fuzz/log_tail_fuzz.cc).
  const std::size_t limit = std::min(text.size(), pos + 3);
  while (pos < limit && U8_IS_TRAIL(static_cast<uint8_t>(text[pos]))) ++pos;
  return pos;
}

// The longest run of whole lines at the end of `body` that fits the limits, each line
// measured as it will be returned (`line_size`): where it begins and how many lines it has.
// kept == body.size() when not even the last line fits. A line starting at 0 is whole only
// when `starts_file`. Walks back one line at a time, so at most max_lines + 1 lines.
struct Cut {
  std::size_t kept = 0;
  std::size_t lines = 0;
};

template <typename LineSize>
Cut wholeLinesCut(std::string_view body, bool starts_file, const LogTailLimits& limits,
                  LineSize line_size) {
  Cut cut{body.size(), 0};
  std::size_t bytes = 0;
  while (cut.kept > 0 && cut.lines < limits.max_lines) {
    const std::size_t start = lineStart(body, cut.kept);
    if (start == 0 && !starts_file) break;  // the window's first line may have begun earlier
    bytes += line_size(body.substr(start, cut.kept - start));
    if (bytes > limits.max_bytes) break;
    cut.kept = start;
    ++cut.lines;
  }
  return cut;
}

// --- the file side -------------------------------------------------------------------------

enum class Kind { kDirectory, kRegularFile };

// The outcome of opening one entry: an fd, or "missing" with nothing open.
struct Opened {
  UniqueFd fd;
  bool missing = false;
};

Error notRegularError(const std::string& shown) {
  return Error{codes::kLogsNotRegularFile, "",
               shown +
                   " is not a regular file (a FIFO, device, socket or directory is never "
                   "read)"};
}

Error symlinkError(const std::string& shown) {
  return Error{codes::kLogsSymlink, "",
               shown +
                   " is a symbolic link; the job's side of the attempt may have planted it, "
                   "so it is not followed"};
}

// Checks an already open fd: the right type, and a log file with a single link (a hard link
// to another file would let a job show TunePlane something it cannot read itself).
Status checkOpened(int fd, Kind kind, const std::string& shown) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return fail(codes::kLogsIo, "", "cannot stat " + shown + ": " + std::strerror(errno));
  }
  if (kind == Kind::kDirectory && !S_ISDIR(st.st_mode)) {
    return fail(codes::kLogsNotRegularFile, "", shown + " is not a directory");
  }
  if (kind == Kind::kRegularFile) {
    if (!S_ISREG(st.st_mode)) return fail(notRegularError(shown));
    if (st.st_nlink > 1) {
      return fail(codes::kLogsNotRegularFile, "",
                  shown + " has " + std::to_string(st.st_nlink) +
                      " hard links; a log file is written by Slurm with one, so it is not read");
    }
  }
  return ok();
}

// Opens `name` inside `dir_fd` (or the absolute `name` when dir_fd is AT_FDCWD) without
// following a symlink at its last component. The entry is classified with fstatat first, so
// a FIFO or device is normally not even opened; O_NOFOLLOW|O_NONBLOCK and the fstat of the
// open fd close the window in which the job could swap the entry.
Result<Opened> openEntry(int dir_fd, const std::string& name, Kind kind, const std::string& shown) {
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Opened{UniqueFd(), true};
    return fail(codes::kLogsIo, "", "cannot stat " + shown + ": " + std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) return fail(symlinkError(shown));
  int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  if (kind == Kind::kDirectory) {
    flags |= O_DIRECTORY;
    if (!S_ISDIR(st.st_mode))
      return fail(codes::kLogsNotRegularFile, "", shown + " is not a directory");
  } else if (!S_ISREG(st.st_mode)) {
    return fail(notRegularError(shown));
  }
  UniqueFd fd(::openat(dir_fd, name.c_str(), flags));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ENOENT) return Opened{UniqueFd(), true};
    // ELOOP (a file) or ENOTDIR (O_DIRECTORY): a symlink appeared since the fstatat.
    if (err == ELOOP || err == ENOTDIR) return fail(symlinkError(shown));
    return fail(codes::kLogsIo, "", "cannot open " + shown + ": " + std::strerror(err));
  }
  if (auto checked = checkOpened(fd.get(), kind, shown); !checked) return fail(checked.error());
  return Opened{std::move(fd), false};
}

// Reads up to `count` bytes at `offset`; fewer when the file shrank meanwhile.
Result<std::string> readAt(int fd, std::uint64_t offset, std::size_t count,
                           const std::string& shown) {
  std::string buffer(count, '\0');
  std::size_t got = 0;
  while (got < count) {
    const ssize_t n =
        ::pread(fd, buffer.data() + got, count - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(codes::kLogsIo, "", "cannot read " + shown + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  buffer.resize(got);
  return buffer;
}

LogTail missingTail(std::string reason) {
  LogTail tail;
  tail.missing = true;
  tail.reason = std::move(reason);
  return tail;
}

}  // namespace

Result<std::string> logFileName(std::string_view pool, LogStream stream) {
  if (!spec::isDnsLabel(pool)) {
    return fail(codes::kLogsInvalidPool, "pool",
                "pool '" + std::string(pool) +
                    "' is not a pool name (a DNS label: lower-case letters, digits and '-')");
  }
  return std::string(pool) + (stream == LogStream::kStdout ? ".out" : ".err");
}

std::size_t logTailWindow(const LogTailLimits& limits) {
  // Found by fuzz/log_tail_fuzz.cc: with max_bytes + 1, a log ending in 2 bytes of a 3-byte
  // character showed 2 bytes fewer of its last line than the limit allows.
  return limits.max_bytes + 1 + 3;
}

LogTail cutLogTail(std::string_view window, bool starts_file, const LogTailLimits& limits) {
  LogTail tail;
  const std::string_view body = window.substr(0, window.size() - incompleteTail(window));
  const std::size_t end = body.size();
  // The common case, all well-formed, measures lines by their bytes: no second pass.
  const bool well_formed = isWellFormed(body);
  const Cut cut = well_formed ? wholeLinesCut(body, starts_file, limits,
                                              [](std::string_view line) { return line.size(); })
                              : wholeLinesCut(body, starts_file, limits, sanitizedSize);
  if (cut.kept == end && end > 0) {
    // Not even the last line fits: its last bytes, from a character boundary.
    std::size_t start = lineStart(body, end);
    if (start == 0 && !starts_file) start = skipTrailBytes(body, 0);
    std::string text = sanitize(body.substr(start), tail.replaced);
    if (text.size() > limits.max_bytes) {
      text.erase(0, skipTrailBytes(text, text.size() - limits.max_bytes));
    }
    tail.text = std::move(text);
    tail.truncated = true;
    tail.lines = tail.text.empty() ? 0 : 1;
    return tail;
  }
  const std::string_view kept = body.substr(cut.kept);
  tail.text = well_formed ? std::string(kept) : sanitize(kept, tail.replaced);
  tail.truncated = cut.kept > 0 || !starts_file;
  tail.lines = cut.lines;
  return tail;
}

Result<LogTail> readLogTail(const std::string& attempt_dir, std::string_view pool, LogStream stream,
                            JobState job, const LogTailLimits& limits) {
  if (!staging::isCleanAbsolutePath(attempt_dir) || attempt_dir == "/") {
    return fail(codes::kLogsInvalidAttemptDir, "attempt_dir",
                "the attempt directory must be an absolute path without '.', '..' or empty "
                "components");
  }
  auto name = logFileName(pool, stream);
  if (!name) return fail(name.error());
  // Messages and reasons reach API clients: they name the file inside the attempt (the pool
  // and the stream), never the server's path to it.
  const std::string logs_shown = "logs/";
  const std::string file_shown = "logs/" + *name;

  auto attempt = openEntry(AT_FDCWD, attempt_dir, Kind::kDirectory, "the attempt directory");
  if (!attempt) return fail(attempt.error());
  if (attempt->missing) return missingTail("the attempt directory does not exist");
  auto logs =
      openEntry(attempt->fd.get(), std::string(staging::kLogsDir), Kind::kDirectory, logs_shown);
  if (!logs) return fail(logs.error());
  if (logs->missing) return missingTail("the attempt has no logs/ folder");
  auto file = openEntry(logs->fd.get(), *name, Kind::kRegularFile, file_shown);
  if (!file) return fail(file.error());
  if (file->missing) {
    if (job == JobState::kRanAndEnded) {
      return missingTail(std::string(kLogNeverWrittenReason) + " (logs/" + *name +
                         " does not exist)");
    }
    return missingTail("logs/" + *name + " does not exist (yet)");
  }

  struct stat st {};
  if (::fstat(file->fd.get(), &st) != 0) {
    return fail(codes::kLogsIo, "", "cannot stat " + file_shown + ": " + std::strerror(errno));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t want = std::min<std::uint64_t>(size, logTailWindow(limits));
  const std::uint64_t offset = size - want;
  auto window = readAt(file->fd.get(), offset, static_cast<std::size_t>(want), file_shown);
  if (!window) return fail(window.error());
  LogTail tail = cutLogTail(*window, offset == 0, limits);
  tail.file_bytes = size;
  return tail;
}

}  // namespace tuneplane::attempt
