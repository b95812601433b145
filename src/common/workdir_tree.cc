// See workdir_tree.h.
#include "common/workdir_tree.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "common/text_checks.h"

namespace tuneplane::workdir {
namespace {

constexpr std::size_t kBlock = 512;
constexpr const char* kField = "workdir";

// A path for a message: control characters shown as '?', long ones cut.
std::string shown(std::string_view path) {
  std::string out(path.substr(0, 120));
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = '?';
  }
  if (path.size() > 120) out += "…";
  return out;
}

std::string tooLargeMessage(const Limits& limits) {
  return "the folder's files hold more than " + std::to_string(limits.max_bytes) +
         " bytes, the site's limit (server.workdir_max_bytes); send only the code the job needs";
}

std::string tooManyMessage(const Limits& limits) {
  return "the folder has more than " + std::to_string(limits.max_files) +
         " files and folders, the site's limit (server.workdir_max_files); send only the code "
         "the job needs";
}

// Collects entries, checking each rule and limit as it comes.
class TreeBuilder {
 public:
  explicit TreeBuilder(const Limits& limits) : limits_(limits) {}

  // Checked before a file's content is read: `size` bytes would pass the size limit.
  Status admitFile(std::string_view path, std::uint64_t size) {
    if (auto checked = admitPath(path); !checked) return checked;
    if (size > limits_.max_bytes || bytes_ + size > limits_.max_bytes) {
      return fail(codes::kTooLarge, kField, tooLargeMessage(limits_));
    }
    return ok();
  }

  Status add(Entry entry) {
    if (!entry.directory) {
      if (auto admitted = admitFile(entry.path, entry.content.size()); !admitted) return admitted;
    } else if (auto checked = admitPath(entry.path); !checked) {
      return checked;
    }
    if (entry.directory) entry.executable = false;
    auto [it, inserted] = entries_.try_emplace(entry.path, Entry{});
    if (!inserted) {
      // A folder listed again (an archive may list it before and after its files) is one.
      if (entry.directory && it->second.directory) return ok();
      return fail(codes::kDuplicatePath, kField,
                  "'" + shown(entry.path) + "' appears twice in the folder");
    }
    if (!entry.directory) {
      bytes_ += entry.content.size();
      ++files_;
    }
    it->second = std::move(entry);
    return countEntries();
  }

  Result<Tree> finish() {
    // Every file's parents, as folders; a parent that is a file is a clash.
    std::vector<std::string> parents;
    for (const auto& [path, entry] : entries_) {
      for (std::size_t slash = path.find('/'); slash != std::string::npos;
           slash = path.find('/', slash + 1)) {
        parents.push_back(path.substr(0, slash));
      }
    }
    for (std::string& parent : parents) {
      auto it = entries_.find(parent);
      if (it == entries_.end()) {
        entries_.emplace(parent, Entry{parent, true, false, {}});
        if (auto counted = countEntries(); !counted) return fail(counted.error());
      } else if (!it->second.directory) {
        return fail(codes::kDuplicatePath, kField,
                    "'" + shown(parent) + "' is both a file and a folder");
      }
    }
    Tree tree;
    tree.bytes = bytes_;
    tree.files = files_;
    tree.entries.reserve(entries_.size());
    for (auto& [path, entry] : entries_) tree.entries.push_back(std::move(entry));
    return tree;
  }

 private:
  Status admitPath(std::string_view path) {
    if (std::string problem = pathProblem(path); !problem.empty()) {
      return fail(codes::kInvalidPath, kField, "'" + shown(path) + "' " + problem);
    }
    return ok();
  }

  Status countEntries() {
    if (entries_.size() > limits_.max_files) {
      return fail(codes::kTooManyFiles, kField, tooManyMessage(limits_));
    }
    return ok();
  }

