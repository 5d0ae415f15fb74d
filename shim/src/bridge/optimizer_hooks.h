// Step counting at no cost per op (docs/design.md, "Counting steps").
//
// A RecordFunction callback of any scope makes torch do RecordFunction work
// on every op while it is registered (2-3% of an op-heavy step, measured).
// So outside the window, steps are counted by torch.optim's global step
// hooks instead (register_optimizer_step_pre_hook / _post_hook), which run
// once per optimizer step and never per op: two builtins of ours, whose
// thread-local depth makes a nested step (a subclass calling super().step(),
// a wrapper optimizer) count once. Inside the window the RecordFunction
// step callback counts (the window's boundaries must act at the end of the
// Optimizer.step record, after torch's ET wrote it), as it does with a
// custom CHAKRA_STEP_MARKER.
//
// Registration needs torch.optim, which torch imports at the end of its own
// import (our bridge attaches in the middle of it), and it must never insert
// into the hooks' dicts while an optimizer step iterates over them. So it is
// tried from a Python pending call (the main thread, between bytecodes, with
// the GIL), only while no optimizer step is open on any thread, asked for by
// a short-lived timer thread every 250 ms after attach (at most 60 s) and
// at each outermost step end.
#pragma once

#include <atomic>
#include <functional>

namespace chakrashim::bridge {

class OptimizerHooks {
 public:
  struct Callbacks {
    // An outermost optimizer step ended on the calling thread (the post
    // hook at depth 0), with the GIL held.
    std::function<void()> step_ended;
    // The hooks are in: the caller may drop its RecordFunction counter.
    std::function<void()> registered;
    // No optimizer step is open on any thread now (registration is safe).
    std::function<bool()> no_step_open;
    // The process is a forked child or exiting: stop trying.
    std::function<bool()> give_up;
  };

  // Starts trying to register; returns at once. Once per process.
  void start(Callbacks callbacks);
  // Asks for another try now (an outermost step just ended).
  void try_again();
  bool active() const { return active_.load(std::memory_order_acquire); }

 private:
  static int pending_call(void* self);
  static void* pre_hook(void* self, void* args);
  static void* post_hook(void* self, void* args);
  void try_register();
  void timer();

  Callbacks callbacks_;
  std::atomic<bool> started_{false};
  std::atomic<bool> active_{false};
  std::atomic<bool> scheduled_{false};
};

}  // namespace chakrashim::bridge
