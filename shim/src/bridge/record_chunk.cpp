#include "bridge/record_chunk.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace chakrashim::bridge {

RecordChunk::RecordChunk(std::size_t capacity) {
  void* p = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  base_ = static_cast<std::uint8_t*>(p);
  capacity_ = capacity;
}

RecordChunk::~RecordChunk() {
  if (base_) ::munmap(base_, capacity_);
}

RecordChunk::RecordChunk(RecordChunk&& o) noexcept
    : base_(o.base_), capacity_(o.capacity_), used_(o.used_) {
  o.base_ = nullptr;
  o.capacity_ = o.used_ = 0;
}

RecordChunk& RecordChunk::operator=(RecordChunk&& o) noexcept {
  if (this != &o) {
    if (base_) ::munmap(base_, capacity_);
    base_ = o.base_;
    capacity_ = o.capacity_;
    used_ = o.used_;
    o.base_ = nullptr;
    o.capacity_ = o.used_ = 0;
  }
  return *this;
}

void RecordChunk::append(const std::uint8_t* p, std::size_t n) {
  std::memcpy(base_ + used_, p, n);
  used_ += n;
}

}  // namespace chakrashim::bridge
