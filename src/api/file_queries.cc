// See file_queries.h.
#include "api/file_queries.h"

#include <charconv>
#include <chrono>
#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/percent_encoding.h"

#include "common/jwt.h"

namespace tuneplane::api {
namespace {

constexpr int kFilesTokenVersion = 1;
// {"v":1,"c":<int64>,"d":<uint64>} is under 60 bytes; its base64url under 80.
constexpr std::size_t kMaxFilesTokenBytes = 128;

// The first value of `key`, or nullopt when absent (names unique in the api module's unity
// batches: job_queries.cc has its own).
std::optional<std::string> fileParam(const QueryParams& params, const std::string& key) {
  const auto it = params.find(key);
  if (it == params.end()) return std::nullopt;
  return it->second;
}

Error invalidFileParam(const std::string& name, const std::string& why) {
  return {"api.invalid_parameter", name, why};
}

std::string_view trimSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

enum class Digits { kOk, kOverflow, kBad };
Digits parseDigits(std::string_view text, uint64_t& out) {
  if (text.empty()) return Digits::kBad;
  for (char c : text) {
    if (c < '0' || c > '9') return Digits::kBad;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc::result_out_of_range) return Digits::kOverflow;
  return ec == std::errc() && end == text.data() + text.size() ? Digits::kOk : Digits::kBad;
}

}  // namespace

tl::expected<FilesQuery, Refusal> parseFilesQuery(const QueryParams& params, FilesRoute route) {
  FilesQuery query;
  Errors errors;
  if (auto area = fileParam(params, "area")) {
    if (auto parsed = attempt::parseOutputArea(*area)) {
      query.area = *parsed;
    } else {
      errors.push_back(invalidFileParam("area", "must be output or checkpoints"));
    }
  }
  if (auto number = fileParam(params, "attempt")) {
    if (query.area == attempt::OutputArea::kCheckpoints) {
      errors.push_back(invalidFileParam(
          "attempt", "checkpoints/ belongs to the job, not to an attempt: leave attempt out"));
    } else if (auto parsed = parseBoundedInt(*number, 1, 1'000'000)) {
      query.attempt = *parsed;
    } else {
      errors.push_back(invalidFileParam("attempt", "must be an integer 1..1000000"));
    }
  }
  const std::optional<std::string> path = fileParam(params, "path");
  if (path) {
    if (auto parts = attempt::checkOutputPath(*path)) {
      query.path = std::move(*parts);
    } else {
      errors.push_back(parts.error());
    }
  }
  if (route == FilesRoute::kContent) {
    if (!path || (query.path.empty() && errors.empty())) {
      errors.push_back(invalidFileParam("path", "required: the file to download, in its area"));
    }
    for (const char* listing_only : {"limit", "continue"}) {
      if (fileParam(params, listing_only)) {
        errors.push_back(invalidFileParam(listing_only, "only a listing takes it"));
      }
    }
  } else {
    if (auto limit = fileParam(params, "limit")) {
      if (auto parsed = parseBoundedInt(*limit, 1, static_cast<int>(attempt::kMaxListLimit))) {
        query.limit = static_cast<std::size_t>(*parsed);
      } else {
        errors.push_back(invalidFileParam(
            "limit", fmt::format("must be an integer 1..{}", attempt::kMaxListLimit)));
      }
    }
    if (auto token = fileParam(params, "continue"); token && !token->empty()) {
      if (auto from = parseFilesContinueToken(*token)) {
        query.from = *from;
      } else {
        errors.push_back(
            invalidFileParam("continue", "not a token this listing gave (start again without it)"));
      }
    }
  }
  if (!errors.empty()) return tl::unexpected(Refusal{400, std::move(errors)});
  return query;
}

std::string filesContinueToken(const attempt::ListPosition& next) {
  const nlohmann::json token = {
      {"v", kFilesTokenVersion}, {"c", next.cookie}, {"d", next.directory}};
  return jwt::base64UrlEncode(token.dump());
}

std::optional<attempt::ListPosition> parseFilesContinueToken(std::string_view token) {
  if (token.size() > kMaxFilesTokenBytes) return std::nullopt;
  auto bytes = jwt::base64UrlDecode(token);
  if (!bytes) return std::nullopt;
  const nlohmann::json parsed = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || parsed.size() != 3) return std::nullopt;
  const auto version = parsed.find("v");
  const auto cookie = parsed.find("c");
  const auto directory = parsed.find("d");
  if (version == parsed.end() || cookie == parsed.end() || directory == parsed.end()) {
    return std::nullopt;
  }
  // A cookie is an off_t (signed); the inode unsigned. 0 is the start, never a next page's.
  if (!version->is_number_integer() || version->get<int64_t>() != kFilesTokenVersion ||
      !cookie->is_number_integer() || !directory->is_number_unsigned() ||
      (cookie->is_number_unsigned() &&
       cookie->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
    return std::nullopt;
  }
  attempt::ListPosition out{cookie->get<int64_t>(), directory->get<uint64_t>()};
  if (out.cookie == 0 || out.directory == 0) return std::nullopt;
  return out;
}

ByteRange parseByteRange(std::string_view header, uint64_t size) {
  const ByteRange whole;
  header = trimSpaces(header);
  constexpr std::string_view kUnit = "bytes=";
  if (header.size() < kUnit.size()) return whole;
  for (std::size_t i = 0; i < kUnit.size(); ++i) {
    const char c = header[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kUnit[i]) return whole;
  }
  const std::string_view spec = trimSpaces(header.substr(kUnit.size()));
  if (spec.find(',') != std::string_view::npos) return whole;  // several: the whole body
  const auto dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  const std::string_view first_text = trimSpaces(spec.substr(0, dash));
  const std::string_view last_text = trimSpaces(spec.substr(dash + 1));
  const ByteRange unsatisfiable{RangeKind::kUnsatisfiable, 0, 0};
  if (first_text.empty()) {  // "-N": the last N bytes
    uint64_t suffix = 0;
    const Digits d = parseDigits(last_text, suffix);
    if (d == Digits::kBad) return whole;
    if (d == Digits::kOverflow) suffix = size;
    if (suffix == 0 || size == 0) return unsatisfiable;
    return {RangeKind::kPartial, size - std::min(suffix, size), size - 1};
  }
  uint64_t first = 0;
  const Digits f = parseDigits(first_text, first);
  if (f == Digits::kBad) return whole;
  uint64_t last = UINT64_MAX;
  if (!last_text.empty()) {
    const Digits l = parseDigits(last_text, last);
    if (l == Digits::kBad) return whole;
    if (l == Digits::kOverflow) last = UINT64_MAX;
    if (f == Digits::kOk && last < first) return whole;  // invalid: ignored
  }
  if (f == Digits::kOverflow || first >= size) return unsatisfiable;
  return {RangeKind::kPartial, first, std::min(last, size - 1)};
}

bool ifRangeHolds(std::string_view if_range, std::string_view etag) {
  if_range = trimSpaces(if_range);
  if (if_range.empty()) return true;
  if (if_range.starts_with("W/")) return false;  // a weak tag never matches (strong comparison)
  // A date (anything not a quoted tag) never holds: a Last-Modified date names a second, and a
  // file rewritten within it with the same size keeps the date, so a resume keyed on it would
  // splice new bytes onto old (RFC 9110 §8.8.2.2: such a date is weak). The whole file is sent.
  return if_range == etag;
}

std::string httpDate(int64_t unix_ms) {
  using namespace std::chrono;
  const sys_seconds time = floor<seconds>(sys_time<milliseconds>(milliseconds(unix_ms)));
  const sys_days day = floor<days>(time);
  const year_month_day date(day);
  const hh_mm_ss clock(time - day);
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  return fmt::format("{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT", kDays[weekday(day).c_encoding()],
                     static_cast<unsigned>(date.day()),
                     kMonths[static_cast<unsigned>(date.month()) - 1],
                     static_cast<int>(date.year()), clock.hours().count(), clock.minutes().count(),
                     clock.seconds().count());
}

std::string percentEncodePath(std::string_view path) {
  return percentEncode(path, /*keep_slash=*/true);
}

std::string contentDisposition(std::string_view name) {
  std::string ascii;
  std::string encoded;
  for (const char c : name) {
    const auto b = static_cast<unsigned char>(c);
    ascii += (b < 0x20 || b >= 0x7f || c == '"' || c == '\\') ? '_' : c;
    const bool plain = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
                       c == '-' || c == '.' || c == '_' || c == '~';
    encoded += plain ? std::string(1, c) : fmt::format("%{:02X}", b);
  }
  return fmt::format("attachment; filename=\"{}\"; filename*=UTF-8''{}", ascii, encoded);
}

}  // namespace tuneplane::api
