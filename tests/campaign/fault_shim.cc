// The campaign's two faults that live in the host rather than in Slurm (issue 21), preloaded
// into `tuneplane serve` (LD_PRELOAD) and switched at run time by the campaign:
//  - the staging filesystem full: while on, creating a file or directory under the staging
//    root, and writing or syncing a file under it, fail with ENOSPC, as a full NFS export
//    answers them (its writes are buffered, so fsync reports it too). Nothing else is
//    touched: the store's database and the logs live elsewhere, as on a site;
//  - the wall clock stepped forward: CLOCK_REALTIME (clock_gettime, gettimeofday, time) reads
//    an offset ahead, as after an NTP step; CLOCK_MONOTONIC does not move, as on a real host.
// Why not libfaketime: it also fakes sleeps, timed waits and the monotonic clock, and reads
// its offset from a file on each call; a step of the realtime clock is what NTP does.
//
// Control (environment): TUNEPLANE_FAULT_SHIM_CONTROL names a file of at least 16 bytes,
// mapped shared: byte 0 non-zero means "full"; bytes 8..15 are the clock offset in
// milliseconds (int64, host order). TUNEPLANE_FAULT_SHIM_ROOT is the staging root. Without
// them the shim passes every call through. Only calls that go through the dynamic linker are
// seen (the program's and libstdc++'s, not libc's calls to itself), which covers
// PosixStagingFs and std::filesystem.
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>

