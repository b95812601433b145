// ListingGate: how many listings of a job's outputs (GET /v1/jobs/{id}/files) run at once.
// A page reads at most a page of the folder (attempt/output_files.h), but each of its entries
// is stat'ed on the shared filesystem, which can be slow (NFS); without a bound, listings in
// flight could take every worker thread and starve every other request. A listing that finds
// the gate full is refused at once (503, files.busy, Retry-After: 1) rather than queued: a
// queued one would hold a worker while it waits. Downloads are not gated: each of their
// chunks is a bounded read between two writes to the client (body_stream.h).
// Thread-safety: tryEnter and the slots it hands out may be used from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

namespace tuneplane::api {

// The share of the worker threads (server.threads) listings may take at once: half, so that
// the other half always serves everything else. At least one.
inline constexpr int kListingWorkerShareDivisor = 2;

inline int listingCapacity(int workers) {
  return std::max(1, workers / kListingWorkerShareDivisor);
}

class ListingGate {
 public:
  // A place in the gate, given back when destroyed.
  class Slot {
   public:
    explicit Slot(std::atomic<int>& running) : running_(&running) {}
    Slot(Slot&& other) noexcept : running_(std::exchange(other.running_, nullptr)) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (running_ != nullptr) running_->fetch_sub(1, std::memory_order_acq_rel);
    }

   private:
    std::atomic<int>* running_;
  };

  // REQUIRES: capacity >= 1.
  explicit ListingGate(int capacity) : capacity_(capacity) {}

  // A slot while fewer than `capacity` are taken; nullopt when the gate is full.
  // REQUIRES: the gate outlives its slots.
  std::optional<Slot> tryEnter() {
    int running = running_.load(std::memory_order_acquire);
    while (running < capacity_) {
      if (running_.compare_exchange_weak(running, running + 1, std::memory_order_acq_rel)) {
        return std::optional<Slot>(std::in_place, running_);
      }
    }
    return std::nullopt;
  }

  int capacity() const { return capacity_; }

 private:
  const int capacity_;
  std::atomic<int> running_{0};
};

}  // namespace tuneplane::api
