#include "slurm/job_record.h"

namespace tuneplane::slurm {
namespace {

const std::string kEmpty;

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

}  // namespace tuneplane::slurm
