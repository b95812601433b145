// A job's outputs as the API hands them out: each attempt's output/ and the job's
// checkpoints/ directory ("areas"), listed one page at a time and read by byte ranges.
//
//   <staging_root>/jobs/<job_id>/
//   ├── attempts/<n>/output/   area "output" of attempt n (the job writes it)
//   └── checkpoints/           area "checkpoints": the job's, shared by its attempts
//
// The job owns both areas and may plant anything there: a symlink to another job's output
// or to the site's secrets, a hard link to one, a FIFO, a million entries, names with
// newlines. So (the contract, tested in tests/attempt/output_files_test.cc):
//  - a requested path is relative and checked by checkOutputPath before any I/O: no "..",
//    no ".", no empty component, no leading "/", no NUL, at most kMaxPathBytes bytes and
//    kMaxNameBytes per component; each refusal names its rule;
//  - it is walked from the staging root one component at a time with
//    openat(O_NOFOLLOW|O_DIRECTORY) — "jobs", the job id, "attempts", n, "output", then the
//    path — so a symlink anywhere is refused (files.symlink), never followed, and nothing
//    outside the area can be reached, whatever the job renamed or replaced meanwhile;
//  - only a regular file with one link is read: a FIFO, socket or device is refused
//    (files.not_regular_file) before it is opened, and a file with more than one hard link
//    (files.hard_link), which could be another file's content;
//  - a page costs what it holds, whatever the directory's size: it starts where the previous
//    one stopped — the directory-stream position (readdir's d_off cookie, telldir's value)
//    after its last entry — and reads at most `limit` (<= kMaxListLimit) entries, one more to
//    know whether there are more, and "." and "..". So entries come in the directory's own
//    order (a hash order on ext4, the server's on NFS), not sorted, and a position is bound to
//    the directory's inode: it is never used on another folder;
//  - slurm.identity per_user (the area has an owner: the job's Unix user, its files under
//    <staging_root>/users/<owner>/…, walked as above from the root): a file is served only
//    when its owner may read it — it belongs to the job's user or to TunePlane's, with the
//    owner's read bit — and TunePlane may read it (through the "other" bits: the job's umask
//    is 022); else files.not_readable, a 409 like the others: the job's doing;
//  - errors name the path inside the area ("output/a/b"), never the server's own paths.
// Thread-safety: free functions and values; an OutputFile is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace tuneplane::attempt {

inline constexpr std::size_t kMaxPathBytes = 4096;  // PATH_MAX: a requested path
inline constexpr std::size_t kMaxNameBytes = 255;   // NAME_MAX: one component
inline constexpr std::size_t kDefaultListLimit = 200;
inline constexpr std::size_t kMaxListLimit = 1000;  // entries per page

enum class OutputArea {
  kOutput,       // attempts/<n>/output/
  kCheckpoints,  // checkpoints/ (one per job)
};

// "output", "checkpoints".
std::string_view toString(OutputArea area);
std::optional<OutputArea> parseOutputArea(std::string_view text);

// Where an area is: the staging root (a trusted, site-configured path) and the components
// below it, each opened with O_NOFOLLOW.
struct AreaLocation {
  std::string root;                     // <staging_root>
  std::vector<std::string> components;  // {"jobs", id, "attempts", "2", "output"} (per_user:
                                        // {"users", owner, "jobs", …})
  OutputArea area = OutputArea::kOutput;
  std::string owner;  // per_user: the job's Unix user (its run_as); "" in shared mode
  bool operator==(const AreaLocation&) const = default;
};

// The area of job `job_id` beside its attempt staged at `attempt_dir` (as the store keeps
// it: <root>/jobs/<job_id>/attempts/<n>, or per_user <root>/users/<run_as>/jobs/…, with
// `run_as` the job's store::JobRecord::run_as): attempt n's output/, or the job's
// checkpoints/. Errors: "files.io" when attempt_dir is not such a path (a store this server
// did not write).
Result<AreaLocation> areaOf(std::string_view attempt_dir, std::string_view job_id, OutputArea area,
                            std::string_view run_as = {});

// The rules of a requested path, as its components ("" → none: the area's root). A single
// trailing "/" is allowed (a directory). Errors: "files.invalid_path" naming the rule.
Result<std::vector<std::string>> checkOutputPath(std::string_view path);

enum class FileType { kFile, kDirectory, kSymlink, kOther };
std::string_view toString(FileType type);  // "file", "directory", "symlink", "other"

struct FileEntry {
  std::string name;  // as on disk (may be any bytes but '/' and NUL)
  FileType type = FileType::kOther;
  uint64_t size = 0;  // st_size (a symlink's: its target's length; never followed)
  int64_t modified_ms = 0;
  bool operator==(const FileEntry&) const = default;
};

// Where a page of a directory starts. The cookie is the d_off readdir gave the previous
// page's last entry: lseek(2) to it and the stream goes on after that entry. On Linux it
// stays valid across opens of the directory — a hash on ext4 and XFS, the server's cookie
// on NFS — so a client may take the next page minutes later, from another connection.
struct ListPosition {
  int64_t cookie = 0;      // 0: the directory's start
  uint64_t directory = 0;  // the inode of the directory the cookie belongs to; 0 at the start

  bool operator==(const ListPosition&) const = default;
};

struct ListPage {
  // The directory's own order (readdir's), not sorted. An entry removed between the read
  // and its stat is left out, so a page may hold fewer than `limit` and still have a next.
  std::vector<FileEntry> entries;
  std::optional<ListPosition> next;  // where the next page starts; nullopt: this is the last
  // Directory entries this page read, "." and ".." included: at most limit + 3 (the page,
  // the one entry that says there are more, and the two dots), whatever the directory holds.
  uint64_t entries_read = 0;
};

// One page of the directory `path` (checked components) of the area: up to `limit` entries
// from `from` on. REQUIRES: 1 <= limit <= kMaxListLimit. Errors: "files.not_found" (the
// area or a component is missing), "files.symlink", "files.not_a_directory",
// "files.bad_position" (`from` belongs to another directory — the folder was replaced — or
// the filesystem refuses it), "files.io".
Result<ListPage> listOutputDirectory(const AreaLocation& area, const std::vector<std::string>& path,
                                     const ListPosition& from, std::size_t limit);

// Whether the area's root exists as a directory (walked as above; a symlink does not count).
bool outputAreaExists(const AreaLocation& area);

// An open regular file of an area, read by offset. Its identity is fixed at open: what is
// read is that file even if the job renames or replaces the name meanwhile.
struct OutputFile {
  UniqueFd fd;
  std::string name;  // the last component
  uint64_t size = 0;
  int64_t modified_ms = 0;
  std::string etag;  // strong: "<inode>-<size>-<mtime ns>" in hex, quoted

  // Reads up to `length` bytes at `offset` into `buffer`; 0 at the end of the file.
  // Errors: "files.io".
  Result<std::size_t> readAt(uint64_t offset, char* buffer, std::size_t length) const;
};

// Opens the file `path` (checked components, at least one) of the area. Errors:
// "files.not_found", "files.symlink", "files.is_directory", "files.not_a_directory" (a
// component on the way), "files.not_regular_file", "files.hard_link", "files.not_readable"
// (an area with an owner: see above), "files.io".
Result<OutputFile> openOutputFile(const AreaLocation& area, const std::vector<std::string>& path);

// "output/a/b" (the area's name and the components): how errors name a path.
std::string displayPath(OutputArea area, const std::vector<std::string>& path);

}  // namespace tuneplane::attempt
