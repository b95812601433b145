// A node's generic resources as slurmrestd reports them in `nodes[].gres`, e.g.
// "gpu:h100:8(S:0-1),nvme:1": comma-separated NAME[:TYPE][:COUNT] entries, an optional
// "(S:…)"/"(IDX:…)" suffix (socket or index binding) ignored. Doctor uses it to see whether
// a GPU series' `gres_type` exists on the nodes its constraint selects, and how many GPUs
// of that type a node has. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::doctor {

struct GresEntry {
  std::string name;   // "gpu"
  std::string type;   // "h100"; empty when the node declares none
  int64_t count = 1;  // a missing count means 1 (as in slurm.conf's Gres=gpu:h100)
  bool operator==(const GresEntry&) const = default;
};

// Entries that cannot be read (an empty name) are left out.
std::vector<GresEntry> parseGres(std::string_view text);

// How many GPUs of `type` the node has (any type when `type` is empty).
int64_t gpusOfType(const std::vector<GresEntry>& gres, const std::string& type);

}  // namespace tuneplane::doctor
