#include "buffer_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

namespace chakrashim::collector {

namespace {
std::size_t page_round(std::size_t n) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}
}  // namespace

std::pair<std::size_t, std::size_t> BufferPool::shape_for_cap(std::uint64_t cap) {
  constexpr std::uint64_t kBuffer = 8ULL << 20;
  constexpr std::uint64_t kMinBuffer = 64ULL << 10;
  if (cap >= 2 * kBuffer) return {kBuffer, static_cast<std::size_t>(cap / kBuffer)};
  const std::uint64_t size = std::max<std::uint64_t>(cap / 2, kMinBuffer);
  return {static_cast<std::size_t>(size), 2};
}

BufferPool::BufferPool(std::size_t buffer_size, std::size_t count)
    : size_(page_round(std::max<std::size_t>(buffer_size, 1))), count_(std::max<std::size_t>(count, 1)) {
  mapped_ = size_ * count_;
  // Reserved, not touched: pages become resident only as CUPTI fills them.
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    mapped_ = 0;
    count_ = 0;
    return;
  }
  base_ = static_cast<std::uint8_t*>(p);
  free_.reserve(count_);
  for (std::size_t i = count_; i-- > 0;) free_.push_back(base_ + i * size_);
}

BufferPool::~BufferPool() {
  if (base_) ::munmap(base_, mapped_);
}

std::uint8_t* BufferPool::acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) {
    ++refusals_;
    return nullptr;
  }
  std::uint8_t* b = free_.back();
  free_.pop_back();
  return b;
}

void BufferPool::release(std::uint8_t* buffer) {
  if (!buffer || buffer < base_ || buffer >= base_ + mapped_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(buffer);
}

std::uint64_t BufferPool::refusals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refusals_;
}

std::size_t BufferPool::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return count_ - free_.size();
}

}  // namespace chakrashim::collector
