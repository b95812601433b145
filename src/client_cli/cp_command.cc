// `tuneplane cp [-r] JOB[:ATTEMPT|:checkpoints][/PATH] LOCAL`: a job's outputs to this
// machine (GET /v1/jobs/{id}/files and /files/content), with kubectl cp's and cp's habits:
// a file lands in LOCAL, or in it when LOCAL is a directory; a folder needs -r and is copied
// as cp -r does (an area's root: its contents into LOCAL). The latest attempt's output/
// unless an attempt or the job's checkpoints/ is named.
//
// Each file is written to a partial file beside its final name (copy_paths.h) and renamed
// into place once it is whole and synced, so LOCAL never holds half a file. An interrupted
// copy (Ctrl-C: exit 130, or a lost connection) keeps the partial file and the server's
// version of it (ETag), and the same command resumes from there (Range + If-Range); a file
// that changed on the server meanwhile is fetched whole again. On a terminal, a progress bar
// on stderr. A folder's copy fetches each entry by the exact bytes of its name (the listing's
// path_encoded: a name that is not UTF-8 is shown with U+FFFD, which names no file) and
// writes it under the same bytes; one entry that cannot be copied never stops the rest.
// Entries the server will not serve (symbolic links, special files) are skipped, and an entry
// whose copy fails (gone, a server error, a local write) is not copied, each with a line on
// stderr; the exit code then says so: 2 when all were skipped, else the first failure's.
// Only what stops every copy stops the folder's: Ctrl-C, a server that cannot be reached or
// does not answer, a token refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <tl/expected.hpp>

#include "client_cli/busy_listing.h"
#include "client_cli/copy_paths.h"
#include "client_cli/exit_codes.h"
#include "client_cli/progress_bar.h"
#include "client_cli/server_commands.h"
#include "common/human.h"
#include "common/percent_encoding.h"
#include "common/unique_fd.h"

