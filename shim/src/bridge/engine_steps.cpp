#include "bridge/engine_steps.h"

#include <ATen/record_function.h>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "bridge/capture.h"
#include "bridge/optimizer_hooks.h"
#include "bridge/python_api.h"
#include "bridge/python_frames.h"

namespace chakrashim::bridge {

// Set once by install(), read at arm: whether to say that DeepSpeed engine
// steps are counted.
std::atomic<bool> EngineSteps::installed_{false};

namespace {

constexpr const char* kRecordName = "Optimizer.step#DeepSpeedEngine.step";

// The engine steps open on this thread (nested only when an exception left
// one open): our wrapper's frame, for its identity, and the record opened
// around the call, if the step callback counts now.
struct OpenEngineStep {
  const void* frame;
  std::unique_ptr<at::RecordFunction> record;
};
thread_local std::vector<OpenEngineStep> t_steps;

void* none() {
  const PythonApi& py = python();
  py.inc_ref(py.none);
  return py.none;
}

// engine.global_steps, as the instance holds it (instance_attribute: no
// code of the job's or DeepSpeed's runs, and the engine's dict is left as
// it is); nullopt where it cannot be read.
std::optional<std::uint64_t> global_steps(void* engine) {
  const PythonApi& py = python();
  if (!engine || !py.long_as_long || !py.intern_string) return std::nullopt;
  // Kept: instance_attribute's cache holds names by address.
  static void* key = py.intern_string("global_steps");
  if (!key) {
    py.err_clear();
    return std::nullopt;
  }
  std::optional<std::uint64_t> out;
  if (void* value = instance_attribute(engine, key)) {
    const long n = py.long_as_long(value);
    if (n >= 0 && !py.err_occurred()) out = static_cast<std::uint64_t>(n);
    py.dec_ref(value);
  }
  if (py.err_occurred()) py.err_clear();  // ours: no bytecode ran
  return out;
}

// Once a process (the first engine step, GIL held): the steps counted
// before the wrapper was in may be the inner optimizer's, one per parameter
// group (the hooks' registrar got the GIL late, on a loaded machine).
std::atomic<bool> g_recounted{false};

// _open(engine): a boundary call of DeepSpeedEngine.step begins.
void* open_engine_step(void*, void* args) {
  try {
    if (!g_recounted.exchange(true)) {
      const PythonApi& py = python();
      void* engine = py.tuple_size(args) >= 1 ? py.tuple_get_item(args, 0) : nullptr;
      if (const auto done = global_steps(engine)) Capture::instance().recount_engine_steps(*done);
    }
    const void* frame = frame_above(0);  // our wrapper, which called this builtin
    // Steps an exception ended without their _close: dropped, their
    // records ended (innermost first).
    while (!t_steps.empty() && !is_ancestor(t_steps.back().frame, frame)) t_steps.pop_back();
    std::unique_ptr<at::RecordFunction> record;
    Capture& capture = Capture::instance();
    // The model step inside engine.step() (both wrapped) nests: one record.
    if (t_steps.empty() && !capture.dead() && capture.counting_by_records()) {
      record = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
      if (record->isActive()) record->before(kRecordName);
      else record.reset();
    }
    t_steps.push_back({frame, std::move(record)});
    OptimizerHooks::open_step(frame);
  } catch (...) {
  }
  return none();
}

// _close(engine): that call returned. The hooks' count first, then the
// record's end, in the order torch's own step wrapper runs its post hooks
// (inside its record): whichever counts this step, the other does not.
void* close_engine_step(void*, void* args) {
  try {
    const void* frame = frame_above(0);
    const PythonApi& py = python();
    void* engine = py.tuple_size(args) >= 1 ? py.tuple_get_item(args, 0) : nullptr;  // borrowed
    if (!engine) py.err_clear();
    OptimizerHooks::close_step(frame, engine, false);
    for (std::size_t i = t_steps.size(); i-- > 0;) {
      if (t_steps[i].frame != frame) continue;
      while (t_steps.size() > i) t_steps.pop_back();  // ends the record
      break;
    }
  } catch (...) {
  }
  return none();
}

PythonApi::MethodDef g_open_def{"chakrashim_engine_step_open", &open_engine_step, PythonApi::kVarArgs,
                                "chakrashim: a DeepSpeed engine step begins"};
PythonApi::MethodDef g_close_def{"chakrashim_engine_step_close", &close_engine_step, PythonApi::kVarArgs,
                                 "chakrashim: a DeepSpeed engine step ends"};

// The wrapper (see engine_steps.h). `_boundary` asks the engine what its own
// step asks first; `__wrapped__` keeps inspect.signature(engine.step) and
// anyone unwrapping it right. __builtins__ is set because Dynamo reads it
// from a traced function's globals.
constexpr const char* kWrap = R"PY(
import sys as _sys
__builtins__ = _sys.modules["builtins"]
wrapped = False
_cls = getattr(_sys.modules.get("deepspeed.runtime.engine"), "DeepSpeedEngine", None)
_pipe = getattr(_sys.modules.get("deepspeed.runtime.pipe.engine"), "PipelineEngine", None)
_tc = _sys.modules.get("torch.compiler")
_compiling = getattr(_tc, "is_dynamo_compiling", None)
if not callable(_compiling):
    _compiling = getattr(_tc, "is_compiling", None)


def _boundary(engine, _getattr=getattr):
    managed = _getattr(engine, "managed_gradient_accumulation", None)
    if managed is not None and not managed():
        return True
    at = _getattr(engine, "is_gradient_accumulation_boundary", None)
    return at is None or bool(at())


def _always(engine):
    return True


# Wraps cls.name (its own, not an inherited one) once; True where it is ours.
def _wrap(cls, name, boundary):
    orig = vars(cls).get(name) if isinstance(cls, type) else None
    if getattr(orig, "__chakrashim_engine_step__", False):
        return True
    if not callable(orig) or not callable(_compiling):
        return False

