#include "slurm/job_state_list.h"

#include <algorithm>
#include <charconv>

namespace tuneplane::slurm {
namespace {

bool parseUint(std::string_view text, uint64_t& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
}

// Whether a number's digits are written as Slurm writes them (no leading zero), so that
// jobId() can write them again.
bool plainDigits(std::string_view digits) {
  return digits.size() == 1 || digits.front() != '0';
}

}  // namespace

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

void JobStateList::add(std::string_view job_id, uint64_t numeric_id,
                       std::optional<uint32_t> het_offset, JobStateNames& state) {
  JobStateEntry entry;
  entry.numeric_id_ = numeric_id;
  bool plain_id = true;
  if (het_offset) {
    entry.bits_ |= JobStateEntry::kHasHet;
    entry.het_offset_ = *het_offset;
    const size_t plus = job_id.find('+');
    plain_id = plainDigits(job_id.substr(0, plus)) && plainDigits(job_id.substr(plus + 1));
  } else {
    plain_id = plainDigits(job_id);
  }
  if (state.isCompact()) {
    entry.base_ = state.state().base();
    entry.flags_ = state.state().flags();
  }
  if (!plain_id || !state.isCompact()) {
    Verbatim kept{entries_.size(), {}, {}};
    if (!plain_id) {
      entry.bits_ |= JobStateEntry::kVerbatimId;
      kept.job_id = std::string(job_id);
    }
    if (!state.isCompact()) {
      entry.bits_ |= JobStateEntry::kVerbatimState;
      kept.state = std::move(state.verbatim());
    }
    verbatim_.push_back(std::move(kept));
  }
  entries_.push_back(entry);
}

Status JobStateList::add(std::string_view job_id, const std::vector<std::string>& state) {
  uint64_t numeric_id = 0;
  std::optional<uint32_t> het_offset;
  if (const char* why = splitJobStateId(job_id, numeric_id, het_offset)) {
    return fail("slurm.bad_response", "job_id",
                std::string(why) + ": \"" + std::string(job_id) + "\"");
  }
  JobStateNames names;
  for (const std::string& name : state) names.add(name);
  add(job_id, numeric_id, het_offset, names);
  return {};
}

void JobStateList::append(JobStateList&& more) {
  const size_t offset = entries_.size();
  entries_.insert(entries_.end(), more.entries_.begin(), more.entries_.end());
  for (Verbatim& kept : more.verbatim_) {
    kept.entry += offset;
    verbatim_.push_back(std::move(kept));
  }
  more.clear();
}

void JobStateList::clear() {
  entries_.clear();
  verbatim_.clear();
}

const JobStateList::Verbatim* JobStateList::verbatimOf(size_t i) const {
  auto it = std::lower_bound(verbatim_.begin(), verbatim_.end(), i,
                             [](const Verbatim& kept, size_t entry) { return kept.entry < entry; });
  return it != verbatim_.end() && it->entry == i ? &*it : nullptr;
}

std::string JobStateList::jobId(size_t i) const {
  const JobStateEntry& entry = entries_[i];
  if ((entry.bits_ & JobStateEntry::kVerbatimId) != 0) return verbatimOf(i)->job_id;
  std::string out = std::to_string(entry.numeric_id_);
  if (auto het = entry.hetOffset()) out += "+" + std::to_string(*het);
  return out;
}

std::vector<std::string> JobStateList::stateNames(size_t i) const {
  const JobStateEntry& entry = entries_[i];
  if (!entry.hasCompactState()) return verbatimOf(i)->state;
  return entry.state().names();
}

bool JobStateList::stateIs(size_t i, const std::vector<std::string>& names) const {
  const JobStateEntry& entry = entries_[i];
  if (!entry.hasCompactState()) return verbatimOf(i)->state == names;
  return entry.state().sameNames(names);
}

}  // namespace tuneplane::slurm
