// CUPTI's activity buffers: a fixed number of fixed-size, 8-byte aligned
// buffers mapped once at arm (mmap, so they neither grow nor fragment the
// job's malloc heap) and recycled. When all are in use, acquire() returns
// nullptr: CUPTI then drops records and counts them, and so do we. The
// memory a window may use for them is capped by CHAKRA_CUPTI_BUFFERS.
//
// Thread-safe: CUPTI asks for buffers on whichever thread needs one, and
// hands them back on its own thread; the decode thread releases them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace chakrashim::collector {

class BufferPool {
 public:
  // count * size bytes, size rounded up to a page. count >= 1.
  BufferPool(std::size_t buffer_size, std::size_t count);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // The layout for a cap: buffers of 8 MiB (fewer bytes when the cap is
  // smaller), at least two, so that CUPTI can fill one while we decode one.
  static std::pair<std::size_t, std::size_t> shape_for_cap(std::uint64_t cap_bytes);

  bool ok() const { return base_ != nullptr; }
  std::size_t buffer_size() const { return size_; }
  std::size_t capacity() const { return count_; }
  std::uint8_t* acquire();  // nullptr when every buffer is out
  void release(std::uint8_t* buffer);
  std::uint64_t refusals() const;  // acquire() calls that found none free
  std::size_t in_use() const;

 private:
  std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t count_ = 0;
  std::size_t mapped_ = 0;
  mutable std::mutex mutex_;
  std::vector<std::uint8_t*> free_;
  std::uint64_t refusals_ = 0;
};

}  // namespace chakrashim::collector
