// Safe listing and reading of a job's output areas (see output_files.h).
#include "attempt/output_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <queue>

#include <fmt/format.h>

#include "attempt/error_codes.h"
#include "staging/staging_paths.h"

namespace tuneplane::attempt {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::vector<std::string> splitClean(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 1;  // after the leading '/'
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool allDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int64_t millis(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1'000'000;
}

FileType typeOf(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kFile;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  return FileType::kOther;
}

// Why openat(dir, name, O_DIRECTORY|O_NOFOLLOW) failed with `err`, as an error about `shown`.
Error directoryError(int dir, const std::string& name, int err, const std::string& shown) {
  const auto missing = [&] {
    return Error{codes::kFilesNotFound, "path", shown + " does not exist"};
  };
  if (err == ENOENT) return missing();
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return missing();
    err = errno;
  } else if (S_ISLNK(st.st_mode)) {
    return {codes::kFilesSymlink, "path", shown + " is a symbolic link: links are never followed"};
  } else if (!S_ISDIR(st.st_mode)) {
    return {codes::kFilesNotDirectory, "path", shown + " is not a directory"};
  }
  return {codes::kFilesIo, "path", shown + ": cannot open (" + std::strerror(err) + ")"};
}

// The name a walk failure shows: the area's name for its own components, then the path.
std::string shownAt(const AreaLocation& area, const std::vector<std::string>& path,
                    std::size_t path_index) {
  return displayPath(area.area, std::vector<std::string>(
                                    path.begin(), path.begin() + static_cast<long>(path_index)));
}

// Opens the area's root, then `count` components of `path`, each O_NOFOLLOW.
Result<UniqueFd> walk(const AreaLocation& area, const std::vector<std::string>& path,
                      std::size_t count) {
  UniqueFd dir(::open(area.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    return fail(codes::kFilesIo, "path",
                "the staging root cannot be opened (" + std::string(std::strerror(errno)) + ")");
  }
  for (const std::string& part : area.components) {
    UniqueFd next(::openat(dir.get(), part.c_str(), kDirFlags));
    if (!next.valid()) {
      const int err = errno;
      Error e = directoryError(dir.get(), part, err, shownAt(area, path, 0));
      if (e.code == codes::kFilesNotFound) {
        e.message = std::string(toString(area.area)) + "/ does not exist";
      }
      return fail(std::move(e));
    }
    dir = std::move(next);
  }
  for (std::size_t i = 0; i < count; ++i) {
    UniqueFd next(::openat(dir.get(), path[i].c_str(), kDirFlags));
    if (!next.valid()) {
      const int err = errno;
      return fail(directoryError(dir.get(), path[i], err, shownAt(area, path, i + 1)));
    }
    dir = std::move(next);
  }
  return dir;
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

}  // namespace

std::string_view toString(OutputArea area) {
  return area == OutputArea::kCheckpoints ? "checkpoints" : "output";
}

std::optional<OutputArea> parseOutputArea(std::string_view text) {
  if (text == "output") return OutputArea::kOutput;
  if (text == "checkpoints") return OutputArea::kCheckpoints;
  return std::nullopt;
}

std::string_view toString(FileType type) {
  switch (type) {
    case FileType::kFile:
      return "file";
    case FileType::kDirectory:
      return "directory";
    case FileType::kSymlink:
      return "symlink";
    case FileType::kOther:
      break;
  }
  return "other";
}

Result<AreaLocation> areaOf(std::string_view attempt_dir, std::string_view job_id,
                            OutputArea area) {
  const auto bad = [&] {
    return fail(codes::kFilesIo, "attempt",
                "the attempt's staging directory on record is not <root>/jobs/" +
                    std::string(job_id) + "/attempts/<n>");
  };
  if (!staging::isCleanAbsolutePath(attempt_dir)) return bad();
  std::vector<std::string> parts = splitClean(attempt_dir);
  if (parts.size() < 4) return bad();
  const std::size_t n = parts.size();
  if (parts[n - 4] != staging::kJobsDir || parts[n - 3] != job_id ||
      parts[n - 2] != staging::kAttemptsDir || !allDigits(parts[n - 1])) {
    return bad();
  }
  AreaLocation out;
  out.area = area;
  for (std::size_t i = 0; i + 4 < n; ++i) out.root += "/" + parts[i];
  if (out.root.empty()) out.root = "/";
  out.components = {parts[n - 4], parts[n - 3]};
  if (area == OutputArea::kOutput) {
    out.components.push_back(parts[n - 2]);
    out.components.push_back(parts[n - 1]);
    out.components.emplace_back(staging::kOutputDir);
  } else {
    out.components.emplace_back(staging::kCheckpointsDir);
  }
  return out;
}

Result<std::vector<std::string>> checkOutputPath(std::string_view path) {
  const auto refuse = [](const std::string& rule) {
    return fail(codes::kFilesInvalidPath, "path", rule);
  };
  if (path.size() > kMaxPathBytes) {
    return refuse(fmt::format("the path is longer than {} bytes", kMaxPathBytes));
  }
  if (path.find('\0') != std::string_view::npos) {
    return refuse("the path contains a NUL byte");
  }
  if (!path.empty() && path.front() == '/') {
    return refuse("the path must be relative to the area: no leading '/'");
  }
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);  // "dir/"
  std::vector<std::string> parts;
  if (path.empty()) return parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    const std::string_view part = path.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty()) return refuse("the path has an empty component ('//')");
    if (part == "..") return refuse("'..' is not allowed: a path stays inside its area");
    if (part == ".") return refuse("'.' is not allowed: name each component");
    if (part.size() > kMaxNameBytes) {
      return refuse(fmt::format("a component is longer than {} bytes", kMaxNameBytes));
    }
    parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

Result<ListPage> listOutputDirectory(const AreaLocation& area, const std::vector<std::string>& path,
                                     std::string_view after, std::size_t limit) {
  limit = std::clamp<std::size_t>(limit, 1, kMaxListLimit);
  auto dir = walk(area, path, path.size());
  if (!dir) return tl::unexpected(dir.error());
  const std::string shown = displayPath(area.area, path);
  // fdopendir owns the descriptor it is given: hand it a duplicate, keep `dir` for fstatat.
  UniqueFd scan_fd(::fcntl(dir->get(), F_DUPFD_CLOEXEC, 0));
  std::unique_ptr<DIR, DirCloser> scan(scan_fd.valid() ? ::fdopendir(scan_fd.get()) : nullptr);
  if (!scan) {
    return fail(codes::kFilesIo, "path",
                shown + ": cannot read (" + std::string(std::strerror(errno)) + ")");
  }
  (void)scan_fd.release();
  ListPage page;
  // The page's names: a max-heap of at most limit + 1 (one more says "more").
  std::priority_queue<std::string> kept;
  errno = 0;
  while (const dirent* entry = ::readdir(scan.get())) {
    const std::string_view name(entry->d_name);
    if (name == "." || name == "..") continue;
    if (++page.total > kMaxScannedEntries) {
      return fail(
          codes::kFilesTooManyEntries, "path",
          fmt::format("{} has more than {} entries: too many to list", shown, kMaxScannedEntries));
    }
    if (name <= after) continue;
    if (kept.size() <= limit) {
      kept.emplace(name);
    } else if (name < kept.top()) {
      kept.pop();
      kept.emplace(name);
    }
  }
  if (errno != 0) {
    return fail(codes::kFilesIo, "path",
                shown + ": cannot read (" + std::string(std::strerror(errno)) + ")");
  }
  std::vector<std::string> names;
  names.reserve(kept.size());
  while (!kept.empty()) {
    names.push_back(kept.top());
    kept.pop();
  }
  std::reverse(names.begin(), names.end());
  if (names.size() > limit) {
    page.more = true;
    names.pop_back();
  }
  for (std::string& name : names) {
    struct stat st {};
    if (::fstatat(dir->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    page.entries.push_back({std::move(name), typeOf(st.st_mode), static_cast<uint64_t>(st.st_size),
                            millis(st.st_mtim)});
  }
  return page;
}

bool outputAreaExists(const AreaLocation& area) {
  return walk(area, {}, 0).has_value();
}

Result<std::size_t> OutputFile::readAt(uint64_t offset, char* buffer, std::size_t length) const {
  while (true) {
    const ssize_t n = ::pread(fd.get(), buffer, length, static_cast<off_t>(offset));
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    return fail(codes::kFilesIo, "path",
                name + ": read failed (" + std::string(std::strerror(errno)) + ")");
  }
}

Result<OutputFile> openOutputFile(const AreaLocation& area, const std::vector<std::string>& path) {
  if (path.empty()) {
    return fail(codes::kFilesIsDirectory, "path",
                std::string(toString(area.area)) + "/ is a directory: list it instead");
  }
  auto dir = walk(area, path, path.size() - 1);
  if (!dir) return tl::unexpected(dir.error());
  const std::string& last = path.back();
  const std::string shown = displayPath(area.area, path);
  // Look before opening: opening a FIFO or a device could block or act.
  struct stat before {};
  if (::fstatat(dir->get(), last.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return fail(codes::kFilesNotFound, "path", shown + " does not exist");
    return fail(codes::kFilesIo, "path",
                shown + ": cannot read (" + std::string(std::strerror(errno)) + ")");
  }
  const auto refuseKind = [&](const struct stat& st) -> std::optional<Error> {
    if (S_ISLNK(st.st_mode)) {
      return Error{codes::kFilesSymlink, "path",
                   shown + " is a symbolic link: links are never followed"};
    }
    if (S_ISDIR(st.st_mode)) {
      return Error{codes::kFilesIsDirectory, "path", shown + " is a directory: list it instead"};
    }
    if (!S_ISREG(st.st_mode)) {
      return Error{codes::kFilesNotRegularFile, "path",
                   shown + " is not a regular file (a FIFO, socket or device)"};
    }
    if (st.st_nlink > 1) {
      return Error{codes::kFilesHardLink, "path",
                   fmt::format("{} has {} hard links: it could be another file's content, so it "
                               "is not served",
                               shown, st.st_nlink)};
    }
    return std::nullopt;
  };
  if (auto refused = refuseKind(before)) return fail(std::move(*refused));
  UniqueFd fd(::openat(dir->get(), last.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ELOOP) {
      return fail(codes::kFilesSymlink, "path",
                  shown + " is a symbolic link: links are never followed");
    }
    if (err == ENOENT) return fail(codes::kFilesNotFound, "path", shown + " does not exist");
    return fail(codes::kFilesIo, "path",
                shown + ": cannot open (" + std::string(std::strerror(err)) + ")");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return fail(codes::kFilesIo, "path",
                shown + ": cannot read (" + std::string(std::strerror(errno)) + ")");
  }
  if (auto refused = refuseKind(st)) return fail(std::move(*refused));
  if (st.st_ino != before.st_ino || st.st_dev != before.st_dev) {
    return fail(codes::kFilesIo, "path", shown + " was replaced while being opened; try again");
  }
  OutputFile file;
  file.fd = std::move(fd);
  file.name = last;
  file.size = static_cast<uint64_t>(st.st_size);
  file.modified_ms = millis(st.st_mtim);
  const uint64_t mtime_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000ull +
                            static_cast<uint64_t>(st.st_mtim.tv_nsec);
  file.etag =
      fmt::format("\"{:x}-{:x}-{:x}\"", static_cast<uint64_t>(st.st_ino), file.size, mtime_ns);
  return file;
}

std::string displayPath(OutputArea area, const std::vector<std::string>& path) {
  std::string out(toString(area));
  for (const std::string& part : path) out += "/" + part;
  return out;
}

}  // namespace tuneplane::attempt
