// See busy_listing.h.
#include "client_cli/busy_listing.h"

namespace tuneplane::cli {

tl::expected<client::Json, ListingStopped> listPatiently(client::ApiClient& api,
                                                         client::Sleeper& sleeper,
                                                         const std::string& job,
                                                         const client::FileLocation& where,
                                                         const client::FilesPage& page) {
  for (int tries = 1;; ++tries) {
    auto listed = api.listFiles(job, where, page);
    if (listed) return std::move(*listed);
    const client::ApiError& error = listed.error();
    const bool busy = error.kind == client::FailureKind::kHttp &&
                      (error.http_status == 503 || error.http_status == 429);
    if (!busy || tries >= kBusyListingTries) return tl::unexpected(ListingStopped{error});
    if (!sleeper.sleepFor(kBusyListingPause)) return tl::unexpected(ListingStopped{});
  }
}

}  // namespace tuneplane::cli
