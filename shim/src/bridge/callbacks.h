// The RecordFunction callbacks (docs/design.md sections 3, 4.4 and 4.9):
//   step callback     USER_SCOPE and BACKWARD_FUNCTION, no ids: counts
//                     outermost step markers. Registered at attach and
//                     while armed; outside the window torch.optim's step
//                     hooks count instead (optimizer_hooks.h), and it is
//                     removed once they are in.
//   op-span callback  every scope torch raises (record_scopes.h), asks
//                     for ids, registered only while armed: records host
//                     spans carrying the rf_id. With
//                     the native ET recorder it also asks for inputs and
//                     outputs and records the op's ET records (before the
//                     span's start, after its end): one callback an op.
// Outside the window neither exists once the hooks are in, so ordinary ops
// pay nothing of ours.
#pragma once

#include <ATen/record_function.h>

#include "bridge/record_scopes.h"

namespace chakrashim::bridge {

at::CallbackHandle register_step_callback();
// torch.optim's post hook counted a step on this thread. A record takes its
// callbacks when it is made and runs them a moment later (the GIL released
// inside torch.ops): the hooks may go in, and the step callback out, in
// between, and that record still runs the step callback. If it saw this
// step's marker open, the marker's end is no step of its own: each step is
// counted once (issue #53, docs/design.md "Counting steps").
void hook_counted_step_here();
// BACKWARD_FUNCTION only, until the first backward function (Capture drops
// it then): whether the job trains, once the step callback is gone.
at::CallbackHandle register_backward_watch();
at::CallbackHandle register_op_span_callback();
// The op-span callback carrying the native ET recorder's records
// (EtRecorder::add_shared).
at::CallbackHandle register_op_callback_with_et();

}  // namespace chakrashim::bridge
