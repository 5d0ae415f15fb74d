// Every signal handler of chakrashim's lives here (one owner): the relay of
// SIGTERM, SIGINT and the flush signal around a capture window, and the
// trigger signal's flag (TriggerSignal, below).
//
// Signals and the capture window (docs/design.md, "Signals").
//
// While a window is open, SIGTERM, SIGINT and the configured flush signal go
// to a handler that only records the signal (a bit, a count) and wakes a
// watcher thread; nothing else happens in signal context. The window is then
// finalized at the stepping thread's next RecordFunction, or by the watcher
// if that thread is blocked outside torch for longer than a grace period.
// Once the window is closed, the watcher puts the job's own dispositions
// back and delivers every signal it recorded, in this order:
//   - the flush signal: to the job's own handler, if it has one (Lightning
//     requeues a Slurm job on SIGUSR1); never a kill;
//   - SIGINT, then SIGTERM: raised again under the job's disposition, as many
//     times as they arrived (up to two each), so that the job ends exactly as
//     it would have without us.
// A signal recorded while the window closes normally is delivered too, and a
// second terminating signal after the flush signal is never lost.
//
// The flush signal's handler is installed at attach and stays for the life
// of the process: outside a window it passes the signal to the job's own
// handler, or, when the job has none, swallows it with one line, since its
// default action (USR1's, USR2's) would kill a job that the user only meant
// to flush. SIGTERM and SIGINT are taken only while a window is open
// (Python installs its own handlers at start; ours must come after).
//
// Threads: the handler runs on any thread; the watcher is one thread of
// ours, started with a window and ended once it has closed it (no thread of
// ours outlives the window); start/stop run on the stepping thread. Fork: reset_in_forked_child gives a
// child the job's SIGTERM/SIGINT dispositions back (it has no watcher).
#pragma once

#include <semaphore.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

namespace chakrashim::bridge {

class SignalRelay {
 public:
  // At attach: the flush signal's handler, for the life of the process. The
  // line printed when it arrives outside a window is formatted here (the
  // handler can only write it). `say_outside`: the log level lets it out.
  void install_flush(int flush_signal, const std::string& outside_line, bool say_outside);

  // A window opened: SIGTERM/SIGINT handlers, the flush handler again if the
  // job replaced it since, and the watcher. `finalize(sig)` ends the window;
  // it runs once, on the stepping thread (poll_on_stepping_thread) or on the
  // watcher after `grace`. `wait_for_files()` waits, bounded, for the
  // window's files: the watcher calls it before it restores the job's
  // dispositions, so a terminating signal that arrives while the files are
  // being written waits for them. False if the watcher could not be started
  // (then nothing is installed for this window).
  bool start(std::chrono::milliseconds grace, std::function<void(int)> finalize,
             std::function<void()> wait_for_files);
  // The window ended (any reason). Never blocks: the watcher restores the
  // dispositions and delivers what was recorded, at once after
  // wait_for_files(), so it must be called only once the window's writer
  // runs. A signal recorded just before is delivered then, not after the
  // grace period.
  void stop();

  // A signal is recorded and not yet handled: one relaxed load, for every op.
  static bool pending() { return pending_.load(std::memory_order_relaxed) != 0; }
  // SIGTERM or SIGINT is among the recorded signals (the process ends next).
  static bool terminating_recorded() {
    return (pending_.load() & ((1u << kTerm) | (1u << kInt))) != 0;
  }
  // Called by the stepping thread at an op boundary when pending().
  void poll_on_stepping_thread();
  // Closes the window's signal handling on the calling thread: waits for
  // the files (bounded), puts back the job's SIGTERM/SIGINT dispositions
  // where ours is still installed, then delivers everything recorded. Done
  // by whoever finalized for a signal, by the watcher after a normal stop,
  // and at exit. Once per window; later calls return at once.
  void close_now();
  // In a forked child (pthread_atfork child handler; async-signal-safe).
  void reset_in_forked_child();

  // Python's finalization is about to begin (its atexit callbacks run; on
  // the main thread, with the GIL). Python's finalization puts SIGINT, and
  // any signal with a Python handler, back to the default, which replaced
  // our handlers: a Ctrl-C in the rest of the exit (a slow __del__, a
  // module's teardown) then killed the process before the window still
  // open was written, its files left .partial (the soak's seeds 33008,
  // 553103). For SIGTERM/SIGINT while ours are in: `ignore_in_python(sig)`
  // sets Python's own handler to SIG_IGN (signal.signal, so that Python's
  // finalization leaves the signal alone) and says whether it did; ours then
  // goes back in, and what the window's close restores is SIG_DFL, the
  // disposition Python's finalization would have left. A Ctrl-C from here
  // on waits for the files, then ends the process as the default does.
  // False if `ignore_in_python` failed (its Python error stays set, for the
  // caller to pass on: a job's signal handler may have raised).
  bool at_python_exit(int (*ignore_in_python)(int sig));

