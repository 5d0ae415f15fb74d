// Module names in the trace (CHAKRA_MODULE_SCOPES=1, off by default; issue
// #37): inside the window every torch.nn.Module call is a record_function
// scope "nn.Module: Net.encoder.layers.0.self_attn" (the root module's
// class name, then the path that named_modules() gives), the prefix torch's
// own profiler gives modules, so that `report` can put op time on modules
// and HTA and Perfetto show them.
//
// How. torch names no module unless its profiler's Python tracer runs; the
// one way in from outside is a pair of global forward hooks
// (torch.nn.modules.module's _global_forward_pre_hooks / _global_forward_hooks,
// the dicts register_module_forward_*_hook fills). Two small Python
// functions of ours find a module's name (cached per module, weakly) and
// call two builtins of ours that open and close an at::RecordFunction of
// USER_SCOPE on the calling thread: both recorders and the device trace's
// spans see it as any record_function.
//
// Only inside the window. Any global forward hook makes every module call
// take nn.Module's slow path, so the hooks are in only from the optimizer
// step that arms the window to the one that ends it: inserted and removed
// in the optimizer post hook (optimizer_hooks.h), on the stepping thread,
// with the GIL held and no bytecode in between (a module call on another
// thread copies the dicts' items in one bytecode). A window ended early (a
// signal, the memory cap, on demand's end) has them removed at the next
// step end: one step of the slow path, recording nothing.
//
// A module call still open when the window ends (another thread inside a
// module, the optimizer stepped inside a forward) ends its record as any op
// that straddles the window's end does: the post hook stays in, the pre
// hook alone goes, until no scope of ours is open, checked at each step
// end (at most two: a thread blocked in a module for good has its scope
// dropped, as a stale one). Ended otherwise, the record's end callbacks would never run: its
// CUPTI correlation id would stay pushed on that thread, and its ET node
// would never be written under its children.
//
// Refused, with one line (a warning: the user asked for module names):
// jobs that ran torch.compile'd code before the window (Dynamo guards each
// compiled frame on the hook dicts' sizes: every graph would be compiled
// again inside the window), and jobs whose steps torch.optim's hooks do not
// count (a custom CHAKRA_STEP_MARKER: no Python of ours runs at a step
// boundary). A first torch.compile inside the window is fine: the hooks
// return at once under Dynamo (module_scopes.cpp), so nothing of ours is
// traced; its graphs are compiled once more after the window, and later
// windows refuse, said once.
//
// Threads (issue #48): no Python code of ours runs on the job's threads
// but the two hooks themselves, which catch nothing. The hook functions are
// made once, with the GIL, on the thread of ours that registers torch.optim's
// hooks (prepare); inserting and removing them at a step boundary (sync)
// runs no bytecode, so a signal handler of the job's cannot raise in the
// middle of it, and no error of the job's is ever cleared. Everything here
// runs with the GIL held (the GIL is its lock, prepared_ publishes what
// prepare made); the open scopes are per thread (thread-local).
#pragma once

#include <atomic>
#include <string>

namespace chakrashim::bridge {

class ModuleScopes {
 public:
  // `keeping`: whether the window keeps records now (read per module call).
  static void set_keeping(bool (*keeping)());

  // On a thread of ours, with the GIL: makes the hook functions and finds
  // torch's dicts (runs Python). Once; refuses with one line where it
  // cannot.
  void prepare();

  // In an optimizer post hook (the GIL held, the stepping thread): `want`
  // says whether the next step's module calls are to be named. Inserts or
  // removes the hooks without running bytecode; refuses once, with one
  // line, where it cannot.
  void sync(bool want);
  bool installed() const { return installed_; }

 private:
  void install();
  void remove_pre();
  void remove_post();
  void refuse(const std::string& why);
  void filter_warning(bool in);

  bool installed_ = false;      // both hooks in: the window names modules
  bool post_lingers_ = false;   // the post hook alone, until the open scopes close
  int lingered_steps_ = 0;      // step ends it has stayed so
  static constexpr int kMaxLingerSteps = 2;
  std::atomic<bool> refused_{false};  // said once: never tried again
  bool prepare_tried_ = false;
  std::atomic<bool> prepared_{false};  // the fields below are set
  // Owned references, set by prepare() for the life of the process: torch's
  // dicts, our keys in them, our hooks, and sys.modules (Dynamo's counters
  // are read from it).
  void* pre_dict_ = nullptr;
  void* post_dict_ = nullptr;
  void* pre_key_ = nullptr;
  void* post_key_ = nullptr;
  void* pre_ = nullptr;
  void* post_ = nullptr;
  void* sys_modules_ = nullptr;
  // The warnings filter that hides torch's warning about global module
  // hooks from torch.compile(module) while ours are in, the filters list,
  // and warnings._filters_mutated (null where it cannot be done from C).
  void* warning_filter_ = nullptr;
  void* warning_filters_ = nullptr;
  void* filters_mutated_ = nullptr;
};

}  // namespace chakrashim::bridge
