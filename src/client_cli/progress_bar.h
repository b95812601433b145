// A one-line progress bar on stderr for long work with a known size (doctor hashing a
// multi-GB artifact, `cp` downloading a job's weights). It draws only when enabled — the CLI
// enables it on a terminal and never with `-o json` — and only for work of at least `min_total`, so
// small files and pipes see nothing. It redraws when the shown percentage changes, and clears its
// line on finish(). Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace tuneplane::cli {

// Work smaller than this finishes before a bar would help.
inline constexpr uint64_t kProgressMinBytes = uint64_t{64} << 20;

// "hashing custom-torch-2.4  [########............]  40%  1.0 GiB / 2.5 GiB"; `bar_width`
// cells between the brackets; `verb` first. Pure.
std::string progressLine(const std::string& label, uint64_t done, uint64_t total, int bar_width,
                         const std::string& verb = "hashing");

class ProgressBar {
 public:
  ProgressBar(std::ostream& out, bool enabled, uint64_t min_total = kProgressMinBytes,
              std::string verb = "hashing");
  ~ProgressBar();  // clears a line left drawn
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(const std::string& label, uint64_t done, uint64_t total);
  void finish();

 private:
  std::ostream& out_;
  bool enabled_;
  uint64_t min_total_;
  std::string verb_;
  bool drawn_ = false;
  int last_percent_ = -1;
  std::string last_label_;
};

}  // namespace tuneplane::cli
