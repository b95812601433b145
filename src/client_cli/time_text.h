// Times as the CLI shows them: the API's RFC 3339 strings read into Unix milliseconds, and
// ages relative to an injected "now" ("5m 12s ago", "in 2m", "just now"). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tuneplane::cli {

// "2026-12-03T05:07:38.123Z", "…38Z", "…38.5+01:00"; nullopt for anything else.
std::optional<int64_t> parseRfc3339Ms(std::string_view text);

// The two largest units of now - then ("12m 5s ago"), "in …" for the future, "just now"
// within a second.
std::string formatAge(int64_t now_ms, int64_t then_ms);

// An API time for people: on a terminal "5m ago" (or the text itself if it does not parse),
// else the RFC 3339 text as sent; "-" when unset.
std::string showTime(const std::optional<std::string>& time, int64_t now_ms, bool relative);

}  // namespace tuneplane::cli
