#include "client_cli/progress_bar.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/human.h"

namespace tuneplane::cli {
namespace {

constexpr int kBarWidth = 24;
constexpr const char* kClearLine = "\r\033[K";  // carriage return, erase to end of line

int percentOf(uint64_t done, uint64_t total) {
  if (total == 0) return 100;
  return static_cast<int>(std::min<uint64_t>(done, total) * 100 / total);
}

}  // namespace

std::string progressLine(const std::string& label, uint64_t done, uint64_t total, int bar_width,
                         const std::string& verb) {
  const int percent = percentOf(done, total);
  const int filled = bar_width * percent / 100;
  return fmt::format("{} {}  [{}{}]  {:3}%  {} / {}", verb, label, std::string(filled, '#'),
                     std::string(bar_width - filled, '.'), percent, formatBytes(done),
                     formatBytes(total));
}

ProgressBar::ProgressBar(std::ostream& out, bool enabled, uint64_t min_total, std::string verb)
    : out_(out), enabled_(enabled), min_total_(min_total), verb_(std::move(verb)) {}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::update(const std::string& label, uint64_t done, uint64_t total) {
  if (!enabled_ || total < min_total_) return;
  const int percent = percentOf(done, total);
  if (drawn_ && percent == last_percent_ && label == last_label_) return;
  out_ << kClearLine << progressLine(label, done, total, kBarWidth, verb_) << std::flush;
  drawn_ = true;
  last_percent_ = percent;
  last_label_ = label;
}

void ProgressBar::finish() {
  if (!drawn_) return;
  out_ << kClearLine << std::flush;
  drawn_ = false;
  last_percent_ = -1;
}

}  // namespace tuneplane::cli
