// Signals in the window (DESIGN.md section 4.8). While armed, SIGTERM,
// SIGINT and the configured flush signal go to a handler that only records
// the signal and wakes a watcher thread; nothing else happens in signal
// context. The capture is then finalized at the stepping thread's next
// RecordFunction (or by the watcher, if that thread is blocked outside torch
// for longer than a grace period), and a terminating signal is delivered
// again under the disposition the job had before: the job dies of it, or
// runs its own handler, exactly as it would have without us.
//
// Installed at arm (Python installs its own handlers at start; ours must
// come after), removed at disarm, and never touched in a forked child.
#pragma once

#include <semaphore.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace chakrashim::bridge {

class SignalRelay {
 public:
  // Installs the handlers and starts the watcher. `finalize(sig)` ends the
  // window; it is called once, by the stepping thread (through
  // poll_on_stepping_thread) or by the watcher after the grace period.
  // False (with nothing installed) if the watcher could not be started.
  bool start(int flush_signal, std::chrono::milliseconds grace,
             std::function<void(int)> finalize);
  // The window ended normally: restores the previous dispositions (where
  // ours is still installed) and lets the watcher end. Never blocks.
  void stop();

  // The recorded signal, 0 if none: one relaxed load, for every op.
  static int pending() { return pending_.load(std::memory_order_relaxed); }
  // Called by the stepping thread at an op boundary when pending() != 0.
  void poll_on_stepping_thread();
  // In a forked child (pthread_atfork child handler; async-signal-safe):
  // puts back the job's dispositions. The child has no watcher thread, so
  // with our handler a SIGTERM would be recorded and never acted on: the
  // child could not be terminated (multiprocessing's Pool.terminate hung).
  void reset_in_forked_child();

 private:
  static void handler(int sig, siginfo_t* info, void* context);
  void watch();
  void finalize_once(int sig);
  void restore_dispositions();

  // Process-wide by nature: a signal handler can reach only statics. One
  // relay exists per process (the Capture's).
  static std::atomic<int> pending_;
  static sem_t wakeup_;

  struct Slot {
    int sig = 0;
    struct sigaction previous {};
    bool installed = false;
  };
  Slot slots_[3];
  std::function<void(int)> finalize_;
  int flush_signal_ = 0;
  std::chrono::milliseconds grace_{2000};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable finalized_cv_;
  bool finalize_started_ = false;
  bool finalized_ = false;
};

}  // namespace chakrashim::bridge
