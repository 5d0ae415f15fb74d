#include "bridge/module_scopes.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/record_function.h>

#include "bridge/bridge_log.h"
#include "bridge/python_api.h"

namespace chakrashim::bridge {

namespace {

// Set once at attach, before the hooks can be in; read per module call.
bool (*g_keeping)() = nullptr;

// Bumped at each install (under the GIL): scopes a thread opened before it
// are stale (their module returned while the hooks were out) and are
// dropped, never ended into the new window.
std::uint64_t g_generation = 0;

// Scopes with a record, open on any thread: while there are some, the post
// hook stays in after the window (module_scopes.h). Atomic: a thread's
// thread_local destructor (exit) drops its scopes without the GIL.
std::atomic<std::uint64_t> g_open_records{0};

// Module calls deeper than this on one thread are not named (a recursion
// gone wild must not grow our stack without bound).
constexpr std::size_t kMaxDepth = 1024;

// The scopes open on this thread: module calls whose pre hook ran and
// whose post hook has not.
struct OpenScopes {
  struct Open {
    const void* module;  // identity only: never dereferenced
    std::unique_ptr<at::RecordFunction> rf;  // null: the window kept nothing then
  };
  std::vector<Open> stack;
  std::uint64_t generation = 0;

  // Stale or left open at thread exit: released, not ended. Ending a
  // record runs torch's and our end callbacks, which must not run into a
  // later window nor while this thread's other thread_locals are being
  // destroyed. A leak of a few hundred bytes, only in those two cases.
  void drop_all() {
    for (Open& o : stack)
      if (o.rf) {
        (void)o.rf.release();
        g_open_records.fetch_sub(1, std::memory_order_relaxed);
      }
    stack.clear();
  }
  // Ends the innermost scope (its record's end callbacks run now).
  void pop() {
    if (stack.back().rf) g_open_records.fetch_sub(1, std::memory_order_relaxed);
    stack.pop_back();
  }
  void sync_generation() {
    if (generation == g_generation) return;
    drop_all();
    generation = g_generation;
  }
  ~OpenScopes() { drop_all(); }
};
thread_local OpenScopes t_scopes;

void* none() {
  const PythonApi& py = python();
  py.inc_ref(py.none);
  return py.none;
}

// _open(module, name): a module call begins. Never raises into the job's
// forward: every failure is swallowed.
void* open_scope(void*, void* args) {
  const PythonApi& py = python();
  try {
    if (py.tuple_size(args) < 2) return none();
    void* module = py.tuple_get_item(args, 0);
    const char* name = py.as_utf8(py.tuple_get_item(args, 1));
    if (!module || !name) {
      py.err_clear();
      return none();
    }
    OpenScopes& t = t_scopes;
    t.sync_generation();
    if (t.stack.size() >= kMaxDepth) return none();
    std::unique_ptr<at::RecordFunction> rf;
    if (g_keeping && g_keeping()) {
      rf = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
      if (rf->isActive()) rf->before(std::string("nn.Module: ") + name);
      else rf.reset();
    }
    if (rf) g_open_records.fetch_add(1, std::memory_order_relaxed);
    t.stack.push_back({module, std::move(rf)});
  } catch (...) {
  }
  return none();
}

// _close(module): its call returned (or raised). Closes it and any scope
// opened inside it that is still open (a callee that raised, in a torch
// that does not call hooks on exceptions).
void* close_scope(void*, void* args) {
  const PythonApi& py = python();
  try {
    if (py.tuple_size(args) < 1) return none();
    const void* module = py.tuple_get_item(args, 0);
    OpenScopes& t = t_scopes;
    t.sync_generation();
    for (std::size_t i = t.stack.size(); i-- > 0;) {
      if (t.stack[i].module != module) continue;
      while (t.stack.size() > i) t.pop();  // innermost first: each ends its record
      break;
    }
  } catch (...) {
  }
  return none();
}

// _at_root(): no module call is open on this thread (the one beginning is
// a root: its named_modules() name the rest).
void* at_root(void*, void*) {
  const PythonApi& py = python();
  OpenScopes& t = t_scopes;
  t.sync_generation();
  return py.bool_from_long(t.stack.empty() ? 1 : 0);
}

PythonApi::MethodDef g_open_def{"chakrashim_module_open", &open_scope, PythonApi::kVarArgs,
                                "chakrashim: a module call begins"};
PythonApi::MethodDef g_close_def{"chakrashim_module_close", &close_scope, PythonApi::kVarArgs,
                                 "chakrashim: a module call ends"};
PythonApi::MethodDef g_root_def{"chakrashim_module_at_root", &at_root, PythonApi::kVarArgs,
                                "chakrashim: no module call is open on this thread"};

// Run at each install, in one globals dict kept for the process (so the
// name cache lives on from window to window). Finds torch's dicts and the
// keys that torch's register_module_forward_*_hook would give ours, or says
// why not in `why`. Never imports anything. _pre and _post raise nothing of
// their own into the job's forward.
constexpr const char* kSetup = R"PY(
import sys as _sys
ok = False
why = None
_true = True
_m = _sys.modules.get("torch.nn.modules.module")
_h = getattr(_sys.modules.get("torch.utils.hooks"), "RemovableHandle", None)
_pre_d = getattr(_m, "_global_forward_pre_hooks", None)
_post_d = getattr(_m, "_global_forward_hooks", None)
_always_d = getattr(_m, "_global_forward_hooks_always_called", None)
if not isinstance(_always_d, dict):
    _always_d = None
_du = _sys.modules.get("torch._dynamo.utils")
_frames = getattr(_du, "counters", {}).get("frames") if _du is not None else None
if _frames and sum(_frames.values()) > 0:
    why = ("CHAKRA_MODULE_SCOPES is ignored: this job runs torch.compile'd code, which would be "
           "compiled again for module hooks; the trace has no module names")
elif _h is None or not isinstance(_pre_d, dict) or not isinstance(_post_d, dict):
    why = ("CHAKRA_MODULE_SCOPES is ignored: this torch has no global module forward hooks; "
           "the trace has no module names")
else:
    if "_pre" not in globals():
        import weakref as _weakref
        _names = _weakref.WeakKeyDictionary()

