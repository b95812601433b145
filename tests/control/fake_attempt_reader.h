// FakeAttemptReader: the control loop's reads of an attempt's files, scripted. By default it
// reads the real files (the fake fixture stages real attempts in a temp dir); a test can
// hand the sentinels of an attempt from memory, say a scheduler log is there, or make a
// staged file unreadable, and count what was read.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "attempt/attempt_files.h"
#include "attempt/error_codes.h"
#include "control/error_codes.h"

namespace tuneplane::control::testing {

class FakeAttemptReader final : public attempt::AttemptReader {
 public:
  // The sentinels of `attempt_dir`, from memory instead of its logs/.
  void setSentinels(const std::string& attempt_dir, attempt::AttemptSentinels sentinels) {
    sentinels_[attempt_dir] = std::move(sentinels);
  }
  void setSchedulerLog(const std::string& attempt_dir, const std::string& pool) {
    logs_.insert(attempt_dir + "/" + pool);
  }
  // Every later read of the staged file `name` fails, as an unreadable file would.
  void failStagedFile(std::string name) { unreadable_.insert(std::move(name)); }

  int sentinelReads() const { return sentinel_reads_; }
  int stagedReads() const { return staged_reads_; }

  // AttemptReader
  attempt::AttemptSentinels sentinels(const std::string& attempt_dir,
                                      const std::vector<std::string>& pools) override {
    ++sentinel_reads_;
    if (auto it = sentinels_.find(attempt_dir); it != sentinels_.end()) return it->second;
    return real_.sentinels(attempt_dir, pools);
  }
  bool schedulerLogExists(const std::string& attempt_dir, const std::string& pool) override {
    return logs_.count(attempt_dir + "/" + pool) > 0 || real_.schedulerLogExists(attempt_dir, pool);
  }
  Result<std::string> stagedFile(const std::string& attempt_dir, std::string_view name) override {
    ++staged_reads_;
    if (unreadable_.count(std::string(name)) > 0) {
      return fail(attempt::codes::kStagedAttemptInvalid, std::string(name),
                  "cannot read (scripted)");
    }
    return real_.stagedFile(attempt_dir, name);
  }

 private:
  attempt::PosixAttemptReader real_;
  std::map<std::string, attempt::AttemptSentinels> sentinels_;
  std::set<std::string> logs_;
  std::set<std::string> unreadable_;
  int sentinel_reads_ = 0;
  int staged_reads_ = 0;
};

}  // namespace tuneplane::control::testing
