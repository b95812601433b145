// The `continue` token of a job listing (JobQuery / JobPage). It records where the previous
// page ended — the (created_ms, id) of its last job, the listing's sort key — and the
// filters it was made for, as base64url of a small JSON object. Clients treat it as opaque;
// the store checks it completely before use, so a forged, damaged or foreign token is an
// error ("store.bad_continue"), never a crash, and its values only ever reach SQL as bound
// parameters. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/job_store.h"

namespace tuneplane::store {

inline constexpr std::size_t kMaxContinueTokenBytes = 4096;

// The sort key of the last job on a page: the next page holds the jobs strictly after it
// in (created_ms desc, id desc) order.
struct ListPosition {
  int64_t created_ms = 0;
  std::string id;

  bool operator==(const ListPosition&) const = default;
};

std::string encodeContinue(const ListPosition& after, const JobQuery& query);

// Errors: "store.bad_continue" (field "continue"): not a token this store made, or one made
// for different filters (owner, phase, name, label) than `query`'s.
Result<ListPosition> decodeContinue(std::string_view token, const JobQuery& query);

}  // namespace tuneplane::store
