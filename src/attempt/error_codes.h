// The stable error codes of the attempt-file readers. Scripts and tests match on these
// strings, so a code is never renamed or reused for another meaning (kBadSentinel and
// kStagedAttemptInvalid keep the "control." prefix they were published with, before the
// readers had a module of their own).
#pragma once

namespace tuneplane::attempt::codes {

inline constexpr const char* kBadSentinel = "control.bad_sentinel";  // attempt_files.h
// A staged file of the attempt cannot be read (readStagedFile; the launcher's checks).
inline constexpr const char* kStagedAttemptInvalid = "control.staged_attempt_invalid";

// The log reader's (log_tail.h). A symlink or a file that is not regular is the job's doing
// (it owns logs/), and the API answers it as a conflict, not a server fault.
inline constexpr const char* kLogsSymlink = "logs.symlink";
inline constexpr const char* kLogsNotRegularFile = "logs.not_regular_file";
inline constexpr const char* kLogsIo = "logs.io";
inline constexpr const char* kLogsInvalidPool = "logs.invalid_pool";
inline constexpr const char* kLogsInvalidAttemptDir = "logs.invalid_attempt_dir";

// The output readers' (output_files.h). A path breaking a rule is the caller's mistake
// (400); a symlink, a hard link, a special file or a wrong kind of entry is the job's doing
// (409), as for the logs.
inline constexpr const char* kFilesInvalidPath = "files.invalid_path";
inline constexpr const char* kFilesNotFound = "files.not_found";
inline constexpr const char* kFilesSymlink = "files.symlink";
inline constexpr const char* kFilesHardLink = "files.hard_link";
inline constexpr const char* kFilesNotRegularFile = "files.not_regular_file";
inline constexpr const char* kFilesNotDirectory = "files.not_a_directory";
inline constexpr const char* kFilesIsDirectory = "files.is_directory";
// per_user: a file its owner (the job's user) may not read, that belongs to neither the job's
// user nor TunePlane's, or that the job left unreadable to TunePlane (output_files.h): 409.
inline constexpr const char* kFilesNotReadable = "files.not_readable";
// A listing's position that is not this directory's (output_files.h's ListPosition).
inline constexpr const char* kFilesBadPosition = "files.bad_position";
inline constexpr const char* kFilesIo = "files.io";

}  // namespace tuneplane::attempt::codes
