// The answer of `GET /jobs/state/`: one entry per job (per het component), each a job id and a
// job_state list. The control loop reads this list every cycle for every job it tracks, so an
// entry is a 16-byte value with nothing on the heap: the id as numbers (`job_id` is a string
// there, "<own_id>" or "<own_id>+<het offset>") and the state in its compact form
// (job_state.h). What has no compact form — a state list with an unknown or misplaced name, an
// id written unusually ("010") — is kept verbatim beside the entries, so every entry still
// gives back exactly the text Slurm sent (jobId(), stateNames()). Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "slurm/job_state.h"

namespace tuneplane::slurm {

// One entry. Its text (verbatim parts included) is read through the list that holds it.
class JobStateEntry {
 public:
  uint64_t numericId() const { return numeric_id_; }
  std::optional<uint32_t> hetOffset() const {
    return (bits_ & kHasHet) != 0 ? std::optional<uint32_t>(het_offset_) : std::nullopt;
  }
  // The compact state; meaningful only when hasCompactState() (else see stateNames()).
  JobState state() const { return JobState(base_, flags_); }
  bool hasCompactState() const { return (bits_ & kVerbatimState) == 0; }

  bool operator==(const JobStateEntry&) const = default;

 private:
  friend class JobStateList;
  static constexpr uint8_t kHasHet = 1;
  static constexpr uint8_t kVerbatimId = 2;     // the id's text is kept beside the entries
  static constexpr uint8_t kVerbatimState = 4;  // so is the state list's

  uint64_t numeric_id_ = 0;
  uint32_t het_offset_ = 0;
  uint16_t flags_ = 0;
  JobBaseState base_ = JobBaseState::kNone;
  uint8_t bits_ = 0;
};

class JobStateList {
 public:
  using const_iterator = std::vector<JobStateEntry>::const_iterator;

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const JobStateEntry& operator[](size_t i) const { return entries_[i]; }
  const JobStateEntry& front() const { return entries_.front(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }

  // Entry i's `job_id` as Slurm sent it ("10", "10+1"; a numeric job_id as its digits).
  std::string jobId(size_t i) const;
  // Entry i's job_state as Slurm sent it: base first, then flags.
  std::vector<std::string> stateNames(size_t i) const;
  // Whether entry i's job_state is `names`, without building stateNames(i).
  bool stateIs(size_t i, const std::vector<std::string>& names) const;

  // Appends an entry for `job_id` ("<id>" or "<id>+<het offset>") and `state`. Errors:
  // "slurm.bad_response" (field "job_id") for any other id; nothing is appended then.
  Status add(std::string_view job_id, const std::vector<std::string>& state);
  // The decoder's form; takes `state`'s verbatim names, if it has any. REQUIRES:
  // `numeric_id` and `het_offset` are what splitJobStateId makes of `job_id`.
  void add(std::string_view job_id, uint64_t numeric_id, std::optional<uint32_t> het_offset,
           JobStateNames& state);
  // Moves `more`'s entries after these.
  void append(JobStateList&& more);
  void reserve(size_t count) { entries_.reserve(count); }
  void clear();

  bool operator==(const JobStateList&) const = default;

 private:
  // The text of an entry that has no compact form, by the entry's position.
  struct Verbatim {
    size_t entry = 0;
    std::string job_id;              // when the entry's bits say kVerbatimId
    std::vector<std::string> state;  // when they say kVerbatimState
    bool operator==(const Verbatim&) const = default;
  };
  const Verbatim* verbatimOf(size_t i) const;

  std::vector<JobStateEntry> entries_;
  std::vector<Verbatim> verbatim_;  // by ascending entry
};

// A `/jobs/state/` job id, "<id>" or "<id>+<het offset>", split into its parts: nullptr, or
// why `job_id` is not one.
const char* splitJobStateId(std::string_view job_id, uint64_t& numeric_id,
                            std::optional<uint32_t>& het_offset);

}  // namespace tuneplane::slurm