namespace tuneplane::cli {
namespace {

// Files smaller than this copy too fast for a bar to help.
constexpr uint64_t kCopyBarMinBytes = uint64_t{4} << 20;
// Entries asked for per listing page while copying a folder.
constexpr int kCopyPageSize = 1000;
// The longest ETag kept beside a partial file (the server's are about 40 bytes).
constexpr std::size_t kMaxEtagBytes = 200;

std::string errnoText() {
  return std::strerror(errno);
}

// A strong ETag as the server sends it: quoted printable ASCII.
bool isSaneEtag(const std::string& etag) {
  if (etag.size() < 2 || etag.size() > kMaxEtagBytes || etag.front() != '"' || etag.back() != '"') {
    return false;
  }
  return std::all_of(etag.begin(), etag.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::string readSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > kMaxEtagBytes ? std::string() : text;
}

bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool isDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string parentOf(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

class Copier {
 public:
  Copier(ServerSession& session, std::string job)
      : session_(session),
        job_(std::move(job)),
        bar_(session.io().err, session.io().err_terminal && session.format() == OutputFormat::kText,
             kCopyBarMinBytes, "copying") {}

  // What copyFile returns when the server refused or failed: api_error_ says how.
  static constexpr int kApiFailed = -1;

  // One file to `target`, through its partial file. 0, an exit code, or kApiFailed.
  // `shown`: how messages name it ("" → its path, or `target` for an area's root).
  int copyFile(const client::FileLocation& where, const std::string& target,
               const std::string& shown = "") {
    const std::string part = partialPath(target);
    const std::string etag_path = part + ".etag";
    uint64_t offset = 0;
    std::string if_range;
    struct stat st {};
    if (::lstat(part.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      const std::string etag = readSmallFile(etag_path);
      if (isSaneEtag(etag)) {
        offset = static_cast<uint64_t>(st.st_size);
        if_range = etag;
      }
    }
    UniqueFd fd(::open(part.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (!fd.valid()) return localFailure("cannot create " + part + ": " + errnoText());
    if (offset == 0 && ::ftruncate(fd.get(), 0) != 0) {
      return localFailure("cannot write " + part + ": " + errnoText());
    }
    std::optional<Error> local;
    bool interrupted = false;
    bool started = false;
    uint64_t in_file = 0;  // bytes the partial file holds
    const std::string label = !shown.empty() ? shown : where.path.empty() ? target : where.path;
    auto sink = [&](const client::DownloadHead& head, std::string_view chunk) {
      if (!started) {
        started = true;
        const bool resumes = head.status == 206 && head.offset == offset;
        in_file = resumes ? offset : 0;
        if ((!resumes && ::ftruncate(fd.get(), 0) != 0) ||
            ::lseek(fd.get(), static_cast<off_t>(in_file), SEEK_SET) < 0) {
          local = Error{"cli.local_io", "LOCAL", "cannot write " + part + ": " + errnoText()};
          return false;
        }
        // The version the partial file holds, for a resume after an interruption.
        std::ofstream(etag_path, std::ios::binary | std::ios::trunc)
            << (isSaneEtag(head.etag) ? head.etag : std::string());
      }
      if (!writeAll(fd.get(), chunk)) {
        local = Error{"cli.local_io", "LOCAL", "cannot write " + part + ": " + errnoText()};
        return false;
      }
      in_file += chunk.size();
      bar_.update(label, in_file, head.total);
      if (!session_.io().sleeper.sleepFor(std::chrono::milliseconds(0))) {
        interrupted = true;
        return false;
      }
      return true;
    };
    auto head = session_.api().downloadFile(job_, where, offset, if_range, sink);
    bar_.finish();
    if (interrupted) {
      session_.note(
          fmt::format("interrupted: {} of {} is kept in {}; run the same command again to resume",
                      formatBytes(in_file), label, part));
      return kExitInterrupted;
    }
    if (local) return localFailure(local->message);
    if (!head) {
      const client::ApiError& error = head.error();
      if (error.kind == client::FailureKind::kHttp && error.http_status == 416 && offset > 0) {
        // The partial file is no prefix of the file as it is now: start it over.
        ::unlink(part.c_str());
        ::unlink(etag_path.c_str());
        return copyFile(where, target, shown);
      }
      const bool refused = error.kind == client::FailureKind::kHttp && error.http_status < 500;
      if (refused || in_file == 0) {
        fd.reset();
        ::unlink(part.c_str());  // nothing to resume
        ::unlink(etag_path.c_str());
      } else {
        session_.note(fmt::format("{} of {} is kept in {}; run the same command again to resume",
                                  formatBytes(in_file), label, part));
      }
      api_error_ = error;
      return kApiFailed;
    }
    if (!started) in_file = head->status == 206 ? offset : 0;  // an empty body
    if (!started && head->status != 206 && ::ftruncate(fd.get(), 0) != 0) {
      return localFailure("cannot write " + part + ": " + errnoText());
    }
    if (in_file != head->total) {
      return failure({{"cli.incomplete_download", "SOURCE",
                       fmt::format("the download of {} ended after {} of {}; run the same "
                                   "command again to resume",
                                   label, formatBytes(in_file), formatBytes(head->total))}},
                     kExitServer);
    }
    if (::fsync(fd.get()) != 0) return localFailure("cannot sync " + part + ": " + errnoText());
    fd.reset();
    if (::rename(part.c_str(), target.c_str()) != 0) {
      return localFailure("cannot write " + target + ": " + errnoText());
    }
    ::unlink(etag_path.c_str());
    syncDirectory(parentOf(target));
    ++files_;
    bytes_ += head->total;
    copied_.push_back({{"path", label}, {"local", target}, {"bytes", head->total}});
    return kExitOk;
  }

  // The folder `root` (its path, its area and attempt) into `local_root`, entry by entry.
  // 0 once every entry was tried (those not copied are named on stderr and counted by
  // finalCode()), or what stopped the copy: kApiFailed (apiError()), 130, a local failure
  // to make `local_root`.
  int copyTree(client::FileLocation root, const std::string& local_root) {
    api_error_.reset();
    std::vector<Folder> todo{{root.path, root.path, local_root}};
    bool first = true;
    in_tree_ = true;
    while (!todo.empty()) {
      Folder folder = std::move(todo.back());
      todo.pop_back();
      if (int rc = makeDirectory(folder.local); rc != kExitOk) {
        if (first) return session_.fail(*failure_, rc);
        notCopied(folder.shown, failure_->front().message, rc);
        continue;
      }
      std::string token;
      do {
        client::FileLocation where = root;
        where.path = folder.remote;
        auto page = listPage(where, token);
        if (!page) {
          if (page.error() == kExitInterrupted) {
            session_.note("interrupted while the server was busy; run the same command again");
            return kExitInterrupted;
          }
          const client::ApiError error = *api_error_;
          if (first || stopsEveryCopy(error)) return kApiFailed;
          api_error_.reset();
          notCopied(folder.shown, error.errors.front().message, exitCodeFor(error, false));
          break;  // this folder's other pages: none can be had
        }
        first = false;
        // The attempt the first listing chose stays the one copied, even if a retry starts.
        if (!root.attempt && page->contains("attempt") && (*page)["attempt"].is_number_integer()) {
          root.attempt = (*page)["attempt"].get<int>();
        }
        token = page->value("continue", "");
        const client::Json items = page->value("items", client::Json::array());
        for (const client::Json& item : items) {
          if (int rc = copyEntry(root, folder, item, todo); rc != kExitOk) return rc;
        }
      } while (!token.empty());
    }
    return kExitOk;
  }

  // After the summary: 0, or the error that counts the entries not copied, with the exit
  // code of the first that failed (2 when every one was skipped).
  int finalCode() {
    if (skipped_.empty()) return kExitOk;
    return session_.fail({{"cli.entries_skipped", "SOURCE",
                           fmt::format("{} entr{} not copied (each named above)", skipped_.size(),
                                       skipped_.size() == 1 ? "y was" : "ies were")}},
                         first_failure_code_.value_or(kExitInvalid));
  }

  const std::optional<client::ApiError>& apiError() const { return api_error_; }
  uint64_t files() const { return files_; }
  uint64_t bytes() const { return bytes_; }
  const client::Json& copied() const { return copied_; }
  const client::Json& skipped() const { return skipped_; }

 private:
  // A folder to copy.
  struct Folder {
    std::string remote;  // its exact path in the area
    std::string shown;   // how messages name it (the listing's path: U+FFFD for odd bytes)
    std::string local;
  };

  // One listed entry of `folder`: a folder is queued in `todo`, a file copied, the rest
  // skipped. 0 (copied, or named as not copied) or what stops every copy.
  int copyEntry(const client::FileLocation& root, const Folder& folder, const client::Json& item,
                std::vector<Folder>& todo) {
    const std::string type = item.value("type", "");
    const std::string shown_name = item.value("name", "");
    const std::string shown = folder.shown.empty() ? shown_name : folder.shown + "/" + shown_name;
    // The name's exact bytes, from path_encoded (a server that predates it: the name as shown).
    std::string name = shown_name;
    if (item.contains("path_encoded")) {
      const client::Json& encoded = item["path_encoded"];
      const auto exact =
          encoded.is_string() ? percentDecode(encoded.get<std::string>()) : std::nullopt;
      if (!exact) {
        skip(shown, "the listing's path_encoded is not percent-encoded");
        return kExitOk;
      }
      name = exact->substr(exact->rfind('/') + 1);  // npos + 1 == 0: no '/'
      if (*exact != (folder.remote.empty() ? name : folder.remote + "/" + name)) {
        skip(shown, "the listing's path_encoded is not in this folder");
        return kExitOk;
      }
    }
    if (!isSafeEntryName(name)) {
      skip(shown, "its name cannot be a local file name");
      return kExitOk;
    }
    const std::string child = folder.remote.empty() ? name : folder.remote + "/" + name;
    const std::string local = folder.local + "/" + name;
    if (type == "directory") {
      todo.push_back({child, shown, local});
      return kExitOk;
    }
    if (type != "file") {
      skip(shown,
           type == "symlink" ? "a symbolic link: links are never followed" : "not a regular file");
      return kExitOk;
    }
    client::FileLocation file = root;
    file.path = child;
    const int rc = copyFile(file, local, shown);
    if (rc == kExitOk) return kExitOk;
    if (rc == kExitInterrupted) return rc;
    if (rc == kApiFailed) {
      const client::ApiError error = *api_error_;
      if (stopsEveryCopy(error)) return kApiFailed;
      api_error_.reset();
      if (refusedByServer(error)) {
        skip(shown, error.errors.front().message);
      } else {
        notCopied(shown, error.errors.front().message, exitCodeFor(error, false));
      }
      return kExitOk;
    }
    notCopied(shown, failure_->front().message, rc);  // a local write, a download cut short
    return kExitOk;
  }

  // One page of a folder's listing (busy_listing.h: a busy server is asked again).
  // Fails with kApiFailed (api_error_ says why) or kExitInterrupted.
  tl::expected<client::Json, int> listPage(const client::FileLocation& where,
                                           const std::string& token) {
    auto page =
        listPatiently(session_.api(), session_.io().sleeper, job_, where, {kCopyPageSize, token});
    if (page) return std::move(*page);
    if (!page.error().error) return tl::unexpected(kExitInterrupted);
    api_error_ = *page.error().error;
    return tl::unexpected(kApiFailed);
  }

  // What ends a folder's copy rather than one entry's: the server cannot be reached or did
  // not answer (every other request would fail the same way), or refuses the token.
  static bool stopsEveryCopy(const client::ApiError& error) {
    return error.kind == client::FailureKind::kNotSent ||
           error.kind == client::FailureKind::kNoAnswer ||
           error.kind == client::FailureKind::kBadResponse ||
           (error.kind == client::FailureKind::kHttp &&
            (error.http_status == 401 || error.http_status == 403));
  }

  // A file the server refuses as the job's doing (a link, a FIFO, a hard link: 409), which a
  // folder's copy skips.
  static bool refusedByServer(const client::ApiError& error) {
    return error.kind == client::FailureKind::kHttp && error.http_status == 409 &&
           !error.errors.empty();
  }

  // An entry not copied because its copy failed: named now, counted at the end.
  void notCopied(const std::string& path, const std::string& why, int exit_code) {
    session_.note(fmt::format("not copied {}: {}", path, why));
    skipped_.push_back({{"path", path}, {"reason", why}});
    if (!first_failure_code_) first_failure_code_ = exit_code;
  }

  // A failure of one file's copy: printed at once for a single file; within a folder, kept
  // (failure_) for copyTree to name, so that one file does not end the folder's copy.
  int failure(const Errors& errors, int exit_code) {
    if (in_tree_) {
      failure_ = errors;
      return exit_code;
    }
    return session_.fail(errors, exit_code);
  }

  void skip(const std::string& path, const std::string& why) {
    session_.note(fmt::format("skipped {}: {}", path, why));
    skipped_.push_back({{"path", path}, {"reason", why}});
  }

  int makeDirectory(const std::string& path) {
    if (::mkdir(path.c_str(), 0777) == 0 || (errno == EEXIST && isDirectory(path))) {
      return kExitOk;
    }
    return localFailure("cannot create the folder " + path + ": " + errnoText());
  }

  int localFailure(const std::string& message) {
    return failure({{"cli.local_io", "LOCAL", message}}, kExitFailure);
  }

  static void syncDirectory(const std::string& dir) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.valid()) ::fsync(fd.get());  // best effort: the rename is already visible
  }

  ServerSession& session_;
  std::string job_;
  ProgressBar bar_;
  std::optional<client::ApiError> api_error_;
  bool in_tree_ = false;                   // copying a folder: one file's failure is not the end
  std::optional<Errors> failure_;          // the last local or download failure within a folder
  std::optional<int> first_failure_code_;  // the exit code of the first entry that failed
  uint64_t files_ = 0;
  uint64_t bytes_ = 0;
  client::Json copied_ = client::Json::array();
  client::Json skipped_ = client::Json::array();
};

bool isDirectoryError(const client::ApiError& error) {
  return error.kind == client::FailureKind::kHttp && !error.errors.empty() &&
         error.errors.front().code == "files.is_directory";
}

}  // namespace

int runCp(const CpFlags& flags, CommandIo& io) {
  auto session = ServerSession::open(flags.server, io);
  if (!session) return session.error();
  auto source = parseCopySource(flags.source);
  if (!source) return session->fail({source.error()}, kExitInvalid);
  if (flags.destination.empty()) {
    return session->fail({{"cli.invalid_destination", "LOCAL", "name a local file or folder"}},
                         kExitInvalid);
  }
  const bool destination_is_directory = isDirectory(flags.destination);
  if (flags.destination.back() == '/' && !destination_is_directory) {
    return session->fail({{"cli.invalid_destination", "LOCAL",
                           "no folder " + flags.destination + " (it ends with '/')"}},
                         kExitInvalid);
  }
  const std::string base = sourceBaseName(*source);
  const std::string target = localTarget(flags.destination, destination_is_directory, base);
  const auto needsRecursive = [&] {
    return session->fail(
        {{"cli.is_directory", "SOURCE",
          fmt::format("{} is a folder: add -r to copy it and everything in it", flags.source)}},
        kExitInvalid);
  };
  Copier copier(*session, source->job);
  int rc = kExitOk;
  if (source->where.path.empty()) {  // an area's root: a folder
    if (!flags.recursive) return needsRecursive();
    rc = copier.copyTree(source->where, target);
  } else {
    rc = copier.copyFile(source->where, target);
    if (rc == Copier::kApiFailed && isDirectoryError(*copier.apiError())) {
      if (!flags.recursive) return needsRecursive();
      rc = copier.copyTree(source->where, target);
    }
  }
  if (rc == Copier::kApiFailed) return session->fail(*copier.apiError(), false);
  if (rc != kExitOk) return rc;
  if (session->format() != OutputFormat::kText) {
    session->printDocument({{"source", flags.source},
                            {"destination", target},
                            {"files", copier.copied()},
                            {"skipped", copier.skipped()}});
  } else {
    session->note(fmt::format("copied {} file{} ({}) to {}", copier.files(),
                              copier.files() == 1 ? "" : "s", formatBytes(copier.bytes()), target));
  }
  return copier.finalCode();
}

void addCpCommand(CLI::App& app, IoSource io) {
  auto flags = std::make_shared<CpFlags>();
  CLI::App* cmd =
      app.add_subcommand("cp", "Copy a job's output files (or its checkpoints) to this machine");
  cmd->add_option("SOURCE", flags->source,
                  "JOB[:ATTEMPT|:checkpoints][/PATH]: the latest attempt's output/ unless an "
                  "attempt number or the job's checkpoints/ is named")
      ->required();
  cmd->add_option("LOCAL", flags->destination, "A local file, or an existing folder to copy into")
      ->required();
  cmd->add_flag("-r,--recursive", flags->recursive, "Copy a folder and everything in it");
  addServerFlags(*cmd, flags->server);
  cmd->footer(kServerExitCodes);
  bindRunner(*cmd, flags, std::move(io), runCp);
}

}  // namespace tuneplane::cli
