// What `tuneplane cp` is asked to copy, parsed as pure functions: the source
// JOB[:ATTEMPT|:checkpoints][/PATH] (kubectl cp's POD:PATH habit, with the attempt where a
// container would be), the local name a file or a folder gets (cp's rules), and the names a
// listing may hand it (a hostile server's "../x" never becomes a local path), byte for byte.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "client/api_client.h"
#include "common/result.h"

namespace tuneplane::cli {

struct CopySource {
  std::string job;
  client::FileLocation where;  // area, attempt, path ("" is the area's root)
};

// "job-1a2b3c4d/model/weights.bin" (the latest attempt's output/),
// "job-1a2b3c4d:2/model" (attempt 2), "job-1a2b3c4d:checkpoints/checkpoint-100",
// "job-1a2b3c4d" or "job-1a2b3c4d:2/" (an area's root). Trailing slashes are dropped.
// Errors: "cli.invalid_source" naming what is wrong.
Result<CopySource> parseCopySource(std::string_view text);

// The last component of the source's path, "" for an area's root.
std::string sourceBaseName(const CopySource& source);

// Whether `name`, from a listing, may be joined to a local directory: not empty, not "." or
// "..", no '/' and no NUL. Any other bytes are fine (Linux names are bytes).
bool isSafeEntryName(std::string_view name);

// The local path a copy writes, as cp does: into `destination` when it is an existing
// directory (as `base_name` inside it; an area's root, whose base name is "", goes into it
// directly), else `destination` itself.
std::string localTarget(const std::string& destination, bool destination_is_directory,
                        const std::string& base_name);

// The partial file a download is written to beside `final_path` until it is complete, and
// kept when it is interrupted, so that the same command resumes it: ".tuneplane-part-" and a
// hash of the final name (fixed length, so a long name still fits NAME_MAX).
std::string partialPath(const std::string& final_path);

}  // namespace tuneplane::cli
