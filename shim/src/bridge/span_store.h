// Host spans recorded by the op-span callback, kept per thread so that the
// recording threads never contend: each thread appends to its own buffer
// (under its own, uncontended mutex) and the stepping thread takes them all
// at disarm.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "chakrashim/events.h"

namespace chakrashim::bridge {

class SpanStore {
 public:
  // Appends to the calling thread's buffer. Thread-safe.
  void add(HostSpan&& span);
  // Moves every thread's spans out. Thread-safe.
  std::vector<HostSpan> take_all();
  // Bytes held, approximately (for the memory cap).
  std::uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  struct ThreadBuffer {
    std::mutex mutex;
    std::vector<HostSpan> spans;
  };
  ThreadBuffer& local();

  std::mutex registry_mutex_;
  // Buffers outlive their threads: a thread that ended before disarm still
  // has its spans taken.
  std::vector<std::shared_ptr<ThreadBuffer>> buffers_;
  std::atomic<std::uint64_t> bytes_{0};
};

}  // namespace chakrashim::bridge
