// Stable error codes of the API server that other code branches on (the rest are answered to
// clients as they are). Never renamed or reused for another meaning.
#pragma once

namespace tuneplane::api::codes {

inline constexpr const char* kListen = "api.listen";  // cannot bind the listen address
inline constexpr const char* kBusy = "api.busy";      // a run of the same kind is under way
// GET /v1/jobs/{id}/files while listingCapacity(server.threads) listings run (503, Retry-After).
inline constexpr const char* kFilesBusy = "files.busy";

}  // namespace tuneplane::api::codes
