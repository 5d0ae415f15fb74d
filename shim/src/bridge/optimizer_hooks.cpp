#include "bridge/optimizer_hooks.h"

#include <chrono>
#include <thread>

#include "bridge/bridge_log.h"
#include "bridge/python_api.h"

namespace chakrashim::bridge {

namespace {

// Nesting of optimizer steps on this thread: the outermost one counts.
thread_local int t_depth = 0;

// The one instance the builtins reach (their self is unused).
OptimizerHooks* g_hooks = nullptr;

constexpr std::chrono::milliseconds kTimerPeriod{250};
constexpr int kTimerTries = 240;  // 60 s

// Registers our two builtins as torch.optim's global step hooks, the post
// hook first (alone, it still counts steps), each only if not already
// there (a try cut short by the job's signal handler is tried again).
// Never imports anything: without a torch.optim already imported, `ok`
// stays False and we try later.
constexpr const char* kRegister = R"PY(
import sys as _sys
ok = False
_o = _sys.modules.get("torch.optim.optimizer")
if (_o is not None and hasattr(_o, "register_optimizer_step_post_hook")
        and hasattr(_o, "register_optimizer_step_pre_hook")):
    if _post not in getattr(_o, "_global_optimizer_post_hooks", {}).values():
        _o.register_optimizer_step_post_hook(_post)
    if _pre not in getattr(_o, "_global_optimizer_pre_hooks", {}).values():
        _o.register_optimizer_step_pre_hook(_pre)
    ok = True
)PY";

PythonApi::MethodDef g_pre_def{"chakrashim_optimizer_pre_hook", nullptr, PythonApi::kVarArgs,
                               "chakrashim: counts optimizer steps"};
PythonApi::MethodDef g_post_def{"chakrashim_optimizer_post_hook", nullptr, PythonApi::kVarArgs,
                                "chakrashim: counts optimizer steps"};

}  // namespace

void* OptimizerHooks::pre_hook(void*, void*) {
  ++t_depth;
  const PythonApi& py = python();
  py.inc_ref(py.none);
  return py.none;
}

void* OptimizerHooks::post_hook(void*, void*) {
  if (t_depth > 0) --t_depth;
  if (t_depth == 0 && g_hooks && g_hooks->callbacks_.step_ended) g_hooks->callbacks_.step_ended();
  const PythonApi& py = python();
  py.inc_ref(py.none);
  return py.none;
}

void OptimizerHooks::start(Callbacks callbacks) {
  if (started_.exchange(true)) return;
  if (!python().usable()) {
    log_debug("no usable Python API: steps stay counted by the RecordFunction callback");
    return;
  }
  callbacks_ = std::move(callbacks);
  g_hooks = this;
  g_pre_def.meth = &OptimizerHooks::pre_hook;
  g_post_def.meth = &OptimizerHooks::post_hook;
  try {
    // Detached and short-lived: it ends once the hooks are in, after 60 s,
    // or when the process is a forked child or exiting.
    std::thread([this] { timer(); }).detach();
  } catch (...) {
  }
}

void OptimizerHooks::timer() {
  for (int i = 0; i < kTimerTries; ++i) {
    std::this_thread::sleep_for(kTimerPeriod);
    if (active() || callbacks_.give_up()) return;
    try_again();
  }
}

void OptimizerHooks::try_again() {
  if (!g_hooks || active() || scheduled_.exchange(true)) return;
  if (python().add_pending_call(&OptimizerHooks::pending_call, this) != 0) scheduled_.store(false);
}

int OptimizerHooks::pending_call(void* self) {
  // Python's main thread, between bytecodes, with the GIL.
  auto* hooks = static_cast<OptimizerHooks*>(self);
  hooks->scheduled_.store(false);
  if (hooks->active() || hooks->callbacks_.give_up()) return 0;
  // An optimizer step iterating over the hooks' dicts right now (on any
  // thread) must not see them change: wait for the next step end.
  if (!hooks->callbacks_.no_step_open()) return 0;
  const PythonApi& py = python();
  static void* code = py.compile(kRegister, "<chakrashim optimizer hooks>", PythonApi::kFileInput);
  if (!code) {
    py.err_clear();  // our own code failed to compile: not the job's
    return 0;
  }
  // One object each for the life of the process (what torch's dicts hold).
  static void* pre = py.cfunction_new(&g_pre_def, nullptr, nullptr);
  static void* post = py.cfunction_new(&g_post_def, nullptr, nullptr);
  void* globals = py.dict_new();
  int status = 0;
  if (globals && pre && post && py.dict_set(globals, "_pre", pre) == 0 &&
      py.dict_set(globals, "_post", post) == 0) {
    if (void* r = py.eval_code(code, globals, globals)) {
      py.dec_ref(r);
      void* ok = py.dict_get(globals, "ok");  // borrowed
      if (ok && py.is_true(ok) == 1) {
        hooks->active_.store(true, std::memory_order_release);
        hooks->callbacks_.registered();
      }
    } else {
      // Only the job's own signal handler can raise in these few lines
      // (pending calls run on the main thread): its exception goes on into
      // the job, exactly where it would have surfaced.
      status = -1;
    }
  } else if (py.err_occurred()) {
    py.err_clear();
  }
  if (globals) py.dec_ref(globals);
  return status;
}

}  // namespace chakrashim::bridge
