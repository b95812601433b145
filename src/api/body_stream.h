// BodyStream: a response body produced a piece at a time (a file download), so that what the
// server holds for one answer is one chunk (kStreamChunkBytes), whatever the body's size.
// The transport (http_transport.h) asks for the next piece on a worker thread, writes it to
// the client, and only then asks again: a client that stops reading holds one chunk, one
// descriptor and no thread, until server.request_timeout passes without a chunk written,
// when the connection is closed. Thread-safety: one call at a time (the transport's).
#pragma once

#include <cstddef>

#include "common/result.h"

namespace tuneplane::api {

inline constexpr std::size_t kStreamChunkBytes = 64 * 1024;

class BodyStream {
 public:
  virtual ~BodyStream() = default;
  // Up to `capacity` bytes into `buffer`; how many. Returning 0 or an error before the
  // promised length was given closes the connection: its Content-Length cannot be kept.
  virtual Result<std::size_t> read(char* buffer, std::size_t capacity) = 0;
};

}  // namespace tuneplane::api
