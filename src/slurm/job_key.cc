// See job_key.h.
#include "slurm/job_key.h"

#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "launch/attempt_identity.h"
#include "slurm/job_state.h"
#include "slurm/sluid.h"

namespace tuneplane::slurm {
namespace {

constexpr size_t kSluidDigits = 13;

template <typename N>
std::optional<N> parseNumber(std::string_view text) {
  N value{};
  if (text.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool isCrockford(char c) {
  c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z' && std::strchr("ILOU", c) == nullptr);
}

// The record's own key parts.
JobKey partsOf(const JobRecord& record) {
  JobKey key;
  key.sluid = record.sluid;
  key.job_id = record.job_id;
  if (record.sluid.empty()) {
    key.submit_time = record.submit_time.value().value_or(0);
    if (launch::isValidSubmitToken(record.comment)) key.token = record.comment;
  }
  return key;
}

}  // namespace

bool looksLikeSluid(std::string_view text) {
  if (text.size() != kSluidDigits + 1 || (text[0] != 's' && text[0] != 'S')) return false;
  for (char c : text.substr(1)) {
    if (!isCrockford(c)) return false;
  }
  return true;
}

std::string formatJobKey(const JobKey& key) {
  if (!key.sluid.empty()) {
    return key.numeric_form && key.job_id != 0 ? key.sluid + "@" + std::to_string(key.job_id)
                                               : key.sluid;
  }
  if (key.job_id == 0) return "";
  std::string out = std::to_string(key.job_id);
  if (key.numeric_form && key.submit_time > 0) {
    out += "@" + std::to_string(key.submit_time);
    if (!key.token.empty()) out += "/" + key.token;
  }
  return out;
}

std::optional<JobKey> parseJobKey(std::string_view text) {
  JobKey key;
  const size_t at = text.find('@');
  if (at == std::string_view::npos) {
    if (looksLikeSluid(text)) {
      key.sluid = std::string(text);
      return key;
    }
    auto id = parseNumber<uint64_t>(text);
    if (!id || *id == 0) return std::nullopt;
    key.job_id = *id;
    return key;
  }
  key.numeric_form = true;
  const std::string_view head = text.substr(0, at);
  std::string_view tail = text.substr(at + 1);
  if (looksLikeSluid(head)) {
    auto id = parseNumber<uint64_t>(tail);
    if (!id || *id == 0) return std::nullopt;
    key.sluid = std::string(head);
    key.job_id = *id;
    return key;
  }
  auto id = parseNumber<uint64_t>(head);
  if (!id || *id == 0) return std::nullopt;
  key.job_id = *id;
  const size_t slash = tail.find('/');
  if (slash != std::string_view::npos) {
    key.token = std::string(tail.substr(slash + 1));
    if (!launch::isValidSubmitToken(key.token)) return std::nullopt;
    tail = tail.substr(0, slash);
  }
  auto time = parseNumber<int64_t>(tail);
  if (!time || *time <= 0) return std::nullopt;
  key.submit_time = *time;
  return key;
}

std::string jobKeyOf(JobAddressing addressing, const JobRecord& record) {
  JobKey key = partsOf(record);
  key.numeric_form = addressing == JobAddressing::kByNumericId || record.sluid.empty();
  return formatJobKey(key);
}

std::string jobKeyLike(const JobKey& asked, JobAddressing addressing, const JobRecord& record) {
  JobKey key = partsOf(record);
  if (asked.numeric_form) {
    key.numeric_form = true;
  } else if (!asked.sluid.empty() && !record.sluid.empty()) {
    key.numeric_form = false;  // asked by SLUID (a key from a version that takes them)
  } else {
    return jobKeyOf(addressing, record);
  }
  return formatJobKey(key);
}

void keyRecord(JobAddressing addressing, JobRecord& record) {
  if (addressing == JobAddressing::kBySluid && !record.sluid.empty()) return;
  record.sluid = jobKeyOf(addressing, record);
}

bool isFollowedByNumericId(std::string_view key) {
  auto parsed = parseJobKey(key);
  return parsed && parsed->numeric_form;
}

std::optional<std::string> pathIdFor(JobAddressing addressing, const JobKey& key) {
  if (addressing == JobAddressing::kBySluid && !key.sluid.empty()) return key.sluid;
  if (key.job_id != 0) return std::to_string(key.job_id);
  return std::nullopt;
}

bool needsConfirmation(JobAddressing addressing, const JobKey& key) {
  const bool by_id = !(addressing == JobAddressing::kBySluid && !key.sluid.empty());
  return by_id && key.job_id != 0 && (!key.sluid.empty() || key.submit_time > 0);
}

Confirmed confirmJob(const JobKey& key, const std::vector<JobRecord>& records) {
  const JobRecord* record = nullptr;
  for (const auto& r : records) {
    if (r.job_id == key.job_id) record = &r;
  }
  if (record == nullptr) {
    return {Confirmation::kUnproven,
            fmt::format("Slurm's answer about job {} holds no record of it", key.job_id)};
  }
  if (!key.sluid.empty()) {
    if (record->sluid.empty()) {
      return {Confirmation::kUnproven,
              fmt::format("Slurm's record of job {} carries no SLUID to confirm {} by", key.job_id,
                          key.sluid)};
    }
    if (Sluid(record->sluid) == Sluid(key.sluid)) return {Confirmation::kSame, {}};
    return {Confirmation::kGone,
            fmt::format("job id {} now names the job with SLUID {}, not {}: the job {} names is "
                        "no longer in slurmctld (purged and its id reused, or requeued under a "
                        "new SLUID)",
                        key.job_id, record->sluid, key.sluid, formatJobKey(key))};
  }
  const auto submitted = record->submit_time.value();
  if (!submitted) {
    return {
        Confirmation::kUnproven,
        fmt::format("Slurm's record of job {} has no submit time to confirm it by", key.job_id)};
  }
  if (*submitted != key.submit_time) {
    return {Confirmation::kGone,
            fmt::format("job id {} now names a job submitted at {}, not at {}: the job {} names "
                        "is no longer in slurmctld (purged and its id reused, or requeued)",
                        key.job_id, *submitted, key.submit_time, formatJobKey(key))};
  }
  if (!key.token.empty() && record->comment != key.token) {
    return {Confirmation::kUnproven,
            fmt::format("job {} was submitted at {} as expected, but its comment no longer holds "
                        "the submit token {}",
                        key.job_id, key.submit_time, key.token)};
  }
  return {Confirmation::kSame, {}};
}

bool mayStillRun(const JobRecord& record) {
  // A base state TunePlane does not know is taken as one that may still run: the DELETE is
  // sent (the job was confirmed a moment ago), rather than a live job left running.
  const auto base = parseJobBaseState(record.baseState());
  return !base || *base == JobBaseState::kPending || *base == JobBaseState::kRunning ||
         *base == JobBaseState::kSuspended;
}

}  // namespace tuneplane::slurm
