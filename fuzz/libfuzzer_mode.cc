// fuzz_support.h under libFuzzer (`make fuzz`): deep checks only when asked for.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz_support.h"

extern char** environ;

namespace tuneplane::fuzz {

bool deepChecks() {
  static const bool deep = [] {
    const char* value = std::getenv("TUNEPLANE_FUZZ_DEEP");
    return value != nullptr && std::string(value) == "1";
  }();
  return deep;
}

// The script goes to a private temporary file; bash's verdict is its exit status (its
// messages go to the fuzzer's stderr, where a failure's context is wanted anyway).
std::string bashSyntaxErrors(const std::string& script) {
  char path[] = "/tmp/tp-fuzz-script-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "cannot create a temporary file";
  const bool written =
      write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size());
  close(fd);
  std::string result;
  if (!written) {
    result = "cannot write the temporary file";
  } else {
    char bash[] = "bash";
    char check[] = "-n";
    char* argv[] = {bash, check, path, nullptr};
    pid_t pid = 0;
    int status = 0;
    if (posix_spawnp(&pid, "bash", nullptr, nullptr, argv, environ) != 0) {
      result = "cannot run bash";
    } else if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      result = "bash -n refused the script";
    }
  }
  unlink(path);
  return result;
}

void checkFailed(const char* condition, const std::string& what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", file, line, condition, what.c_str());
  std::abort();
}

}  // namespace tuneplane::fuzz