        # A module's first call: its name, and at a root its submodules'.
        # named_modules() of a job's own class may raise: never into the
        # job's forward.
        def _name_first(m, _names=_names, _at_root=_at_root):
            n = type(m).__name__
            try:
                if _at_root():
                    for path, sub in m.named_modules():
                        _names[sub] = n + "." + path if path else n
                    return _names.get(m, n)
                _names[m] = n
            except Exception:
                pass
            return n

        # Every other call: no try. _open and _close are builtins that never
        # raise, and the cache's get raises nothing for a module: so an
        # exception that a signal handler of the job's raises here reaches
        # the job, as from torch's own _call_impl.
        def _pre(m, *_a, _get=_names.get, _name_first=_name_first, _open=_open):
            n = _get(m)
            _open(m, n if n is not None else _name_first(m))

        def _post(m, *_a, _close=_close):
            _close(m)
    _pre_key = _h(_pre_d).id
    _post_key = _h(_post_d).id
    ok = True
)PY";

void* owned(void* o) {
  python().inc_ref(o);
  return o;
}

}  // namespace

void ModuleScopes::set_keeping(bool (*keeping)()) { g_keeping = keeping; }

void ModuleScopes::sync(bool want) {
  if (installing_) return;
  if (!want) {
    if (installed_) {
      remove_pre();
      post_lingers_ = true;
      lingered_steps_ = 0;
    }
    // Out once no scope is open, or after kMaxLingerSteps step ends
    // whatever: a thread that never leaves its module (blocked for good)
    // must not keep every module call on the slow path outside the window.
    // Its scope is then dropped as a stale one.
    if (post_lingers_ &&
        (g_open_records.load(std::memory_order_relaxed) == 0 || ++lingered_steps_ > kMaxLingerSteps))
      remove_post();
    return;
  }
  if (installed_ || refused_) return;
  // Still in from the last window: out first, so that install() starts
  // from torch's dicts as they are (a scope left open since is stale, and
  // dropped by the new generation).
  if (post_lingers_) remove_post();
  installing_ = true;
  if (!install()) refused_ = true;
  installing_ = false;
}

