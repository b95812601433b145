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

#include <fmt/format.h>

#include "attempt/error_codes.h"
#include "staging/os_users.h"
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

std::string modeOctal(mode_t mode) {
  return fmt::format("{:04o}", static_cast<unsigned>(mode & 07777));
}

// per_user: whether the job's user `owner` may read the file `st`, which TunePlane is about to
// serve: it belongs to the job's user or to TunePlane's, and its owner has the read bit.
std::optional<Error> ownerMayNotRead(const struct stat& st, const std::string& owner,
                                     const std::string& shown) {
  const auto refuse = [&](const std::string& why) {
    return Error{codes::kFilesNotReadable, "path", shown + " is not served: " + why};
  };
  auto user = staging::posixOsUsers().userByName(owner);
  if (!user) return Error{codes::kFilesIo, "path", shown + ": " + user.error().message};
  if (!*user) return refuse("the job's user '" + owner + "' is not known on this host");
  if (st.st_uid != (*user)->uid && st.st_uid != ::geteuid()) {
    return refuse(fmt::format("it belongs to uid {}, neither the job's user '{}' nor TunePlane",
                              st.st_uid, owner));
  }
  if ((st.st_mode & S_IRUSR) == 0) {
    return refuse("its owner may not read it (mode " + modeOctal(st.st_mode) + ")");
  }
  return std::nullopt;
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

Result<AreaLocation> areaOf(std::string_view attempt_dir, std::string_view job_id, OutputArea area,
                            std::string_view run_as) {
  const auto bad = [&] {
    return fail(codes::kFilesIo, "attempt",
                "the attempt's staging directory on record is not <root>/" +
                    (run_as.empty() ? std::string() : "users/" + std::string(run_as) + "/") +
                    "jobs/" + std::string(job_id) + "/attempts/<n>");
  };
  if (!staging::isCleanAbsolutePath(attempt_dir)) return bad();
  std::vector<std::string> parts = splitClean(attempt_dir);
  // The components below the root: jobs/<id>/attempts/<n>, per_user after users/<run_as>.
  const std::size_t below = run_as.empty() ? 4 : 6;
  if (parts.size() < below) return bad();
  const std::size_t n = parts.size();
  if (parts[n - 4] != staging::kJobsDir || parts[n - 3] != job_id ||
      parts[n - 2] != staging::kAttemptsDir || !allDigits(parts[n - 1])) {
    return bad();
  }
  if (!run_as.empty() && (parts[n - 6] != staging::kUsersDir || parts[n - 5] != run_as)) {
    return bad();
  }
  AreaLocation out;
  out.area = area;
  out.owner = std::string(run_as);
  for (std::size_t i = 0; i + below < n; ++i) out.root += "/" + parts[i];
  if (out.root.empty()) out.root = "/";
  for (std::size_t i = n - below; i < n - 2; ++i) out.components.push_back(parts[i]);
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
                                     const ListPosition& from, std::size_t limit) {
  limit = std::clamp<std::size_t>(limit, 1, kMaxListLimit);
  auto dir = walk(area, path, path.size());
  if (!dir) return tl::unexpected(dir.error());
  const std::string shown = displayPath(area.area, path);
  const auto cannotRead = [&](int err) {
    return fail(codes::kFilesIo, "path", shown + ": cannot read (" + std::strerror(err) + ")");
  };
  struct stat self {};
  if (::fstat(dir->get(), &self) != 0) return cannotRead(errno);
  const auto badPosition = [&] {
    return fail(codes::kFilesBadPosition, "continue",
                shown + " is not the folder this position was given for (it was replaced?)");
  };
  if (from.cookie != 0 && from.directory != static_cast<uint64_t>(self.st_ino)) {
    return badPosition();
  }
  // fdopendir owns the descriptor it is given: hand it a duplicate (which shares the
  // stream's position), keep `dir` for fstatat.
  UniqueFd scan_fd(::fcntl(dir->get(), F_DUPFD_CLOEXEC, 0));
  if (!scan_fd.valid()) return cannotRead(errno);
  if (from.cookie != 0 && ::lseek(scan_fd.get(), static_cast<off_t>(from.cookie), SEEK_SET) < 0) {
    return badPosition();
  }
  std::unique_ptr<DIR, DirCloser> scan(::fdopendir(scan_fd.get()));
  if (!scan) return cannotRead(errno);
  (void)scan_fd.release();
  ListPage page;
  // The page's names and the position after each; one more than the page says "more".
  std::vector<std::pair<std::string, int64_t>> names;
  names.reserve(limit + 1);
  errno = 0;
  while (names.size() <= limit) {
    const dirent* entry = ::readdir(scan.get());
    if (entry == nullptr) break;
    ++page.entries_read;
    const std::string_view name(entry->d_name);
    if (name == "." || name == "..") continue;
    names.emplace_back(name, static_cast<int64_t>(entry->d_off));
  }
  if (errno != 0) return cannotRead(errno);
  if (names.size() > limit) {
    names.pop_back();
    const int64_t cookie = names.back().second;
    // 0 would mean "from the start": a filesystem that gives it cannot be paged.
    if (cookie == 0) {
      return fail(codes::kFilesIo, "path", shown + ": the filesystem gives no position to page");
    }
    page.next = ListPosition{cookie, static_cast<uint64_t>(self.st_ino)};
  }
  page.entries.reserve(names.size());
  for (auto& [name, cookie] : names) {
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
  if (!area.owner.empty()) {
    if (auto refused = ownerMayNotRead(before, area.owner, shown)) return fail(std::move(*refused));
  }
  UniqueFd fd(::openat(dir->get(), last.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ELOOP) {
      return fail(codes::kFilesSymlink, "path",
                  shown + " is a symbolic link: links are never followed");
    }
    if (err == ENOENT) return fail(codes::kFilesNotFound, "path", shown + " does not exist");
    if (err == EACCES && !area.owner.empty()) {
      return fail(codes::kFilesNotReadable, "path",
                  shown + " is not served: the job left it unreadable to TunePlane (mode " +
                      modeOctal(before.st_mode) +
                      "), which reads a job's files through the \"other\" bits");
    }
    return fail(codes::kFilesIo, "path",
                shown + ": cannot open (" + std::string(std::strerror(err)) + ")");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return fail(codes::kFilesIo, "path",
                shown + ": cannot read (" + std::string(std::strerror(errno)) + ")");
  }
  if (auto refused = refuseKind(st)) return fail(std::move(*refused));
  if (!area.owner.empty()) {
    if (auto refused = ownerMayNotRead(st, area.owner, shown)) return fail(std::move(*refused));
  }
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