  const Limits& limits_;
  std::map<std::string, Entry> entries_;  // std::map: sorted bytewise by path
  std::uint64_t bytes_ = 0;
  std::size_t files_ = 0;
};

// ---- ustar ----

std::string_view headerString(const char* header, std::size_t offset, std::size_t size) {
  std::string_view field(header + offset, size);
  const auto nul = field.find('\0');
  return nul == std::string_view::npos ? field : field.substr(0, nul);
}

// An octal number field (spaces and NULs around it allowed); nullopt when not one.
std::optional<std::uint64_t> octalField(const char* header, std::size_t offset, std::size_t size) {
  std::string_view field(header + offset, size);
  std::size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  std::uint64_t value = 0;
  std::size_t digits = 0;
  for (; i < field.size() && field[i] >= '0' && field[i] <= '7'; ++i, ++digits) {
    if (value > (UINT64_MAX >> 3)) return std::nullopt;
    value = value * 8 + static_cast<std::uint64_t>(field[i] - '0');
  }
  for (; i < field.size(); ++i) {
    if (field[i] != ' ' && field[i] != '\0') return std::nullopt;
  }
  if (digits == 0) return std::nullopt;
  return value;
}

bool checksumMatches(const char* header) {
  auto stored = octalField(header, 148, 8);
  if (!stored) return false;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    const bool in_field = i >= 148 && i < 156;
    sum += in_field ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(header[i]);
  }
  return sum == *stored;
}

bool allZero(const char* block) {
  return std::all_of(block, block + kBlock, [](char c) { return c == '\0'; });
}

tl::unexpected<Error> badArchive(const std::string& why) {
  return fail(codes::kInvalidArchive, kField, "not a ustar archive of files and folders: " + why);
}

void putOctal(char* header, std::size_t offset, std::size_t size, std::uint64_t value) {
  // size - 1 octal digits, zero-padded, then a NUL.
  for (std::size_t i = size - 1; i-- > 0;) {
    header[offset + i] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
  header[offset + size - 1] = '\0';
}

}  // namespace

std::string pathProblem(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.size() > kMaxWorkdirPathBytes) {
    return "is longer than " + std::to_string(kMaxWorkdirPathBytes) + " bytes";
  }
  if (path.front() == '/') return "is absolute; paths are relative to the folder";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part.empty()) return "has an empty component";
    if (part == "." || part == "..") return "has a '.' or '..' component";
    start = end + 1;
  }
  for (char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return "has a control character";
  }
  return "";
}

Result<Tree> makeTree(std::vector<Entry> entries, const Limits& limits) {
  TreeBuilder builder(limits);
  for (Entry& entry : entries) {
    if (auto added = builder.add(std::move(entry)); !added) return fail(added.error());
  }
  return builder.finish();
}

std::string workdirTreeSha256(const Tree& tree) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  const auto put = [&](std::string_view bytes) {
    EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  };
  for (const Entry& entry : tree.entries) {
    put(entry.directory ? "d 755 " : (entry.executable ? "f 755 " : "f 644 "));
    put(entry.path);
    put(std::string_view("\0", 1));
    if (!entry.directory) {
      put(std::to_string(entry.content.size()));
      put(std::string_view("\0", 1));
      put(entry.content);
    }
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  return lowerHex(digest, length);
}

std::string workdirReference(std::string_view sha256_hex) {
  return std::string(kReferencePrefix) + std::string(sha256_hex);
}

std::string referenceHex(std::string_view reference) {
  if (!reference.starts_with(kReferencePrefix)) return "";
  const std::string_view hex = reference.substr(kReferencePrefix.size());
  return isSha256Hex(hex) ? std::string(hex) : "";
}

