#include "bridge/python_exit.h"

#include <signal.h>

#include "bridge/capture.h"
#include "bridge/python_api.h"

namespace chakrashim::bridge {

std::atomic<bool> PythonExit::installed_{false};
std::atomic<bool> PythonExit::scheduled_{false};

namespace {

// What the callback calls: signal.getsignal and signal.signal, and their
// argument tuples. Made once, with the GIL, and kept for the life of the
// process (a reference each); read only by the callback, on the exiting
// thread with the GIL.
struct Calls {
  void* getsignal = nullptr;
  void* setsignal = nullptr;
  void* query[2] = {};   // (SIGINT,), (SIGTERM,)
  void* ignore[2] = {};  // (SIGINT, SIG_IGN), (SIGTERM, SIG_IGN)
};
Calls g_calls;

// Python's handler of `sig` is one its finalization resets (a callable,
// such as default_int_handler or a job's function): set to SIG_IGN. 1 if
// done, 0 if there is none, -1 on an error (left set for the caller).
int ignore_in_python(int sig) {
  const PythonApi& py = python();
  const int i = sig == SIGINT ? 0 : 1;
  void* handler = py.call_object(g_calls.getsignal, g_calls.query[i]);
  if (!handler) return -1;
  const bool callable = py.callable_check(handler) == 1;
  py.dec_ref(handler);
  if (!callable) return 0;
  // signal.signal also runs pending Python handlers: what they raise (a
  // KeyboardInterrupt of a Ctrl-C just now) is the job's, and is passed on.
  void* r = py.call_object(g_calls.setsignal, g_calls.ignore[i]);
  if (!r) return -1;
  py.dec_ref(r);
  return 1;
}

// The atexit callback: on the thread that runs Python's finalization (the
// main thread), with the GIL. Nothing to do without a window in progress.
void* at_python_exit(void*, void*) {
  const PythonApi& py = python();
  if (!Capture::instance().keep_signals_through_python_exit(&ignore_in_python)) return nullptr;
  py.inc_ref(py.none);
  return py.none;
}

PythonApi::MethodDef g_exit_def{"chakrashim_at_python_exit", &at_python_exit, PythonApi::kVarArgs,
                                "chakrashim: keeps a Ctrl-C during Python's finalization from losing the "
                                "capture window's files"};

// Py_AddPendingCall's function: on the main thread, with the GIL, between
// two bytecodes of the job's. Never fails the job: 0 always.
int install_pending(void*) {
  PythonExit::install();
  return 0;
}

}  // namespace

void PythonExit::install() {
  const PythonApi& py = python();
  if (installed() || !py.usable() || !py.call_object || !py.callable_check || !py.import_get_module_dict ||
      !py.long_from_long || !py.tuple_pack || !py.module_get_dict)
    return;
  if (!py.is_initialized() || (py.is_finalizing && py.is_finalizing())) return;
  // Only what the job imported already (torch imports both): importing
  // runs Python code, which must not run here.
  void* modules = py.import_get_module_dict();
  void* reg = module_attribute(modules, "atexit", "register");
  void* get = module_attribute(modules, "signal", "getsignal");
  void* set = module_attribute(modules, "signal", "signal");
  void* ign = module_attribute(modules, "signal", "SIG_IGN");
  if (!reg || !get || !set || !ign) return;
  bool made = true;
  const int sigs[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2 && made; ++i) {
    void* n = py.long_from_long(sigs[i]);
    if (!n) {
      made = false;
      break;
    }
    g_calls.query[i] = py.tuple_pack(1, n);
    g_calls.ignore[i] = py.tuple_pack(2, n, ign);
    py.dec_ref(n);
    made = g_calls.query[i] && g_calls.ignore[i];
  }
  void* fn = made ? py.cfunction_new(&g_exit_def, nullptr, nullptr) : nullptr;
  void* args = fn ? py.tuple_pack(1, fn) : nullptr;
  if (args) {
    py.inc_ref(get);
    py.inc_ref(set);
    g_calls.getsignal = get;
    g_calls.setsignal = set;
    // atexit.register is a C function: no Python code runs.
    if (void* r = py.call_object(reg, args)) {
      py.dec_ref(r);
      installed_.store(true, std::memory_order_release);
    }
    py.dec_ref(args);
  }
  if (fn) py.dec_ref(fn);  // atexit holds it
  // Our own errors only (no code of the job's ran): cleared.
  if (py.err_occurred()) py.err_clear();
}

void PythonExit::schedule() {
  const PythonApi& py = python();
  if (installed() || !py.add_pending_call || !py.is_initialized || !py.is_initialized()) return;
  if (scheduled_.exchange(true)) return;
  // Refused when Python's queue of pending calls is full: tried at the next arm.
  if (py.add_pending_call(&install_pending, nullptr) != 0) scheduled_.store(false);
}

}  // namespace chakrashim::bridge
