// The one way in-process singletons are made here (Session, Capture,
// EtRecorder, Collector and the collector's state).
#pragma once

#include <new>

namespace chakrashim {

// The process's one T: built on first use (thread-safe, as every
// function-local static), never destroyed. Never destroyed on purpose: exit
// hooks, torch's callbacks on other threads and CUPTI's buffer callbacks may
// still reach it while static destructors run, and a destroyed singleton
// there is a crash in the user's job. A class with a private constructor
// names `friend T& immortal<T>();`.
template <typename T>
T& immortal() {
  alignas(T) static unsigned char storage[sizeof(T)];
  static T* const object = ::new (static_cast<void*>(storage)) T();
  return *object;
}

}  // namespace chakrashim
