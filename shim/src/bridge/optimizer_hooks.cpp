#include "bridge/optimizer_hooks.h"

#include <errno.h>
#include <time.h>

#include <chrono>
#include <thread>
#include <string_view>
#include <tuple>
#include <vector>

#include "bridge/bridge_log.h"
#include "bridge/python_api.h"
#include "bridge/python_frames.h"

namespace chakrashim::bridge {

namespace {

// Which steps are open on this thread (GIL held whenever touched). The
// outermost one counts.
//
// t_depth: torch.optim steps whose pre hook ran and whose post hook has
// not, nested ones included. A plain depth, so that the common case, one
// optimizer step at a time, costs an increment and a decrement and no
// frame (what a step costs outside the window, issue #52). A step that an
// exception left between its pre and post hook (the job's signal handler
// raising inside it, issue #48) would leave it one too high, and no step
// would count again; so wherever it says "nested" it is checked against
// the frames running torch's step wrapper above the current one, and set
// to their number: only nested steps, and the first step after such an
// exception, pay for that walk.
thread_local int t_depth = 0;

// Outer steps of ours that are not torch.optim's (a DeepSpeed engine's,
// open_step/close_step), outermost first, each keyed by the frame of our
// Python wrapper that runs it (for its identity only: it lives while the
// step runs) with t_depth at its open. One that an exception ended is no
// ancestor of a later frame, and is dropped then.
struct OuterStep {
  const void* frame;
  int depth;
};
thread_local std::vector<OuterStep> t_open;

// The code object of torch's step wrapper (Optimizer.profile_hook_step's
// `wrapper`, one code object for every optimizer class it wraps), found at
// registration and kept referenced for the life of the process. Set and
// read with the GIL held (a free-threaded CPython, which has none, is not
// a target).
const void* g_wrapper_code = nullptr;

// Drops the outer steps whose frame is not an ancestor of `frame` (steps an
// exception ended without their close). Only DeepSpeed's steps pay for it.
void drop_stale(const void* frame) {
  std::size_t kept = 0;
  for (const OuterStep& open : t_open)
    if (is_ancestor(open.frame, frame)) t_open[kept++] = open;
  t_open.resize(kept);
}

// Where registration found no step wrapper in torch.optim (a torch that
// changed it): the code of the frame that called our Python pre hook,
// taken once, and only if it is a function named `wrapper` (a compiled
// step's resume function, which Dynamo may run eagerly, is not).
void wrapper_code_from_caller() {
  const PythonApi& py = python();
  const void* code = code_of(frame_above(1));
  if (!code || !py.get_attr || !py.intern_string || !py.as_utf8) return;
  static void* const name_key = py.intern_string("co_name");
  void* name = name_key ? py.get_attr(const_cast<void*>(code), name_key) : nullptr;  // a new reference
  const char* text = name ? py.as_utf8(name) : nullptr;
  if (text && std::string_view(text) == "wrapper") {
    py.inc_ref(const_cast<void*>(code));  // kept for the life of the process
    g_wrapper_code = code;
  }
  if (name) py.dec_ref(name);
  if (py.err_occurred()) py.err_clear();
}

// t_depth, checked against the frames above `frame` that run torch's step
// wrapper: the steps still open around it. Left as it is where that cannot
// be told (no wrapper seen yet, or Python before 3.9).
void recheck_depth(const void* frame) {
  const int running = ancestors_running(frame, g_wrapper_code);
  if (running >= 0) t_depth = running;
}

// The one instance the builtins reach (their self is unused).
OptimizerHooks* g_hooks = nullptr;

constexpr std::chrono::milliseconds kTimerPeriod{250};
constexpr int kTimerTries = 240;  // 60 s

// Finds torch.optim's global step-hook dicts and the keys that torch's
// register_optimizer_step_*_hook would give our two hooks (None where one
// is in already, after a partial try). Never imports anything: without a
// torch.optim already imported, `ok` stays False and we try later. The
// dicts are filled from C (try_register), not here: between bytecodes
// another thread may take the GIL and open an optimizer step.
//
// The hooks are two small Python functions around our builtins, made once
// (the globals dict lives as long as the process): Dynamo traces every hook
// of an optimizer step it compiles (torch.compile(opt.step)), and a builtin
// it cannot trace is a graph break, a UserWarning on the job's stderr, and
// an error under fullgraph=True (issue #48). Under Dynamo they do nothing:
// torch.compiler.is_dynamo_compiling() (is_compiling() where torch lacks
// it) is folded to True there, and a compiled optimizer step is not
// counted (it has no Optimizer.step record either), as docs/guarantees.md
// says. __builtins__ is set because Dynamo reads it from a traced
// function's globals.
//
// What they cost a step is what the job pays outside the window (issue
// #52): so the fewest Python calls, on CPython's quickest paths, that keep
// that behaviour. torch calls a hook as hook(optimizer, args, kwargs), as
// every torch since the hooks came (2.0) does: three parameters with
// defaults, and ours after them as defaults (a `*args`, or keyword-only
// parameters, took CPython's slow call path: about 1,000 instructions a
// step more, callgrind); is_dynamo_compiling is one call returning False,
// where is_compiling calls torch.jit.is_scripting too; the builtins are
// METH_FASTCALL (no argument tuple) and the pre hook passes them nothing.
constexpr const char* kFind = R"PY(
import sys as _sys
ok = False
__builtins__ = _sys.modules["builtins"]
_o = _sys.modules.get("torch.optim.optimizer")
_h = getattr(_sys.modules.get("torch.utils.hooks"), "RemovableHandle", None)
_pre_hooks = getattr(_o, "_global_optimizer_pre_hooks", None)
_post_hooks = getattr(_o, "_global_optimizer_post_hooks", None)
_tc = _sys.modules.get("torch.compiler")
_compiling = getattr(_tc, "is_dynamo_compiling", None)
if not callable(_compiling):
    _compiling = getattr(_tc, "is_compiling", None)
if (_h is not None and isinstance(_pre_hooks, dict) and isinstance(_post_hooks, dict)
        and callable(_compiling)
        and hasattr(_o, "register_optimizer_step_post_hook")
        and hasattr(_o, "register_optimizer_step_pre_hook")):
    if "chakrashim_optimizer_pre_hook" not in globals():
        def chakrashim_optimizer_pre_hook(optimizer, args=None, kwargs=None, _c=_compiling, _hook=_pre):
            if not _c():
                _hook()

