// A growable array of trivially copyable records in pages of its own: mmap
// to start, mremap to grow (the kernel moves page tables, never the bytes),
// munmap when done. For the collector's events, which can reach hundreds of
// MiB in a window: std::vector would copy them at each doubling and touch
// twice their size, and long-lived blocks in malloc's heap fragment the
// job's (see span_store.h). Not thread-safe; one owner at a time.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace chakrashim {

template <typename T>
class PagedVector {
  static_assert(std::is_trivially_copyable_v<T>, "PagedVector moves its bytes with mremap");

 public:
  PagedVector() = default;
  ~PagedVector() { release(); }
  PagedVector(PagedVector&& o) noexcept { steal(o); }
  PagedVector& operator=(PagedVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  PagedVector(const PagedVector&) = delete;
  PagedVector& operator=(const PagedVector&) = delete;

  void push_back(const T& v) {
    if (size_ == capacity_) grow(capacity_ ? capacity_ * 2 : kFirst);
    std::memcpy(static_cast<void*>(data_ + size_), &v, sizeof(T));
    ++size_;
  }
  template <typename... A>
  void emplace_back(A&&... args) {
    push_back(T{std::forward<A>(args)...});
  }
  // Smaller only (the join compacts in place).
  void resize(std::size_t n) {
    if (n < size_) size_ = n;
  }
  void clear() { size_ = 0; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& back() { return data_[size_ - 1]; }
  // Bytes mapped (what the records can cost at most).
  std::size_t mapped_bytes() const { return capacity_ * sizeof(T); }

 private:
  static constexpr std::size_t kFirst = (64 * 1024) / sizeof(T) + 1;

  void grow(std::size_t n) {
    void* p = data_ ? ::mremap(data_, capacity_ * sizeof(T), n * sizeof(T), MREMAP_MAYMOVE)
                    : ::mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                             -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    capacity_ = n;
  }
  void release() {
    if (data_) ::munmap(data_, capacity_ * sizeof(T));
    data_ = nullptr;
    size_ = capacity_ = 0;
  }
  void steal(PagedVector& o) {
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace chakrashim
