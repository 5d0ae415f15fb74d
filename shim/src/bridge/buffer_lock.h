// The lock of one thread's record buffer (the op spans', the native ET's).
#pragma once

#include <atomic>
#include <thread>

namespace chakrashim::bridge {

// Taken by the buffer's thread for each record and by the stepping thread
// once at disarm (it takes the records), so almost never contended. A spin
// lock, inline: an uncontended std::mutex costs a call into libpthread and
// about 40 instructions each way, twice an op. Never taken in a signal
// handler; a forked child never records (Capture::dead), so a lock held by
// another thread at fork is never waited for there. The one that waits
// yields: the holder is a thread of the job's priority, never the
// idle-priority writer (which works on records already taken).
class BufferLock {
 public:
  void lock() {
    while (flag_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  }
  void unlock() { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

}  // namespace chakrashim::bridge
