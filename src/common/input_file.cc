#include "common/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tuneplane {

Status checkReadableFile(const std::string& path, const std::string& field,
                         const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return fail("cli.file_unreadable", field,
                "cannot read " + what + " '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return fail("cli.file_unreadable", field,
                "cannot read " + what + " '" + path + "': not a regular file");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return fail("cli.file_unreadable", field,
                "cannot read " + what + " '" + path + "': " + std::strerror(errno));
  }
  ::close(fd);
  return ok();
}

Result<std::string> readInputFile(const std::string& path, const std::string& field,
                                  const std::string& what, std::istream& stdin_stream) {
  std::ostringstream text;
  if (path == "-") {
    text << stdin_stream.rdbuf();
    return text.str();
  }
  if (auto readable = checkReadableFile(path, field, what); !readable) {
    return tl::unexpected(readable.error());
  }
  std::ifstream in(path, std::ios::binary);
  text << in.rdbuf();
  if (in.bad()) {
    return fail("cli.file_unreadable", field, "cannot read " + what + " '" + path + "'");
  }
  return text.str();
}

}  // namespace tuneplane