Result<Tree> parseWorkdirTar(std::string_view archive, const Limits& limits) {
  TreeBuilder builder(limits);
  std::size_t at = 0;
  bool ended = false;
  while (at + kBlock <= archive.size()) {
    const char* header = archive.data() + at;
    if (allZero(header)) {
      ended = true;
      break;
    }
    if (!checksumMatches(header)) {
      return badArchive("a header's checksum is wrong at byte " + std::to_string(at));
    }
    const std::string_view magic(header + 257, 5);
    if (magic != "ustar") return badArchive("a header is not ustar (no 'ustar' magic)");
    std::string path(headerString(header, 0, 100));
    const std::string_view prefix = headerString(header, 345, 155);
    if (!prefix.empty()) path = std::string(prefix) + "/" + path;
    const char type = header[156];
    auto size = octalField(header, 124, 12);
    auto mode = octalField(header, 100, 8);
    if (!size || !mode) return badArchive("'" + shown(path) + "' has no octal size or mode");
    at += kBlock;
    switch (type) {
      case '0':
      case '\0':
      case '7': {  // '7': a contiguous file, a regular file to everyone but its writer
        if (auto admitted = builder.admitFile(path, *size); !admitted) {
          return fail(admitted.error());
        }
        if (*size > archive.size() - at) {
          return badArchive("'" + shown(path) + "' is cut short");
        }
        Entry entry{path, false, (*mode & 0100) != 0, std::string(archive.substr(at, *size))};
        at += (*size + kBlock - 1) / kBlock * kBlock;
        if (auto added = builder.add(std::move(entry)); !added) return fail(added.error());
        break;
      }
      case '5': {
        while (path.size() > 1 && path.back() == '/') path.pop_back();
        if (auto added = builder.add(Entry{path, true, false, {}}); !added) {
          return fail(added.error());
        }
        break;
      }
      case '1':
      case '2':
        return fail(codes::kSymlink, kField,
                    "'" + shown(path) + "' is a link (to '" +
                        shown(headerString(header, 157, 100)) +
                        "'); send the file itself: links are not staged");
      case '3':
      case '4':
      case '6':
        return fail(codes::kSpecialFile, kField,
                    "'" + shown(path) + "' is a device or FIFO; only files and folders are sent");
      default:
        return badArchive("'" + shown(path) + "' has entry type '" + std::string(1, type) +
                          "' (pax and GNU extension headers are not taken; names must fit "
                          "ustar's 255 bytes)");
    }
  }
  // Without the end-of-archive blocks is tolerated (some writers stop after the last file);
  // a partial header is not.
  if (!ended && at != archive.size()) return badArchive("it ends inside a header");
  return builder.finish();
}

Result<std::string> writeWorkdirTar(const Tree& tree) {
  std::string out;
  out.reserve(tree.bytes + (tree.entries.size() + 2) * 2 * kBlock);
  for (const Entry& entry : tree.entries) {
    char header[kBlock];
    std::memset(header, 0, sizeof header);
    const std::string& path = entry.path;
    std::string_view name = path;
    std::string_view prefix;
    if (path.size() > 100) {
      // Split at a '/' so that the prefix fits 155 bytes and the name 100.
      std::size_t split = std::string::npos;
      for (std::size_t slash = path.find('/'); slash != std::string::npos;
           slash = path.find('/', slash + 1)) {
        if (slash <= 155 && path.size() - slash - 1 <= 100) {
          split = slash;
          break;
        }
      }
      if (split == std::string::npos) {
        return fail(codes::kInvalidPath, kField,
                    "'" + shown(path) +
                        "' cannot be written to a ustar archive (a name over 100 "
                        "bytes, or a folder path over 155)");
      }
      prefix = std::string_view(path).substr(0, split);
      name = std::string_view(path).substr(split + 1);
    }
    if (!name.empty()) std::memcpy(header, name.data(), name.size());
    const std::uint64_t mode = entry.directory || entry.executable ? 0755 : 0644;
    putOctal(header, 100, 8, mode);
    putOctal(header, 108, 8, 0);
    putOctal(header, 116, 8, 0);
    putOctal(header, 124, 12, entry.directory ? 0 : entry.content.size());
    putOctal(header, 136, 12, 0);
    header[156] = entry.directory ? '5' : '0';
    std::memcpy(header + 257, "ustar", 6);  // with its NUL
    std::memcpy(header + 263, "00", 2);
    // An empty prefix's data() may be null, which memcpy must never be given (even for 0 bytes).
    if (!prefix.empty()) std::memcpy(header + 345, prefix.data(), prefix.size());
    std::memset(header + 148, ' ', 8);
    std::uint64_t sum = 0;
    for (char c : header) sum += static_cast<unsigned char>(c);
    putOctal(header, 148, 7, sum);
    header[155] = ' ';
    out.append(header, kBlock);
    if (!entry.directory) {
      out += entry.content;
      out.append((kBlock - entry.content.size() % kBlock) % kBlock, '\0');
    }
  }
  out.append(2 * kBlock, '\0');
  return out;
}

