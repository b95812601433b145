#include "slurm/job_record.h"

#include <charconv>

namespace tuneplane::slurm {
namespace {

const std::string kEmpty;

bool parseUint(std::string_view text, uint64_t& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
}

}  // namespace

const std::string& JobRecord::baseState() const {
  return job_state.empty() ? kEmpty : job_state.front();
}

bool JobRecord::hasStateFlag(std::string_view flag) const {
  for (size_t i = 1; i < job_state.size(); ++i) {
    if (job_state[i] == flag) return true;
  }
  return false;
}

bool PingResult::anyResponding() const {
  for (const auto& c : controllers) {
    if (c.responding) return true;
  }
  return false;
}

const char* splitJobStateId(std::string_view job_id, uint64_t& numeric_id,
                            std::optional<uint32_t>& het_offset) {
  std::string_view own = job_id;
  het_offset.reset();
  size_t plus = job_id.find('+');
  if (plus != std::string_view::npos) {
    own = job_id.substr(0, plus);
    uint64_t offset = 0;
    if (!parseUint(job_id.substr(plus + 1), offset) || offset > UINT32_MAX) {
      return "bad het offset";
    }
    het_offset = static_cast<uint32_t>(offset);
  }
  if (!parseUint(own, numeric_id)) return "not an unsigned number";
  return nullptr;
}

Result<JobStateEntry> parseJobStateId(std::string_view job_id) {
  JobStateEntry entry;
  if (const char* why = splitJobStateId(job_id, entry.numeric_id, entry.het_offset)) {
    return fail("slurm.bad_response", "jobs[].job_id",
                std::string(why) + ": \"" + std::string(job_id) + "\"");
  }
  entry.job_id = std::string(job_id);
  return entry;
}

}  // namespace tuneplane::slurm
