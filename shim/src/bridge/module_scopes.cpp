#include "bridge/module_scopes.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>


#include <ATen/record_function.h>

#include "bridge/bridge_log.h"
#include "bridge/python_api.h"
#include "bridge/python_frames.h"

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
// whose post hook has not. A call that an exception ended (in its forward,
// or a signal handler's in our pre hook) never runs our post hook: torch
// calls it only for hooks registered "always_call", and then inside a
// try that would silence an exception the job's signal handler raised in
// it (issue #48). Its scope is closed instead once its frame is no longer
// an ancestor of the running code: at the next module call on the thread,
// or at the step's end (close_stale).
struct OpenScopes {
  struct Open {
    const void* module;  // identity only: never dereferenced
    const void* frame;   // torch's _call_impl frame that called our pre hook
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
  // Ends the scopes, innermost first, whose call no longer runs: their
  // frame is no ancestor of `frame`, where the code now runs. A scope
  // without a frame (a Python without the API) is left to its post hook.
  void close_stale(const void* frame) {
    while (!stack.empty() && stack.back().frame && frame && !is_ancestor(stack.back().frame, frame)) pop();
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
    // Torch's _call_impl: it called our _pre, which called this builtin.
    const void* frame = frame_above(1);
    t.close_stale(frame);
    if (t.stack.size() >= kMaxDepth) return none();
    std::unique_ptr<at::RecordFunction> rf;
    if (g_keeping && g_keeping()) {
      rf = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
      if (rf->isActive()) rf->before(std::string("nn.Module: ") + name);
      else rf.reset();
    }
    if (rf) g_open_records.fetch_add(1, std::memory_order_relaxed);
    t.stack.push_back({module, frame, std::move(rf)});
  } catch (...) {
  }
  return none();
}

// _close(module): its call returned. Closes it and any scope opened inside
// it that is still open (a callee that raised).
void* close_scope(void*, void* args) {
  const PythonApi& py = python();
  try {
    if (py.tuple_size(args) < 1) return none();
    const void* module = py.tuple_get_item(args, 0);
    const void* frame = frame_above(1);  // torch's _call_impl, as at _open
    OpenScopes& t = t_scopes;
    t.sync_generation();
    for (std::size_t i = t.stack.size(); i-- > 0;) {
      if (t.stack[i].module != module || (frame && t.stack[i].frame && t.stack[i].frame != frame)) continue;
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
  // Called by _name_first, called by _pre, called by torch's _call_impl.
  t.close_stale(frame_above(2));
  return py.bool_from_long(t.stack.empty() ? 1 : 0);
}

PythonApi::MethodDef g_open_def{"chakrashim_module_open", &open_scope, PythonApi::kVarArgs,
                                "chakrashim: a module call begins"};
PythonApi::MethodDef g_close_def{"chakrashim_module_close", &close_scope, PythonApi::kVarArgs,
                                 "chakrashim: a module call ends"};
PythonApi::MethodDef g_root_def{"chakrashim_module_at_root", &at_root, PythonApi::kVarArgs,
                                "chakrashim: no module call is open on this thread"};

// Run once, on a thread of ours with the GIL (prepare): makes our two hook
// functions and finds torch's dicts and the keys that torch's
// register_module_forward_*_hook would give them, or says why not in `why`.
// Never imports anything (every module named here is imported by torch).
//
// What the hooks must never do (issue #48):
// - be traced by Dynamo: a module that torch.compile inlines runs its
//   global hooks inside the trace. Under torch.compiler.is_compiling() they
//   return at once, which Dynamo folds away (no graph break, nothing in the
//   graph, fine under fullgraph=True); __builtins__ is set because Dynamo
//   reads it from a traced function's globals;
// - raise, nor catch: a module is looked up by id() (a module may be
//   unhashable: __eq__ without __hash__), with a weak reference that tells
//   a dead module's reused id apart; a root names its submodules by walking
//   their _modules dicts, not by calling named_modules() (a job's class may
//   override it, or be unhashable, which its memo set needs). With no try
//   anywhere, an exception that the job's signal handler raises in a hook
//   reaches the job, as from torch's own _call_impl.
constexpr const char* kPrepare = R"PY(
import sys as _sys
__builtins__ = _sys.modules["builtins"]
ok = False
why = None
_m = _sys.modules.get("torch.nn.modules.module")
_h = getattr(_sys.modules.get("torch.utils.hooks"), "RemovableHandle", None)
_pre_d = getattr(_m, "_global_forward_pre_hooks", None)
_post_d = getattr(_m, "_global_forward_hooks", None)
_compiling = getattr(_sys.modules.get("torch.compiler"), "is_compiling", None)
_weakref = _sys.modules.get("weakref")
if (_h is None or not isinstance(_pre_d, dict) or not isinstance(_post_d, dict)
        or not callable(_compiling) or _weakref is None):
    why = ("CHAKRA_MODULE_SCOPES is ignored: this torch has no global module forward hooks "
           "(or no torch.compiler.is_compiling); the trace has no module names")
else:
    _modules = _sys.modules
    # id(module) -> (name, weak reference): a module that died leaves its
    # entry, found stale by its reference and pruned when they pile up.
    _names = {}
    _cap = [4096]

    def _remember(mod, path, _names=_names, _ref=_weakref.ref, _id=id):
        if type(mod).__weakrefoffset__:
            _names[_id(mod)] = (path, _ref(mod))

    def _prune(_names=_names, _cap=_cap):
        for k, e in list(_names.items()):
            if e[1]() is None:
                del _names[k]
        _cap[0] = max(4096, 2 * len(_names))

    # A module's first call: its name; at a root, its submodules' too, in
    # named_modules()'s order (preorder, a shared module named where it is
    # first reached).
    # The dict types of a module's _modules: a dict, or an OrderedDict
    # before torch 2.5 (a module of torch 2.4 named only its root, and each
    # submodule by its class). Only these: their items() are C's, never a
    # job's mapping's own code.
    _subs_types = (dict, getattr(_sys.modules.get("collections"), "OrderedDict", dict))

    def _name_first(m, _at_root=_at_root, _remember=_remember, _prune=_prune, _names=_names,
                    _cap=_cap, _id=id, _vars=vars, _type=type, _subs_types=_subs_types):
        n = type(m).__name__
        if not _at_root():
            _remember(m, n)
            return n
        seen = set()
        stack = [(m, n)]
        while stack:
            mod, path = stack.pop()
            k = _id(mod)
            if k in seen:
                continue
            seen.add(k)
            _remember(mod, path)
            subs = _vars(mod).get("_modules")
            if _type(subs) in _subs_types:
                for name, sub in reversed(subs.items()):
                    if sub is not None:
                        stack.append((sub, path + "." + name))
        if len(_names) > _cap[0]:
            _prune()
        return n

    def _pre(m, *_a, _c=_compiling, _get=_names.get, _id=id, _name_first=_name_first, _open=_open):
        if _c():
            return
        e = _get(_id(m))
        _open(m, e[0] if e is not None and e[1]() is m else _name_first(m))

    def _post(m, *_a, _c=_compiling, _close=_close):
        if _c():
            return
        _close(m)

    _pre_key = _h(_pre_d).id
    _post_key = _h(_post_d).id
    ok = True

    # torch.compile(module)'s wrapper warns whenever a global module hook is
    # in (torch/_dynamo/eval_frame.py, OptimizedModule.__call__): because of
    # ours, a job would see that warning, or die of it under -W error. While
    # our hooks are in, a filter for that one message goes first in the
    # warnings filters (inserted and removed from C: _warnings's
    # _filters_mutated is a builtin, where the C accelerator is there).
    _warnings = _sys.modules.get("warnings")
    _re = _sys.modules.get("re")
    _filters = getattr(_warnings, "filters", None)
    _filters_mutated = getattr(_warnings, "_filters_mutated", None)
    _ignore = None
    if (type(_filters) is list and _re is not None
            and type(_filters_mutated).__name__ == "builtin_function_or_method"):
        _ignore = ("ignore", _re.compile(r"Using `torch\.compile\(module\)` when there are global hooks on modules"),
                   Warning, None, 0)
)PY";

void* owned(void* o) {
  python().inc_ref(o);
  return o;
}

// What torch._dynamo compiled so far (its counters: frames.total, and
// stats.unique_graphs, which fullgraph=True compiles count alone), read from
// C without running any bytecode (the stepping thread must not: issue #48):
// 0 where Dynamo never ran or cannot be read.
long compiled_frames(void* sys_modules) {
  const PythonApi& py = python();
  if (!sys_modules || !py.long_as_long) return 0;
  void* counters = module_attribute(sys_modules, "torch._dynamo.utils", "counters");
  long n = 0;
  for (auto [group, key] : {std::pair{"frames", "total"}, std::pair{"stats", "unique_graphs"}}) {
    void* counter = counters ? py.dict_get(counters, group) : nullptr;
    void* value = counter ? py.dict_get(counter, key) : nullptr;
    if (value) n = std::max(n, py.long_as_long(value));
  }
  if (py.err_occurred()) py.err_clear();  // ours: no bytecode ran
  return n > 0 ? n : 0;
}

}  // namespace

void ModuleScopes::set_keeping(bool (*keeping)()) { g_keeping = keeping; }

void ModuleScopes::prepare() {
  const PythonApi& py = python();
  if (prepared_.load(std::memory_order_acquire) || prepare_tried_) return;
  prepare_tried_ = true;
  if (!py.usable() || !py.tuple_size || !py.tuple_get_item || !py.del_item || !py.bool_from_long ||
      !py.module_get_dict || !py.long_as_long) {
    refuse("CHAKRA_MODULE_SCOPES is ignored: this Python lacks a C-API function it needs");
    return;
  }
  // Kept for the life of the process, as the functions made in it.
  void* code = py.compile(kPrepare, "<chakrashim module scopes>", PythonApi::kFileInput);
  void* globals = py.dict_new();
  void* open = py.cfunction_new(&g_open_def, nullptr, nullptr);
  void* close = py.cfunction_new(&g_close_def, nullptr, nullptr);
  void* root = py.cfunction_new(&g_root_def, nullptr, nullptr);
  const bool made = code && globals && open && close && root && py.dict_set(globals, "_open", open) == 0 &&
                    py.dict_set(globals, "_close", close) == 0 && py.dict_set(globals, "_at_root", root) == 0;
  for (void* f : {open, close, root})
    if (f) py.dec_ref(f);  // the dict holds them
  void* r = made ? py.eval_code(code, globals, globals) : nullptr;
  if (r) py.dec_ref(r);
  void* ok = r ? py.dict_get(globals, "ok") : nullptr;  // borrowed, as the rest
  if (ok && py.is_true(ok) == 1) {
    pre_dict_ = owned(py.dict_get(globals, "_pre_d"));
    post_dict_ = owned(py.dict_get(globals, "_post_d"));
    pre_key_ = owned(py.dict_get(globals, "_pre_key"));
    post_key_ = owned(py.dict_get(globals, "_post_key"));
    pre_ = owned(py.dict_get(globals, "_pre"));
    post_ = owned(py.dict_get(globals, "_post"));
    sys_modules_ = owned(py.dict_get(globals, "_modules"));
    if (void* ignore = py.dict_get(globals, "_ignore"); ignore && ignore != py.none && py.list_insert &&
        py.list_size && py.list_get_item && py.sequence_del_item && py.call_object) {
      warning_filter_ = owned(ignore);
      warning_filters_ = owned(py.dict_get(globals, "_filters"));
      filters_mutated_ = owned(py.dict_get(globals, "_filters_mutated"));
    }
    prepared_.store(true, std::memory_order_release);
  } else if (void* why = ok ? py.dict_get(globals, "why") : nullptr; why && why != py.none && py.as_utf8(why)) {
    refuse(py.as_utf8(why));
  } else {
    refuse("CHAKRA_MODULE_SCOPES is ignored: its hooks could not be made in this Python; the trace has "
           "no module names");
  }
  // On our own thread an error is ours (signal handlers run on the main
  // thread only): cleared.
  if (py.err_occurred()) py.err_clear();
}

void ModuleScopes::refuse(const std::string& why) {
  if (refused_.exchange(true)) return;
  log_warn(why);
}

void ModuleScopes::sync(bool want) {
  const PythonApi& py = python();
  // No error of the job's is ever cleared here: none can be pending at the
  // start of a builtin, and nothing below runs bytecode, so a signal
  // handler of the job's cannot run (and raise) in between. Should one be
  // pending anyway, nothing is done at this step.
  if (!py.err_occurred || py.err_occurred()) return;
  if (installed_ || post_lingers_) {
    // Module calls of this thread that an exception ended, closed before
    // the step ends (they would be closed at its next module call). A
    // module still running (the optimizer stepped inside a forward) is an
    // ancestor of this hook's caller, and stays open.
    OpenScopes& t = t_scopes;
    t.sync_generation();
    t.close_stale(frame_above(0));
  }
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
  if (installed_ || refused_.load()) return;
  // Not made yet (the registrar thread makes them right after torch.optim's
  // hooks are in): this window's first steps go unnamed.
  if (!prepared_.load(std::memory_order_acquire)) return;
  // Still in from the last window: out first, so that the insert starts
  // from torch's dicts as they are (a scope left open since is stale, and
  // dropped by the new generation).
  if (post_lingers_) remove_post();
  install();
}

void ModuleScopes::install() {
  const PythonApi& py = python();
  // Dynamo guards each compiled frame on the global hook dicts' sizes: our
  // insert would have every compiled graph compiled again inside the window.
  if (compiled_frames(sys_modules_) > 0) {
    refuse("CHAKRA_MODULE_SCOPES is ignored: this job runs torch.compile'd code, which would be compiled "
           "again for module hooks; the trace has no module names");
    return;
  }
  // From the first insert to the last no bytecode runs (PyObject_SetItem on
  // torch's dicts and int keys): no other thread sees the dicts half filled.
  if (py.set_item(post_dict_, post_key_, post_) == 0 && py.set_item(pre_dict_, pre_key_, pre_) == 0) {
    ++g_generation;
    installed_ = true;
    filter_warning(true);
    log_debug("module scopes: torch.nn.Module calls are named until the window ends");
    return;
  }
  // Half in (torch's dicts refused an item): taken out again. The error is
  // ours.
  for (void* d : {pre_dict_, post_dict_}) {
    py.err_clear();
    (void)py.del_item(d, d == pre_dict_ ? pre_key_ : post_key_);
  }
  py.err_clear();
  refuse("CHAKRA_MODULE_SCOPES is ignored: torch's module hook dicts refused our hooks");
}

// Our filter first in warnings.filters (in) or out of it, wherever the job
// moved it; no bytecode runs (list operations and a builtin). Errors are
// ours, cleared.
void ModuleScopes::filter_warning(bool in) {
  const PythonApi& py = python();
  if (!warning_filter_) return;
  bool changed = false;
  if (in) {
    changed = py.list_insert(warning_filters_, 0, warning_filter_) == 0;
  } else {
    for (long i = py.list_size(warning_filters_); i-- > 0;)
      if (py.list_get_item(warning_filters_, i) == warning_filter_ &&
          py.sequence_del_item(warning_filters_, i) == 0)
        changed = true;
  }
  if (changed) {
    if (void* r = py.call_object(filters_mutated_, nullptr)) py.dec_ref(r);
  }
  if (py.err_occurred()) py.err_clear();
}

// Each may be gone already (the job cleared torch's dicts): not an error
// (ours, cleared: no bytecode ran).
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
  post_lingers_ = false;
  filter_warning(false);
  // A first torch.compile inside the window traced the module calls with
  // our hooks in (as nothing: they return at once under Dynamo) and guards
  // on their presence: its graphs are compiled once more now, outside the
  // window, and later windows refuse (install). Said once.
  if (compiled_frames(sys_modules_) > 0 && !refused_.load()) {
    refuse("torch.compile first ran inside this window with CHAKRA_MODULE_SCOPES: Dynamo compiles those "
           "graphs once more now that the module hooks are out (outside the window), and module scopes "
           "are off for the job's later windows");
  }
}

}  // namespace chakrashim::bridge
