// One page of a job's files listing (GET /v1/jobs/{id}/files) for `ls` and `cp -r`, asked
// again while the server is too busy for it: it runs listings on at most half its workers and
// answers one more at once with 503 files.busy (or 429) and Retry-After: 1. The page is asked
// again after kBusyListingPause, up to kBusyListingTries times: about a minute of patience,
// cut short by Ctrl-C (the sleeper says so).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <tl/expected.hpp>

#include "client/api_client.h"
#include "client/poll.h"

namespace tuneplane::cli {

inline constexpr auto kBusyListingPause = std::chrono::seconds(1);
inline constexpr int kBusyListingTries = 60;

// Why a page could not be had: the server's (or the transport's) error, or none when Ctrl-C
// ended the wait for a busy server.
struct ListingStopped {
  std::optional<client::ApiError> error;  // nullopt: interrupted
};

tl::expected<client::Json, ListingStopped> listPatiently(client::ApiClient& api,
                                                         client::Sleeper& sleeper,
                                                         const std::string& job,
                                                         const client::FileLocation& where,
                                                         const client::FilesPage& page);

}  // namespace tuneplane::cli