namespace {

struct Control {
  const volatile unsigned char* map = nullptr;  // the control file, or nullptr: pass through
  char root[PATH_MAX] = {};                     // as given
  char canonical_root[PATH_MAX] = {};           // realpath of it
};

Control* control() {
  static std::atomic<Control*> ready{nullptr};
  static std::atomic_flag busy = ATOMIC_FLAG_INIT;
  static Control storage;
  if (Control* c = ready.load(std::memory_order_acquire)) return c;
  // The first caller sets it up with raw system calls (no interposed function is re-entered);
  // a concurrent first call passes through rather than waits.
  if (busy.test_and_set()) return nullptr;
  const char* path = getenv("TUNEPLANE_FAULT_SHIM_CONTROL");
  const char* root = getenv("TUNEPLANE_FAULT_SHIM_ROOT");
  if (path != nullptr && root != nullptr && strlen(root) < sizeof storage.root) {
    const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
    if (fd >= 0) {
      void* map = mmap(nullptr, 16, PROT_READ, MAP_SHARED, fd, 0);
      syscall(SYS_close, fd);
      if (map != MAP_FAILED) {
        strcpy(storage.root, root);
        if (realpath(root, storage.canonical_root) == nullptr) strcpy(storage.canonical_root, root);
        storage.map = static_cast<const volatile unsigned char*>(map);
      }
    }
  }
  ready.store(&storage, std::memory_order_release);
  return &storage;
}

bool full() {
  const Control* c = control();
  return c != nullptr && c->map != nullptr && c->map[0] != 0;
}

int64_t offsetMs() {
  const Control* c = control();
  if (c == nullptr || c->map == nullptr) return 0;
  int64_t ms = 0;
  memcpy(&ms, const_cast<const unsigned char*>(c->map) + 8, sizeof ms);
  return ms;
}

bool startsWithDir(const char* path, const char* dir) {
  const size_t n = strlen(dir);
  return n > 0 && strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool underRoot(const char* absolute) {
  const Control* c = control();
  return startsWithDir(absolute, c->root) || startsWithDir(absolute, c->canonical_root);
}

// The absolute path `path` names relative to `dirfd` (AT_FDCWD: the working directory).
bool resolve(int dirfd, const char* path, char* out, size_t size) {
  if (path == nullptr) return false;
  if (path[0] == '/') return snprintf(out, size, "%s", path) < static_cast<int>(size);
  char base[PATH_MAX];
  if (dirfd == AT_FDCWD) {
    if (getcwd(base, sizeof base) == nullptr) return false;
  } else {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    const ssize_t n = readlink(link, base, sizeof base - 1);
    if (n <= 0) return false;
    base[n] = '\0';
  }
  return snprintf(out, size, "%s/%s", base, path) < static_cast<int>(size);
}

// Whether making `path` (a file or directory that does not exist yet) needs room the full
// root lacks. What exists is left to the real call, as a full filesystem does: mkdir of an
// existing directory fails with EEXIST, an open with O_CREAT of an existing file succeeds.
bool pathIsFull(int dirfd, const char* path) {
  if (!full()) return false;
  char absolute[PATH_MAX];
  struct stat st;
  return resolve(dirfd, path, absolute, sizeof absolute) && underRoot(absolute) &&
         fstatat(AT_FDCWD, absolute, &st, AT_SYMLINK_NOFOLLOW) != 0;
}

bool fdIsFull(int fd) {
  if (!full()) return false;
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  return underRoot(target);
}

template <typename F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

int noSpace() {
  errno = ENOSPC;
  return -1;
}

bool creates(int flags) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

mode_t modeOf(int flags, va_list args) {
  return creates(flags) ? static_cast<mode_t>(va_arg(args, int)) : 0;
}

}  // namespace

extern "C" {

// open and openat, and their 64-bit names (the same functions on x86-64; a program may call
// either). The mode is read only when the call creates, as the libc reads it.
#define TP_SHIM_OPEN(name, ...)                                                 \
  int name(__VA_ARGS__ const char* path, int flags, ...) {                      \
    static auto next = real<int (*)(__VA_ARGS__ const char*, int, ...)>(#name); \
    va_list args;                                                               \
    va_start(args, flags);                                                      \
    const mode_t mode = modeOf(flags, args);                                    \
    va_end(args);                                                               \
    if (creates(flags) && pathIsFull(TP_SHIM_DIRFD, path)) return noSpace();    \
    return next(TP_SHIM_LEAD path, flags, mode);                                \
  }
#define TP_SHIM_DIRFD AT_FDCWD
#define TP_SHIM_LEAD
TP_SHIM_OPEN(open)
TP_SHIM_OPEN(open64)
#undef TP_SHIM_DIRFD
#undef TP_SHIM_LEAD
#define TP_SHIM_DIRFD dirfd
#define TP_SHIM_LEAD dirfd,
TP_SHIM_OPEN(openat, int dirfd, )
TP_SHIM_OPEN(openat64, int dirfd, )
#undef TP_SHIM_DIRFD
#undef TP_SHIM_LEAD
#undef TP_SHIM_OPEN

int mkdir(const char* path, mode_t mode) {
  static auto next = real<int (*)(const char*, mode_t)>("mkdir");
  if (pathIsFull(AT_FDCWD, path)) return noSpace();
  return next(path, mode);
}

int mkdirat(int dirfd, const char* path, mode_t mode) {
  static auto next = real<int (*)(int, const char*, mode_t)>("mkdirat");
  if (pathIsFull(dirfd, path)) return noSpace();
  return next(dirfd, path, mode);
}

// mkdtemp makes its directory inside libc, where mkdir is not seen.
char* mkdtemp(char* pattern) {
  static auto next = real<char* (*)(char*)>("mkdtemp");
  if (pathIsFull(AT_FDCWD, pattern)) {
    errno = ENOSPC;
    return nullptr;
  }
  return next(pattern);
}

ssize_t write(int fd, const void* buffer, size_t count) {
  static auto next = real<ssize_t (*)(int, const void*, size_t)>("write");
  if (count > 0 && fdIsFull(fd)) return noSpace();
  return next(fd, buffer, count);
}

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  static auto next = real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  if (count > 0 && fdIsFull(fd)) return noSpace();
  return next(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  static auto next = real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite64");
  if (count > 0 && fdIsFull(fd)) return noSpace();
  return next(fd, buffer, count, offset);
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  static auto next = real<ssize_t (*)(int, const struct iovec*, int)>("writev");
  if (iovcnt > 0 && fdIsFull(fd)) return noSpace();
  return next(fd, iov, iovcnt);
}

int fsync(int fd) {
  static auto next = real<int (*)(int)>("fsync");
  if (fdIsFull(fd)) return noSpace();
  return next(fd);
}

int fdatasync(int fd) {
  static auto next = real<int (*)(int)>("fdatasync");
  if (fdIsFull(fd)) return noSpace();
  return next(fd);
}

int clock_gettime(clockid_t clock, struct timespec* at) {
  static auto next = real<int (*)(clockid_t, struct timespec*)>("clock_gettime");
  const int result = next(clock, at);
  if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
    const int64_t ms = offsetMs();
    const int64_t ns = at->tv_nsec + (ms % 1000) * 1'000'000;
    at->tv_sec += ms / 1000 + ns / 1'000'000'000;
    at->tv_nsec = ns % 1'000'000'000;
  }
  return result;
}

int gettimeofday(struct timeval* at, void* zone) {
  static auto next = real<int (*)(struct timeval*, void*)>("gettimeofday");
  const int result = next(at, zone);
  if (result == 0) {
    const int64_t ms = offsetMs();
    const int64_t us = at->tv_usec + (ms % 1000) * 1000;
    at->tv_sec += ms / 1000 + us / 1'000'000;
    at->tv_usec = us % 1'000'000;
  }
  return result;
}

time_t time(time_t* out) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (out != nullptr) *out = now.tv_sec;
  return now.tv_sec;
}

}  // extern "C"
