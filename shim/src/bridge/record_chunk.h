// One block of the native ET recorder's records (et_recorder.h): an mmap'd
// region written once, front to back, and read by the writer thread after
// the window.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chakrashim::bridge {

// A block of records in pages of our own (page_allocator.h says why not
// malloc's heap). Movable, never copied.
class RecordChunk {
 public:
  explicit RecordChunk(std::size_t capacity);
  ~RecordChunk();
  RecordChunk(RecordChunk&& other) noexcept;
  RecordChunk& operator=(RecordChunk&& other) noexcept;
  RecordChunk(const RecordChunk&) = delete;
  RecordChunk& operator=(const RecordChunk&) = delete;

  bool fits(std::size_t n) const { return used_ + n <= capacity_; }
  void append(const std::uint8_t* p, std::size_t n);
  // Writing in place: the free bytes after the records, and taking `n` of
  // them as written (the recorder encodes a record there when it fits, and
  // copies it from its scratch otherwise).
  std::uint8_t* tail() { return base_ + used_; }
  std::size_t room() const { return capacity_ - used_; }
  void advance(std::size_t n) { used_ += n; }
  const std::uint8_t* data() const { return base_; }
  std::size_t size() const { return used_; }

 private:
  std::uint8_t* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
};

}  // namespace chakrashim::bridge