        def chakrashim_optimizer_post_hook(optimizer, args=None, kwargs=None, _c=_compiling, _hook=_post):
            if not _c():
                _hook(optimizer)
    _pre_fn = chakrashim_optimizer_pre_hook
    _post_fn = chakrashim_optimizer_post_hook
    # The code object of torch's step wrapper (profile_hook_step's inner
    # `wrapper`, one for every optimizer class), from the constants of
    # profile_hook_step itself: no code of torch's runs to find it.
    _wrapper_code = None
    _phc = getattr(getattr(getattr(_o, "Optimizer", None), "profile_hook_step", None), "__code__", None)
    for _k in getattr(_phc, "co_consts", ()):
        if type(_k) is type(_phc) and _k.co_name == "wrapper":
            _wrapper_code = _k
    _post_key = None if any(f is _post_fn for f in list(_post_hooks.values())) else _h(_post_hooks).id
    _pre_key = None if any(f is _pre_fn for f in list(_pre_hooks.values())) else _h(_pre_hooks).id
    ok = True
)PY";

PythonApi::MethodDef g_pre_def{"chakrashim_optimizer_pre_step", nullptr, PythonApi::kFastCall,
                               "chakrashim: counts optimizer steps"};
PythonApi::MethodDef g_post_def{"chakrashim_optimizer_post_step", nullptr, PythonApi::kFastCall,
                                "chakrashim: counts optimizer steps"};

}  // namespace

void* OptimizerHooks::pre_hook(void*, void* const*, long) {
  const PythonApi& py = python();
  ++t_depth;
  // No C++ exception and no Python error may leave a builtin of ours: the
  // first would end the job, the second make its step raise SystemError.
  // (None is set on entry: Python calls a builtin with no error pending.)
  try {
    if (!g_wrapper_code) wrapper_code_from_caller();
  } catch (...) {
  }
  if (py.err_occurred()) py.err_clear();
  py.inc_ref(py.none);
  return py.none;
}

void* OptimizerHooks::post_hook(void*, void* const* args, long nargs) {
  const PythonApi& py = python();
  try {
    if (t_depth > 0) --t_depth;
    // Nested in another torch optimizer step, or one an exception left
    // open (see t_depth): the frames tell.
    if (t_depth > 0) recheck_depth(frame_above(1));
    // Inside an outer step of ours (DeepSpeed's): does it still run?
    if (t_depth == 0 && !t_open.empty()) drop_stale(frame_above(1));
    // Our Python hook passes the optimizer, torch's first argument.
    if (t_depth == 0 && t_open.empty()) step_closed(nargs >= 1 ? args[0] : nullptr, true);
  } catch (...) {
  }
  if (py.err_occurred()) py.err_clear();
  py.inc_ref(py.none);
  return py.none;
}

