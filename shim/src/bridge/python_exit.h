// Python's exit, seen from the capture (the soak's seeds 33008, 553103).
//
// Python's finalization runs after its atexit callbacks: it puts SIGINT,
// and every signal with a Python handler, back to the default, then tears
// the modules down (every __del__ of the job's runs there). A window still
// open at the end of the job (past its last step, or a repeated capture's)
// is written from the C atexit handlers, after all of that; so a Ctrl-C
// during the teardown killed the process at once, its window's files left
// .partial. An atexit callback of ours (a C builtin: no Python frame of ours
// on the job's thread) keeps SIGINT/SIGTERM with the window's relay through
// the finalization (SignalRelay::at_python_exit): that Ctrl-C then waits
// for the files and ends the process as the default would.
//
// What changes for the job, only with a window open or its files being
// written when Python exits: a Ctrl-C in its later atexit callbacks ends it
// (once the files are written) instead of raising KeyboardInterrupt there,
// which Python would print and ignore. docs/guarantees.md says so.
#pragma once

#include <atomic>

namespace chakrashim::bridge {

class PythonExit {
 public:
  // With the GIL: registers the callback with Python's atexit. Runs no
  // Python code (C calls only) and imports nothing: without atexit and
  // signal in sys.modules (torch imports both) it does nothing. Idempotent.
  // Called on the optimizer hooks' registrar, outside any window.
  static void install();
  // From any thread, without the GIL (at arm, for the processes where no
  // registrar runs: a custom step marker, a DataLoader worker armed at step
  // 0): install() as a pending call of Python's, which the main thread runs
  // between two bytecodes, or before the atexit callbacks at the latest.
  static void schedule();
  static bool installed() { return installed_.load(std::memory_order_acquire); }

 private:
  static std::atomic<bool> installed_;
  static std::atomic<bool> scheduled_;
};

}  // namespace chakrashim::bridge
