// One budget for a window's host memory (CHAKRA_MAX_MEMORY): op spans, the
// ET recorder's records, decoded GPU events and CUPTI's correlation records
// all charge it, so that the window's peak memory has one bound, whatever
// mix fills it. Charges are taken in blocks by whoever grows a store (a
// chunk of spans, a MiB of events), never per record. Thread-safe: one
// atomic, taken by the recording threads and the collector's decode thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace chakrashim {

class MemoryBudget {
 public:
  explicit MemoryBudget(std::uint64_t cap = 0) : cap_(cap) {}

  // A new window: nothing used yet. Not while anyone charges.
  void reset(std::uint64_t cap) {
    cap_.store(cap, std::memory_order_relaxed);
    used_.store(0, std::memory_order_relaxed);
    refused_.store(false, std::memory_order_relaxed);
  }

  // Takes `bytes` if they fit under the cap; false (nothing taken) if not,
  // and from then on every charge is refused: one refusal ends the window
  // for every store, so that the ET, the spans and the GPU records stop at
  // the same moment.
  bool try_charge(std::uint64_t bytes) {
    if (refused_.load(std::memory_order_relaxed)) return false;
    const std::uint64_t cap = cap_.load(std::memory_order_relaxed);
    std::uint64_t used = used_.load(std::memory_order_relaxed);
    do {
      if (used + bytes > cap || used + bytes < used) {
        refused_.store(true, std::memory_order_relaxed);
        return false;
      }
    } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    return true;
  }

  // Takes `bytes` whatever the cap says, and refuses every later
  // try_charge as one refusal would. Only for the record of an op that was
  // already under way when the cap was reached (SpanStore::add with
  // past_cap): torch's ET may hold that op's node already, and every ET
  // node must find its span. Such ops are the ones in flight at the cut, a
  // few per thread, so the overshoot is one chunk per recording thread at
  // most, and only its pages written are resident.
  void charge_past_cap(std::uint64_t bytes) {
    used_.fetch_add(bytes, std::memory_order_relaxed);
    refused_.store(true, std::memory_order_relaxed);
  }

  std::uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  std::uint64_t cap() const { return cap_.load(std::memory_order_relaxed); }
  // A charge was refused: the window is over its memory.
  bool exhausted() const { return refused_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> cap_;
  std::atomic<std::uint64_t> used_{0};
  std::atomic<bool> refused_{false};
};

}  // namespace chakrashim