void OptimizerHooks::open_step(const void* frame) {
  if (!t_open.empty()) drop_stale(frame);
  t_open.push_back({frame, t_depth});
}

void OptimizerHooks::close_step(const void* frame, void* stepper, bool torch_optimizer) {
  // Closes this step and any opened inside it that an exception left open
  // (the torch steps among them too: t_depth as it was at its open). A
  // close without its open (none open) ends an outermost step.
  for (std::size_t i = t_open.size(); i-- > 0;) {
    if (t_open[i].frame != frame) continue;
    t_depth = t_open[i].depth;
    t_open.resize(i);
    break;
  }
  if (!t_open.empty()) return;
  if (t_depth > 0) recheck_depth(frame);
  if (t_depth == 0) step_closed(stepper, torch_optimizer);
}

void OptimizerHooks::step_closed(void* stepper, bool torch_optimizer) {
  if (!g_hooks) return;
  g_hooks->note_optimizer(stepper, torch_optimizer);
  if (g_hooks->callbacks_.step_ended) g_hooks->callbacks_.step_ended();
}

void OptimizerHooks::note_optimizer(void* optimizer, bool torch_optimizer) {
  // The object that stepped (torch's first argument to a step hook): its
  // address is its identity while it lives. Two compares and a store a
  // step.
  if (!optimizer) return;
  const std::uint64_t step = outermost_steps_++;
  const auto found = pattern_.on_step(reinterpret_cast<std::uintptr_t>(optimizer), step);
  if (found && callbacks_.several_optimizers) callbacks_.several_optimizers(found->optimizers);
  // Once told, or past the job's first steps, its groups are not read
  // again: nothing more per step.
  if (torch_optimizer && callbacks_.group_by_group && pattern_.groups_watched(step) &&
      pattern_.on_groups(reinterpret_cast<std::uintptr_t>(optimizer), first_group(optimizer), step))
    callbacks_.group_by_group();
}

std::uint64_t OptimizerHooks::first_group(void* optimizer) {
  // The identity of optimizer.param_groups[0] now, as the instance holds
  // it (instance_attribute: no code of the job's runs, and the optimizer's
  // dict is left as it is). A torch optimizer keeps its groups' dicts for
  // its life, so the identity changes only where someone swaps the list: a
  // wrapper that steps it group by group. 0 where it cannot be read. Once a
  // step, for the job's first steps.
  const PythonApi& py = python();
  if (!py.list_size || !py.list_get_item || !py.intern_string) return 0;
  // Made once and kept (GIL held: the first call is the only writer).
  static void* key = py.intern_string("param_groups");
  if (!key) {
    py.err_clear();
    return 0;
  }
  std::uint64_t id = 0;
  if (void* groups = instance_attribute(optimizer, key)) {  // a new reference
    if (py.list_size(groups) > 0) {
      if (void* first = py.list_get_item(groups, 0)) id = reinterpret_cast<std::uintptr_t>(first);
    }
    py.dec_ref(groups);
  }
  if (py.err_occurred()) py.err_clear();  // not a list: ours, no bytecode ran
  return id;
}

void OptimizerHooks::start(Callbacks callbacks) {
  if (started_.exchange(true)) return;
  if (!python().usable()) {
    log_debug("no usable Python API: steps stay counted by the RecordFunction callback");
    return;
  }
  callbacks_ = std::move(callbacks);
  ::sem_init(&wakeup_, 0, 0);
  // METH_FASTCALL's signature in PyMethodDef's one slot, cast through
  // void (*)() as CPython's own tables do (the flag tells Python which).
  g_pre_def.meth = reinterpret_cast<decltype(g_pre_def.meth)>(
      reinterpret_cast<void (*)()>(&OptimizerHooks::pre_hook));
  g_post_def.meth = reinterpret_cast<decltype(g_post_def.meth)>(
      reinterpret_cast<void (*)()>(&OptimizerHooks::post_hook));
  g_hooks = this;
  // No thread yet: start() runs inside `import torch`, before the job's
  // own threads are up (OpenBLAS's, a DataLoader's), and in a pids-limited
  // cgroup a thread of ours then took one of theirs (issue #48). The first
  // sign of training starts it: an optimizer record (zero_grad), a
  // backward, or the first step's end (try_again).
}

