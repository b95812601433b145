#include "catalog/artifact_verifier.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include <openssl/evp.h>

#include "catalog/error_codes.h"
#include "common/unique_fd.h"

namespace tuneplane::catalog {
namespace {

constexpr std::size_t kChunkBytes = 1 << 20;  // 1 MiB: large enough that syscalls are noise

struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::string hex(const unsigned char* bytes, unsigned len) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

}  // namespace

struct ArtifactVerifier::Impl {
  // What makes a cached digest trustworthy: the same inode with the same size, content
  // modification time and status change time. Any write (or a touch) moves mtime/ctime;
  // replacing the file (rename over it) changes the inode.
  struct FileIdentity {
    dev_t dev;
    ino_t ino;
    off_t size;
    time_t mtime_sec;
    long mtime_nsec;
    time_t ctime_sec;
    long ctime_nsec;
    auto tie() const {
      return std::tie(dev, ino, size, mtime_sec, mtime_nsec, ctime_sec, ctime_nsec);
    }
    bool operator==(const FileIdentity& o) const { return tie() == o.tie(); }
  };

  static FileIdentity identityOf(const struct stat& st) {
    return FileIdentity{st.st_dev,          st.st_ino,         st.st_size,        st.st_mtim.tv_sec,
                        st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
  }

  std::mutex mu;
  std::map<std::string, std::pair<FileIdentity, std::string>> cache;  // path → (id, digest)
  std::atomic<long long> full_reads{0};

  // Streams the open file through SHA-256. The identity is taken from fstat on the same fd
  // before and after reading, so a file changed while being hashed is not cached.
  Result<std::string> hashFd(int fd, const std::string& path, std::string_view field,
                             uint64_t total, const Progress& progress) {
    ++full_reads;
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // a hint; failure changes nothing
#endif
    std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
      return fail(codes::kArtifactUnreadable, std::string(field), "cannot initialise SHA-256");
    }
    std::vector<unsigned char> buffer(kChunkBytes);
    uint64_t done = 0;
    for (;;) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        return fail(codes::kArtifactUnreadable, std::string(field),
                    path + ": read failed: " + std::strerror(errno));
      }
      EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<std::size_t>(n));
      done += static_cast<uint64_t>(n);
      if (progress) progress(done, total);
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_DigestFinal_ex(ctx.get(), digest, &len);
    return hex(digest, len);
  }

  Result<std::string> digestOf(const std::string& path, std::string_view field,
                               const Progress& progress) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) {
        return fail(codes::kArtifactMissing, std::string(field), path + ": no such file");
      }
      return fail(codes::kArtifactUnreadable, std::string(field),
                  path + ": " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
      return fail(codes::kArtifactNotRegularFile, std::string(field),
                  path + ": not a regular file");
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = cache.find(path);
      if (it != cache.end() && it->second.first == identityOf(st)) return it->second.second;
    }
    // Hash without holding the lock: other artifacts (and cache hits) are not blocked by a
    // multi-GB read. Two threads may hash the same new file at once; both get the answer.
    const int raw =
        ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // never block on a FIFO
    if (raw < 0) {
      if (errno == ENOENT)
        return fail(codes::kArtifactMissing, std::string(field), path + ": no such file");
      return fail(codes::kArtifactUnreadable, std::string(field),
                  path + ": " + std::strerror(errno));
    }
    const UniqueFd fd(raw);
    struct stat before {};
    if (::fstat(fd.get(), &before) != 0 || !S_ISREG(before.st_mode)) {
      return fail(codes::kArtifactNotRegularFile, std::string(field),
                  path + ": not a regular file");
    }
    auto digest = hashFd(fd.get(), path, field, static_cast<uint64_t>(before.st_size), progress);
    if (!digest) return digest;
    struct stat after {};
    if (::fstat(fd.get(), &after) == 0 && identityOf(after) == identityOf(before)) {
      std::lock_guard<std::mutex> lock(mu);
      cache[path] = {identityOf(before), *digest};
    }
    return digest;
  }
};

ArtifactVerifier::ArtifactVerifier() : impl_(new Impl) {}
ArtifactVerifier::~ArtifactVerifier() {
  delete impl_;
}

Status ArtifactVerifier::verify(const std::string& path, const std::string& expected_sha256,
                                const std::string& field) {
  return verify(path, expected_sha256, field, Progress());
}

Status ArtifactVerifier::verify(const std::string& path, const std::string& expected_sha256,
                                const std::string& field, const Progress& progress) {
  auto digest = impl_->digestOf(path, field, progress);
  if (!digest) return fail(digest.error());
  if (*digest != lower(expected_sha256)) {
    return fail(codes::kArtifactSha256Mismatch, field,
                path + ": SHA-256 is " + *digest + ", the registry says " + lower(expected_sha256));
  }
  return ok();
}

Result<std::string> ArtifactVerifier::sha256Of(const std::string& path) {
  return impl_->digestOf(path, "", Progress());
}

long long ArtifactVerifier::fullReads() const {
  return impl_->full_reads.load();
}

}  // namespace tuneplane::catalog
