#include "slurm/job_record.h"

#include <charconv>

namespace tuneplane::slurm {
namespace {

const std::string kEmpty;

Result<uint64_t> parseUint(std::string_view text) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    return fail("slurm.bad_response", "jobs[].job_id",
                "not an unsigned number: \"" + std::string(text) + "\"");
  }
  return value;
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

Result<JobStateEntry> parseJobStateId(std::string_view job_id) {
  JobStateEntry entry;
  entry.job_id = std::string(job_id);
  std::string_view own = job_id;
  size_t plus = job_id.find('+');
  if (plus != std::string_view::npos) {
    own = job_id.substr(0, plus);
    auto offset = parseUint(job_id.substr(plus + 1));
    if (!offset || *offset > UINT32_MAX) {
      return fail("slurm.bad_response", "jobs[].job_id", "bad het offset");
    }
    entry.het_offset = static_cast<uint32_t>(*offset);
  }
  auto id = parseUint(own);
  if (!id) return tl::unexpected(id.error());
  entry.numeric_id = *id;
  return entry;
}

}  // namespace tuneplane::slurm