namespace {

Status unreadable(const std::string& path, int error) {
  return fail(codes::kUnreadable, kField, "cannot read '" + path + "': " + std::strerror(error));
}

// The whole of a regular file, opened without following a link, `size` bytes as stat said.
Result<std::string> readRegular(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return fail(unreadable(path, errno).error());
  std::string content;
  char buffer[64 * 1024];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return fail(unreadable(path, error).error());
    }
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return content;
}

class DirReader {
 public:
  DirReader(const std::string& root, const Limits& limits)
      : root_(root), limits_(limits), builder_(limits) {}

  Result<Tree> run() {
    std::error_code ec;
    canonical_root_ = std::filesystem::canonical(root_, ec);
    if (ec) return fail(unreadable(root_, ec.value()).error());
    struct stat st {};
    if (::stat(canonical_root_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return fail(codes::kUnreadable, kField, "'" + root_ + "' is not a folder");
    }
    if (auto walked = walk(canonical_root_.string(), ""); !walked) return fail(walked.error());
    return builder_.finish();
  }

 private:
  Status walk(const std::string& dir, const std::string& relative) {
    std::error_code ec;
    std::vector<std::string> names;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      names.push_back(it->path().filename().string());
      if (names.size() > limits_.max_files) {
        return fail(codes::kTooManyFiles, kField, tooManyMessage(limits_));
      }
    }
    if (ec) return unreadable(dir, ec.value());
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      const std::string path = dir + "/" + name;
      const std::string rel = relative.empty() ? name : relative + "/" + name;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) return unreadable(path, errno);
      if (S_ISLNK(st.st_mode)) {
        if (auto followed = followLink(path, rel); !followed) return followed;
      } else if (S_ISDIR(st.st_mode)) {
        if (auto added = builder_.add(Entry{rel, true, false, {}}); !added) return added;
        if (auto walked = walk(path, rel); !walked) return walked;
      } else if (S_ISREG(st.st_mode)) {
        if (auto added = addFile(path, rel, st); !added) return added;
      } else {
        return fail(codes::kSpecialFile, kField,
                    "'" + shown(rel) +
                        "' is a device, FIFO or socket; only files and folders "
                        "are sent");
      }
    }
    return ok();
  }

  Status addFile(const std::string& path, const std::string& rel, const struct stat& st) {
    if (auto admitted = builder_.admitFile(rel, static_cast<std::uint64_t>(st.st_size));
        !admitted) {
      return admitted;
    }
    auto content = readRegular(path);
    if (!content) return fail(content.error());
    return builder_.add(Entry{rel, false, (st.st_mode & S_IXUSR) != 0, std::move(*content)});
  }

  // A link to a regular file inside the folder is sent as that file; any other is refused.
  Status followLink(const std::string& path, const std::string& rel) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(path, ec);
    const auto resolved = std::filesystem::canonical(path, ec);
    const std::string shown_target = shown(target.string());
    if (ec) {
      return fail(codes::kSymlink, kField,
                  "'" + shown(rel) + "' is a link to '" + shown_target +
                      "', which does not exist; links are not sent");
    }
    const auto [root_end, ignored] = std::mismatch(canonical_root_.begin(), canonical_root_.end(),
                                                   resolved.begin(), resolved.end());
    if (root_end != canonical_root_.end()) {
      return fail(codes::kSymlink, kField,
                  "'" + shown(rel) + "' is a link to '" + shown_target +
                      "', outside the folder; copy what the job needs into the folder");
    }
    struct stat st {};
    if (::stat(resolved.c_str(), &st) != 0) return unreadable(resolved.string(), errno);
    if (!S_ISREG(st.st_mode)) {
      return fail(codes::kSymlink, kField,
                  "'" + shown(rel) + "' is a link to '" + shown_target +
                      "', which is not a regular file; only links to files are sent (as the "
                      "file)");
    }
    return addFile(resolved.string(), rel, st);
  }

  std::string root_;
  std::filesystem::path canonical_root_;
  const Limits& limits_;
  TreeBuilder builder_;
};

}  // namespace

Result<Tree> readWorkdirDir(const std::string& dir, const Limits& limits) {
  return DirReader(dir, limits).run();
}

}  // namespace tuneplane::workdir
