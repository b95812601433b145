// A Slurm job's SLUID ("s" and 13 Crockford base32 characters, e.g. "sCC1M8VPKSJX00"): the
// identity every lifecycle call uses. Slurm accepts and may print either case, so two
// SLUIDs are the same when they are equal ignoring case; Sluid keeps the text as given and
// compares (and orders, for maps) by its upper-case form. Thread-safety: a plain value.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace tuneplane::slurm {

class Sluid {
 public:
  Sluid() = default;
  explicit Sluid(std::string_view text) : text_(text), key_(text) {
    std::transform(key_.begin(), key_.end(), key_.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  }

  const std::string& text() const { return text_; }  // as Slurm or the store gave it
  const std::string& key() const { return key_; }    // upper case: equal keys, same job
  bool empty() const { return text_.empty(); }

  friend bool operator==(const Sluid& a, const Sluid& b) { return a.key_ == b.key_; }
  friend bool operator<(const Sluid& a, const Sluid& b) { return a.key_ < b.key_; }

 private:
  std::string text_;
  std::string key_;
};

}  // namespace tuneplane::slurm