    def step(self, *args, __orig=orig, __c=_compiling, __boundary=boundary, __open=_open, __close=_close,
             **kwargs):
        if __c() or not __boundary(self):
            return __orig(self, *args, **kwargs)
        __open(self)
        out = __orig(self, *args, **kwargs)
        __close(self)
        return out

    for a in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(step, a, getattr(orig, a, None))
    step.__wrapped__ = orig
    step.__chakrashim_engine_step__ = True
    setattr(cls, name, step)
    return True


if _wrap(_cls, "step", _boundary):
    wrapped = True
    # The model step itself (always at a boundary): inside step() it nests
    # and counts once; DeepSpeed's pipeline engine calls it from
    # train_batch(), whose whole call is then the step (it aggregates the
    # loss after the model step).
    _wrap(_cls, "_take_model_step", _always)
    _wrap(_pipe, "train_batch", _always)
)PY";

}  // namespace

void EngineSteps::install() {
  const PythonApi& py = python();
  if (installed() || !py.usable() || !py.tuple_size) return;
  // Kept for the life of the process, as the function made in it.
  static void* code = py.compile(kWrap, "<chakrashim deepspeed engine steps>", PythonApi::kFileInput);
  static void* globals = [&]() -> void* {
    void* g = code ? py.dict_new() : nullptr;
    void* open = g ? py.cfunction_new(&g_open_def, nullptr, nullptr) : nullptr;
    void* close = g ? py.cfunction_new(&g_close_def, nullptr, nullptr) : nullptr;
    const bool made = open && close && py.dict_set(g, "_open", open) == 0 && py.dict_set(g, "_close", close) == 0;
    for (void* f : {open, close})
      if (f) py.dec_ref(f);  // the dict holds them
    if (!made && g) {
      py.dec_ref(g);
      g = nullptr;
    }
    return g;
  }();
  if (!globals) return;
  if (void* r = py.eval_code(code, globals, globals)) {
    py.dec_ref(r);
    void* wrapped = py.dict_get(globals, "wrapped");  // borrowed
    if (wrapped && py.is_true(wrapped) == 1) installed_.store(true, std::memory_order_release);
  }
  // On our own thread an error is ours: cleared.
  if (py.err_occurred()) py.err_clear();
}

}  // namespace chakrashim::bridge