void OptimizerHooks::try_again() {
  if (!g_hooks || active() || no_thread_.load() || callbacks_.give_up()) return;
  if (running_.exchange(true)) {
    ::sem_post(&wakeup_);
    return;
  }
  try {
    // Detached and short-lived: it ends once the hooks are in, after 60 s,
    // or when the process is a forked child or exiting. It may be waiting
    // for the GIL when the process exits, and exit must never wait for it.
    std::thread([this] { registrar(); }).detach();
  } catch (const std::exception& e) {
    // No thread (a pids-limited cgroup): given up, said once, not tried
    // again at every step end.
    no_thread_.store(true);
    running_.store(false);
    log_info(std::string("cannot start the thread that installs the optimizer-step hooks (") +
             e.what() + "): steps stay counted by the RecordFunction callback");
  }
}

void OptimizerHooks::registrar() {
  // Tried at once (the job trains: torch.optim is imported), then every
  // 250 ms or when woken.
  for (int i = 0; i < kTimerTries; ++i) {
    if (active() || callbacks_.give_up()) break;
    if (try_register()) break;
    timespec until{};
    ::clock_gettime(CLOCK_REALTIME, &until);  // sem_timedwait's clock
    until.tv_nsec += std::chrono::nanoseconds(kTimerPeriod).count();
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    while (::sem_timedwait(&wakeup_, &until) != 0 && errno == EINTR) {
    }
  }
  // A try_again that saw this thread alive and only woke it is lost; the
  // next step end starts another thread.
  running_.store(false);
}

bool OptimizerHooks::try_register() {
  const PythonApi& py = python();
  // A thread that asks for the GIL while Python finalizes is ended or
  // parked by CPython: never ask then.
  if (!py.is_initialized() || (py.is_finalizing && py.is_finalizing())) return false;
  // An optimizer step iterating over the hooks' dicts right now (on any
  // thread) must not see them change: try again later. Asked first without
  // the GIL, so that a step in progress costs the job nothing.
  if (!callbacks_.no_step_open()) return false;
  const int gil = py.gil_ensure();
  // Compiled once, kept for the life of the process, with the globals the
  // hook functions are made in (they are made once). One object each for
  // the builtins.
  static void* code = py.compile(kFind, "<chakrashim optimizer hooks>", PythonApi::kFileInput);
  static void* pre = py.cfunction_new(&g_pre_def, nullptr, nullptr);
  static void* post = py.cfunction_new(&g_post_def, nullptr, nullptr);
  static void* globals = [&]() -> void* {
    void* g = (code && pre && post) ? py.dict_new() : nullptr;
    if (g && (py.dict_set(g, "_pre", pre) != 0 || py.dict_set(g, "_post", post) != 0)) {
      py.dec_ref(g);
      g = nullptr;
    }
    return g;
  }();
  bool done = false;
  if (globals) {
    if (void* r = py.eval_code(code, globals, globals)) {
      py.dec_ref(r);
      void* ok = py.dict_get(globals, "ok");  // borrowed, as the rest
      // Checked again, since the code above may have let another thread
      // run. From here to the insert no bytecode runs, so this thread keeps
      // the GIL, which the dicts are iterated under, only inside an open
      // step: a step that opens from now on reaches its hooks after ours
      // are in.
      if (ok && py.is_true(ok) == 1 && callbacks_.no_step_open()) {
        bool in = true;
        for (auto [dict, key, name] : {std::tuple{"_post_hooks", "_post_key", "_post_fn"},
                                       std::tuple{"_pre_hooks", "_pre_key", "_pre_fn"}}) {
          void* d = py.dict_get(globals, dict);
          void* k = py.dict_get(globals, key);
          void* fn = py.dict_get(globals, name);
          if (!d || !k || !fn) {
            in = false;
          } else if (k != py.none && py.set_item(d, k, fn) != 0) {
            in = false;
          }
        }
        if (in) {
          void* code = py.dict_get(globals, "_wrapper_code");  // borrowed
          if (code && code != py.none && !g_wrapper_code) {
            py.inc_ref(code);  // kept for the life of the process
            g_wrapper_code = code;
          }
          active_.store(true, std::memory_order_release);
          // Still under the GIL, so that no thread runs a step's Python
          // between the insert and the switch of counters. (A marker whose
          // record starts in these few microseconds on a thread that
          // released the GIL inside that op would be counted by both.)
          callbacks_.registered();
          done = true;
        }
      }
    }
  }
  // On our own thread an error is ours (signal handlers run on the main
  // thread only): cleared.
  if (py.err_occurred()) py.err_clear();
  py.gil_release(gil);
  return done;
}

}  // namespace chakrashim::bridge
