// A job's code folder as it travels with the job (`tuneplane submit --workdir DIR`, POST
// /v1/workdirs): a tree of plain files and folders — no links, no devices — bounded in total
// size and entry count, named by one SHA-256 over its sorted paths, kinds, modes and contents
// (workdirTreeSha256). On the wire it is a POSIX ustar archive holding regular files and
// directories only (parseWorkdirTar / writeWorkdirTar). Everything here is pure except
// readWorkdirDir, which reads a folder on the local disk. Thread-safety: free functions.
//
// The rules every tree keeps, whichever way it came in (each refusal names its rule):
//   paths        relative, '/'-separated, at most kMaxWorkdirPathBytes bytes; no empty, "."
//                or ".." component; no control character — workdir.invalid_path
//   kinds        regular files and folders; a link (symbolic or hard) is workdir.symlink, a
//                device, FIFO or socket workdir.special_file
//   modes        only "executable or not" is kept (0755 / 0644 in the hash)
//   once         one entry per path; a path both a file and a folder — workdir.duplicate_path
//   limits       the sum of the files' sizes <= max_bytes (workdir.too_large); files and
//                folders together <= max_files (workdir.too_many_files)
// Folders that hold something need not be listed: every file's parents are added, so the
// same files give the same hash whether an archive lists its folders or not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tuneplane::workdir {

inline constexpr std::uint64_t kDefaultMaxBytes = 64ull * 1024 * 1024;  // 64 MiB of contents
inline constexpr std::size_t kDefaultMaxFiles = 2000;                   // files and folders
inline constexpr std::size_t kMaxWorkdirPathBytes = 255;  // what ustar's prefix + name hold
// The reference a spec holds: "sha256:" and 64 lower-case hex digits.
inline constexpr std::string_view kReferencePrefix = "sha256:";

namespace codes {
inline constexpr const char* kTooLarge = "workdir.too_large";
inline constexpr const char* kTooManyFiles = "workdir.too_many_files";
inline constexpr const char* kInvalidPath = "workdir.invalid_path";
inline constexpr const char* kSymlink = "workdir.symlink";
inline constexpr const char* kSpecialFile = "workdir.special_file";
inline constexpr const char* kDuplicatePath = "workdir.duplicate_path";
inline constexpr const char* kInvalidArchive = "workdir.invalid_archive";
inline constexpr const char* kUnreadable = "workdir.unreadable";  // readWorkdirDir's I/O
// Used by the API and staging: a spec names an upload its user never made, or the stored
// copy no longer has the bytes its name promises.
inline constexpr const char* kUnknown = "workdir.unknown";
inline constexpr const char* kMismatch = "workdir.mismatch";
}  // namespace codes

struct Limits {
  std::uint64_t max_bytes = kDefaultMaxBytes;
  std::size_t max_files = kDefaultMaxFiles;

  bool operator==(const Limits&) const = default;
};

struct Entry {
  std::string path;  // relative, '/'-separated, no trailing '/'
  bool directory = false;
  bool executable = false;  // files only
  std::string content;      // files only

  bool operator==(const Entry&) const = default;
};

struct Tree {
  std::vector<Entry> entries;  // sorted by path (bytewise), each once, every parent listed
  std::uint64_t bytes = 0;     // the sum of the files' sizes
  std::size_t files = 0;       // regular files (entries.size() counts the folders too)

  bool operator==(const Tree&) const = default;
};

// Why `path` may not be in a tree, or "" when it may. See the rules above.
std::string pathProblem(std::string_view path);

// The tree of `entries` (any order): checked against every rule and `limits`, parents
// added, sorted. Errors: the codes of the rules above, field "workdir".
Result<Tree> makeTree(std::vector<Entry> entries, const Limits& limits);

// Lower-case hex SHA-256 over the entries in order, each as
//   'd' or 'f', ' ', "755" or "644", ' ', path, '\0', [files: decimal size, '\0', content]
// so a change of a path, a kind, the executable bit or a byte changes it.
std::string workdirTreeSha256(const Tree& tree);

// "sha256:<hex>"; and back: the hex of a well-formed reference, or "" when it is not one.
std::string workdirReference(std::string_view sha256_hex);
std::string referenceHex(std::string_view reference);

// A ustar archive (what POST /v1/workdirs takes): the limits are checked as the headers are
// read, before a file's bytes are copied, so an archive over them costs no more than its own
// size. Errors: the rules' codes, and workdir.invalid_archive (a header's checksum, a size, a
// truncated body, an extension header: pax and GNU long names are not taken).
Result<Tree> parseWorkdirTar(std::string_view archive, const Limits& limits);

// The archive of `tree`: ustar, folders then files as the tree orders them, modes 0755/0644,
// times and owners zero, so the same tree gives the same bytes. Errors: workdir.invalid_path
// (a path ustar cannot split into its prefix and name fields).
Result<std::string> writeWorkdirTar(const Tree& tree);

// The tree of the folder `dir` on this host. A symbolic link whose target lies inside `dir`
// and is a regular file is read as that file; any other link is workdir.symlink (naming
// where it points); devices, FIFOs and sockets workdir.special_file. The limits stop the
// walk as soon as they are passed. Errors: the rules' codes, workdir.unreadable.
Result<Tree> readWorkdirDir(const std::string& dir, const Limits& limits);

}  // namespace tuneplane::workdir
