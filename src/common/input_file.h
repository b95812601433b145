// Files the user names on the command line (a spec, a site file): checked first so the
// error names the file and says why ("cli.file_unreadable"), before a parser reports
// something vaguer. Reads the file system only.
#pragma once

#include <iosfwd>
#include <string>

#include "common/result.h"

namespace tuneplane {

// `path` exists, is a regular file and can be opened for reading. `field` is the flag that
// named it ("-f", "--site"), `what` says what it is ("job spec", "site file").
// Errors: "cli.file_unreadable".
Status checkReadableFile(const std::string& path, const std::string& field,
                         const std::string& what);

// The file's content; "-" reads `stdin_stream` to its end. Errors: "cli.file_unreadable".
Result<std::string> readInputFile(const std::string& path, const std::string& field,
                                  const std::string& what, std::istream& stdin_stream);

}  // namespace tuneplane
