// An allocator that takes whole pages from the kernel (mmap) and gives them
// back (munmap), bypassing malloc. For the span chunks only: long-lived
// ~600 KB blocks in malloc's heap sit between the job's large, short-lived
// tensor buffers (glibc serves those from the heap once its dynamic mmap
// threshold has risen) and fragment it: peak RSS grew by about 4x the spans'
// own size (scripts/bench/bench_memory.py; with MALLOC_MMAP_THRESHOLD_ fixed the
// growth was the spans' size alone). Pages of our own cannot do that.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace chakrashim::bridge {

template <typename T>
struct PageAllocator {
  using value_type = T;
  PageAllocator() = default;
  template <typename U>
  PageAllocator(const PageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    void* p = ::mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                     -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) { ::munmap(p, n * sizeof(T)); }

  template <typename U>
  bool operator==(const PageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const PageAllocator<U>&) const { return false; }
};

}  // namespace chakrashim::bridge
