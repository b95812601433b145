// How much a job spec may hold, beyond its structure: the counts and lengths of the lists
// and maps a user fills freely (argv, env, labels). Each bound is far above what a real job
// uses and ties to something that would refuse it later anyway (the kernel's execve limits),
// so together with the document limits (document_measure.h: 1 MiB of text, 16,384 values
// with aliases expanded) they bound what one spec costs the server to read, store and stage.
#pragma once

#include <cstddef>

namespace tuneplane::spec {

// Entries of spec.framework.command and of spec.framework.args, each.
inline constexpr std::size_t kMaxArgvEntries = 4096;
// An argv entry, or an env entry as NAME=value: Linux refuses (E2BIG) a single argv or
// environment string of MAX_ARG_STRLEN (32 pages, 131,072 bytes) or more, its NUL included.
inline constexpr std::size_t kMaxArgBytes = 131071;
// Variables in spec.framework.env.
inline constexpr std::size_t kMaxEnvEntries = 1024;
// metadata.labels: entries, and the bytes of one value (every job listing carries them).
inline constexpr std::size_t kMaxLabels = 64;
inline constexpr std::size_t kMaxLabelValueBytes = 256;

}  // namespace tuneplane::spec
