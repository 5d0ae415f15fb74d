// The capture's mutex, taken with this thread marked as holding it: a torch
// callback that runs on a thread already inside one of the capture's
// critical sections (a torch call made under the lock that runs a
// RecordFunction) must not act on a pending signal or cut, which would take
// the lock again (capture.h).
#pragma once

#include <mutex>

namespace chakrashim::bridge {

class CaptureLock {
 public:
  explicit CaptureLock(std::mutex& m) : lock_(m) { ++depth(); }
  ~CaptureLock() { --depth(); }
  CaptureLock(const CaptureLock&) = delete;
  CaptureLock& operator=(const CaptureLock&) = delete;
  // This thread is inside a CaptureLock.
  static bool held() { return depth() > 0; }

 private:
  // Per thread by nature: how deep this thread is in the critical sections.
  static int& depth() {
    thread_local int d = 0;
    return d;
  }
  std::lock_guard<std::mutex> lock_;
};

}  // namespace chakrashim::bridge