 private:
  friend class ExitSignalGuard;
  enum Slot { kTerm = 0, kInt = 1, kFlush = 2, kSlots = 3 };
  static void handler(int sig, siginfo_t* info, void* context);
  static int slot_of(int sig);
  static bool ours_installed(int sig);
  static void chain_to_job(int slot, int sig, siginfo_t* info, void* context);
  void watch();
  void finalize_once(int sig);
  bool install(int slot, int sig);
  static bool put_ours(int sig);

  // Process-wide by nature: a signal handler can reach only statics. There
  // is one relay per process (the Capture's).
  static std::atomic<unsigned> pending_;          // bit per slot
  static std::atomic<unsigned> counts_[kSlots];   // arrivals, saturating at 2
  static std::atomic<int> first_;                 // the first signal of the window
  static std::atomic<bool> window_open_;          // flush signals are recorded
  static std::atomic<bool> dead_;                 // a forked child
  static std::atomic<bool> say_outside_;
  static int signals_[kSlots];
  static struct sigaction previous_[kSlots];      // the job's, when ours went in
  static std::atomic<bool> installed_[kSlots];
  static char outside_line_[512];
  static std::size_t outside_len_;
  static sem_t wakeup_;

  // Held while a window is closed (dispositions restored, signals
  // delivered), so that the next window's start() never interleaves with it.
  std::mutex close_mutex_;
  std::mutex mutex_;  // the fields below
  std::condition_variable cv_;
  std::function<void(int)> finalize_;
  std::function<void()> wait_for_files_;
  std::chrono::milliseconds grace_{2000};
  bool watcher_running_ = false;
  bool in_window_ = false;        // between start() and close_and_deliver()
  bool stop_requested_ = false;   // the window ended without a signal (or after)
  bool finalize_started_ = false;
  bool finalized_ = false;
  // close_now waits for the files; a start() meanwhile takes the relay
  // over (taken_over_), and the close then leaves everything in place.
  bool waiting_for_files_ = false;
  bool taken_over_ = false;
};

// CHAKRA_TRIGGER_SIGNAL: a handler, installed at attach for the life of the
// process, that only sets a flag; the stepping thread reads it at step
// ends. The signal's default action (USR1's, USR2's) would kill the job, so
// it is swallowed, unless the job had its own handler, which then runs too.
class TriggerSignal {
 public:
  static bool install(int sig);
  static bool pending() { return requested_.load(std::memory_order_relaxed); }
  static bool take() { return pending() && requested_.exchange(false); }
  // In a forked child (async-signal-safe): the job's own disposition back,
  // so that the signal does to a child what it would without us.
  static void reset_in_forked_child();

 private:
  static void handler(int sig, siginfo_t* info, void* context);
  // Process-wide by nature: a signal handler reaches only statics.
  static std::atomic<bool> requested_;
  static std::atomic<int> signal_;  // installed for; 0 none
  static struct sigaction previous_;
};

// At exit, while the job waits for a window's files (Capture::at_exit).
// Python's finalization has put SIGINT (and a SIGTERM handler of the job's)
// back to the default by then, so a terminal's Ctrl-C killed the process
// at once and left the files .partial without a word (issue #48). While
// the guard is in, SIGINT and SIGTERM are recorded: the first is said in
// one line and delivered once the files are written (or the wait timed
// out), so the job still ends as the signal would have; a second one says
// which .partial files are abandoned and ends the job of it at once.
//
// Threads and signals: install and release run on the exiting thread; the
// handler only does async-signal-safe work on what install prepared.
class ExitSignalGuard {
 public:
  // `first_line` is said at the first signal, `abandon_line` at a second.
  // Where the relay's handler is in (a window's files, kept through
  // Python's finalization by SignalRelay::at_python_exit), it stays, and
  // passes SIGINT/SIGTERM to the guard meanwhile (forward).
  static void install(const std::string& first_line, const std::string& abandon_line);
  // From the relay's handler: true if the guard took the signal.
  static bool forward(int sig, siginfo_t* info, void* context);
  // Puts back the dispositions the guard replaced, then delivers a signal
  // it recorded (the default action ends the process). Nothing if none.
  static void release_and_deliver();

 private:
  static void handler(int sig, siginfo_t* info, void* context);
  // Process-wide by nature: a signal handler reaches only statics.
  static std::atomic<int> arrivals_;
  static std::atomic<int> first_;
  static std::atomic<bool> installed_;  // also: the relay's handler forwards here
  static struct sigaction previous_[2];
  static char first_line_[1024];
  static std::size_t first_len_;
  static char abandon_line_[2048];
  static std::size_t abandon_len_;
};

// "SIGTERM", "SIGINT", "SIGUSR1", "SIGUSR2", or "signal N": for log lines
// and the metadata's reason (signal:SIGTERM).
std::string signal_name(int sig);

}  // namespace chakrashim::bridge
