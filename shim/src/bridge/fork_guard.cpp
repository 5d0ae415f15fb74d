#include "bridge/fork_guard.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>

#include "bridge/capture.h"

namespace chakrashim::bridge {

namespace {

void in_child() {
  Capture& capture = Capture::instance();
  capture.mark_forked_child();
  const int fd = capture.et_fd();
  if (fd < 0) return;
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (devnull < 0) return;
  ::dup2(devnull, fd);
  ::close(devnull);
}

}  // namespace

void install_fork_guard() {
  // Once per process: pthread_atfork handlers cannot be removed.
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  ::pthread_atfork(nullptr, nullptr, &in_child);
}

}  // namespace chakrashim::bridge
