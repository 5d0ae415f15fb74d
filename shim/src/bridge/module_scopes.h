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
// Refused, with one line: jobs that ran torch.compile'd code (dynamo would
// trace our hooks, and compile again when they go), and jobs whose steps
// torch.optim's hooks do not count (a custom CHAKRA_STEP_MARKER: no Python
// of ours runs at a step boundary).
//
// Threads: everything here runs with the GIL held (the GIL is its lock);
// the open scopes are per thread (thread-local).
#pragma once

namespace chakrashim::bridge {

class ModuleScopes {
 public:
  // `keeping`: whether the window keeps records now (read per module call).
  static void set_keeping(bool (*keeping)());

  // In an optimizer post hook (the GIL held, the stepping thread): `want`
  // says whether the next step's module calls are to be named. Inserts or
  // removes the hooks; refuses once, with one line, where it cannot.
  void sync(bool want);
  bool installed() const { return installed_; }

 private:
  bool install();
  void remove_pre();
  void remove_post();

  bool installed_ = false;      // both hooks in: the window names modules
  bool post_lingers_ = false;   // the post hook alone, until the open scopes close
  int lingered_steps_ = 0;      // step ends it has stayed so
  static constexpr int kMaxLingerSteps = 2;
  bool installing_ = false;     // install() runs bytecode, during which another
                                // thread's optimizer step may call sync()
  bool refused_ = false;  // said once: never tried again
  // torch's dicts and our keys in them while installed (owned references;
  // always_dict_ is null in a torch without _global_forward_hooks_always_called).
  void* pre_dict_ = nullptr;
  void* post_dict_ = nullptr;
  void* always_dict_ = nullptr;
  void* pre_key_ = nullptr;
  void* post_key_ = nullptr;
};

}  // namespace chakrashim::bridge
