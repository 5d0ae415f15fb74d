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
// tried on a short-lived thread of ours (never on the job's threads: a
// signal handler of the job's runs only on the main thread, and an
// exception it raised inside Python of ours would land there, or be lost),
// at once, then every 250 ms (for at most 60 s) and at each outermost step
// end, only while no optimizer step is open on any thread. It takes the
// GIL; the dicts are filled from C right after a last check, with no
// bytecode in between (no other thread can open a step meanwhile). The
// thread starts when the job shows it trains (try_again), never at attach,
// inside `import torch`, where it took a thread the job's libraries wanted
// in a pids-limited cgroup (issue #48).
//
// What goes into torch's dicts are two small Python functions around our
// builtins (docs/design.md, "Counting steps"): Dynamo can trace them, and
// under torch.compile they do nothing. They are what the job pays a step
// outside the window, so they make as few Python calls as that allows.
#pragma once

#include <semaphore.h>

#include <atomic>
#include <cstdint>
#include <functional>

#include "window/optimizer_pattern.h"

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
    // Several optimizers step in turn (window/optimizer_pattern.h): called
    // once, with the GIL held, from the step that made it clear.
    std::function<void(std::size_t optimizers)> several_optimizers;
    // One optimizer steps once per parameter group (a wrapper that is no
    // torch optimizer steps it group by group): called once, with the GIL.
    std::function<void()> group_by_group;
  };

  // Makes ready to register (at attach); starts no thread. Once per process.
  void start(Callbacks callbacks);
  // Asks for another try now (an outermost step just ended): wakes the
  // registering thread, or starts one if the last gave up. Never blocks.
  void try_again();
  bool active() const { return active_.load(std::memory_order_acquire); }

  // An outer step that is not torch.optim's (a DeepSpeed engine's step,
  // engine_steps.h) opens and closes as an optimizer step does, keyed by
  // the frame of the Python function that runs it; the optimizer steps
  // inside it are nested and do not count. GIL held. `stepper` is the
  // object that steps (for the pattern of several optimizers; may be null).
  static void open_step(const void* frame);
  // `torch_optimizer`: the object is a torch.optim optimizer, whose
  // param_groups tell a wrapper stepping it group by group (not the engine).
  static void close_step(const void* frame, void* stepper, bool torch_optimizer = true);

 private:
  // METH_FASTCALL builtins (python_api.h): the pre hook is passed nothing,
  // the post hook the optimizer.
  static void* pre_hook(void* self, void* const* args, long nargs);
  static void* post_hook(void* self, void* const* args, long nargs);
  // An outermost step ended: counted (GIL held).
  static void step_closed(void* stepper, bool torch_optimizer);
  // The optimizer that took an outermost step, into pattern_ (GIL held).
  void note_optimizer(void* optimizer, bool torch_optimizer);
  static std::uint64_t first_group(void* optimizer);
  // On the registering thread, holding no lock of ours: one try, with the
  // GIL. True once the hooks are in.
  bool try_register();
  // The registering thread: tries at once, then every 250 ms and when
  // woken, for 60 s.
  void registrar();

  Callbacks callbacks_;
  std::atomic<bool> started_{false};
  std::atomic<bool> active_{false};
  std::atomic<bool> running_{false};  // a registering thread is alive
  std::atomic<bool> no_thread_{false};  // one could not be started: never tried again
  sem_t wakeup_;                      // try_again's wake-up (sem_post never blocks)
  // Which optimizer took each outermost step. Read and written only in the
  // post hook, which Python calls with the GIL held: the GIL is its lock.
  window::OptimizerPattern pattern_;
  std::uint64_t outermost_steps_ = 0;
};

}  // namespace chakrashim::bridge
