// SLUID (Slurm Lexicographically-sortable Unique ID), as slurmctld 26.05 prints it:
// "s" + 13 Crockford Base32 digits (upper case) of a 64-bit value laid out as
// 12-bit cluster id | 42-bit Unix time in ms | 10-bit sequence. Pure functions plus a
// small generator that the caller feeds with the time (no clock inside).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tuneplane::sim {

std::string formatSluid(uint64_t value);
// Accepts either case; nullopt for anything that is not "s"/"S" + 13 Crockford digits,
// for values above 64 bits and for zero (the real server rejects "s0000000000000").
std::optional<uint64_t> parseSluid(std::string_view text);
// True when `text` starts like a SLUID ("s" or "S") — such ids never fall back to numbers.
bool looksLikeSluid(std::string_view text);

// Issues strictly increasing SLUIDs: same millisecond → next sequence number; sequence
// exhausted → borrows the next millisecond. Not thread-safe (the simulator holds its lock).
class SluidGenerator {
 public:
  explicit SluidGenerator(uint16_t cluster_id) : cluster_id_(cluster_id & 0xFFF) {}
  uint64_t next(int64_t now_unix_ms);

 private:
  uint16_t cluster_id_;
  int64_t last_ms_ = 0;
  uint32_t sequence_ = 0;
};

}  // namespace tuneplane::sim
