#include "bridge/fork_guard.h"

#include <pthread.h>

#include <atomic>

#include "bridge/capture.h"

namespace chakrashim::bridge {

namespace {

void in_child() { Capture::instance().on_forked_child(); }

}  // namespace

void install_fork_guard() {
  // Once per process: pthread_atfork handlers cannot be removed.
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  ::pthread_atfork(nullptr, nullptr, &in_child);
}

}  // namespace chakrashim::bridge