bool ModuleScopes::install() {
  const PythonApi& py = python();
  if (!py.usable() || !py.tuple_size || !py.tuple_get_item || !py.del_item || !py.bool_from_long) {
    log_info("CHAKRA_MODULE_SCOPES is ignored: this Python lacks a C-API function it needs");
    return false;
  }
  // Made once, kept for the life of the process.
  static void* code = py.compile(kSetup, "<chakrashim module scopes>", PythonApi::kFileInput);
  static void* globals = [&]() -> void* {
    void* g = py.dict_new();
    void* open = py.cfunction_new(&g_open_def, nullptr, nullptr);
    void* close = py.cfunction_new(&g_close_def, nullptr, nullptr);
    void* root = py.cfunction_new(&g_root_def, nullptr, nullptr);
    const bool ok = g && open && close && root && py.dict_set(g, "_open", open) == 0 &&
                    py.dict_set(g, "_close", close) == 0 && py.dict_set(g, "_at_root", root) == 0;
    for (void* f : {open, close, root})
      if (f) py.dec_ref(f);  // the dict holds them
    return ok ? g : nullptr;
  }();
  bool in = false;
  if (code && globals) {
    if (void* r = py.eval_code(code, globals, globals)) {
      py.dec_ref(r);
      void* ok = py.dict_get(globals, "ok");  // borrowed, as the rest
      if (ok && py.is_true(ok) == 1) {
        void* pre_d = py.dict_get(globals, "_pre_d");
        void* post_d = py.dict_get(globals, "_post_d");
        void* always_d = py.dict_get(globals, "_always_d");
        void* pre_key = py.dict_get(globals, "_pre_key");
        void* post_key = py.dict_get(globals, "_post_key");
        void* pre = py.dict_get(globals, "_pre");
        void* post = py.dict_get(globals, "_post");
        void* yes = py.dict_get(globals, "_true");
        if (always_d == py.none) always_d = nullptr;
        // From the first insert to the last no bytecode runs: no other
        // thread sees the dicts half filled.
        if (pre_d && post_d && pre_key && post_key && pre && post && yes &&
            (!always_d || py.set_item(always_d, post_key, yes) == 0) &&
            py.set_item(post_d, post_key, post) == 0 && py.set_item(pre_d, pre_key, pre) == 0) {
          pre_dict_ = owned(pre_d);
          post_dict_ = owned(post_d);
          always_dict_ = always_d ? owned(always_d) : nullptr;
          pre_key_ = owned(pre_key);
          post_key_ = owned(post_key);
          ++g_generation;
          installed_ = true;
          in = true;
        } else if (pre_d && post_d && pre_key && post_key) {
          // Half in: taken out again.
          for (void* d : {pre_d, post_d, always_d}) {
            py.err_clear();
            if (d) (void)py.del_item(d, d == pre_d ? pre_key : post_key);
          }
          py.err_clear();
          log_info("CHAKRA_MODULE_SCOPES is ignored: torch's module hook dicts refused our hooks");
        }
      } else if (void* why = py.dict_get(globals, "why"); why && why != py.none) {
        if (const char* text = py.as_utf8(why)) log_info(text);
      }
    }
  }
  // An error here is ours, never the job's: cleared.
  if (py.err_occurred()) py.err_clear();
  if (in) log_debug("module scopes: torch.nn.Module calls are named until the window ends");
  return in;
}

// Each may be gone already (the job cleared torch's dicts): not an error,
// and cleared after each so that the next starts clean.
void ModuleScopes::remove_pre() {
  const PythonApi& py = python();
  (void)py.del_item(pre_dict_, pre_key_);
  if (py.err_occurred()) py.err_clear();
  installed_ = false;
}

void ModuleScopes::remove_post() {
  const PythonApi& py = python();
  (void)py.del_item(post_dict_, post_key_);
  if (py.err_occurred()) py.err_clear();
  if (always_dict_) (void)py.del_item(always_dict_, post_key_);
  if (py.err_occurred()) py.err_clear();
  for (void** o : {&pre_dict_, &post_dict_, &always_dict_, &pre_key_, &post_key_}) {
    if (*o) py.dec_ref(*o);
    *o = nullptr;
  }
  post_lingers_ = false;
}

}  // namespace chakrashim::bridge
