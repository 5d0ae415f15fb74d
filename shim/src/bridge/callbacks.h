// The two RecordFunction callbacks (docs/design.md sections 3, 4.4 and 4.9):
//   step callback     USER_SCOPE and BACKWARD_FUNCTION, no ids: counts
//                     outermost step markers. Registered at attach and
//                     while armed; outside the window torch.optim's step
//                     hooks count instead (optimizer_hooks.h), and it is
//                     removed once they are in.
//   op-span callback  every scope, asks for ids, registered only while
//                     armed: records host spans carrying the rf_id.
// Outside the window neither exists once the hooks are in, so ordinary ops
// pay nothing of ours.
#pragma once

#include <ATen/record_function.h>

namespace chakrashim::bridge {

at::CallbackHandle register_step_callback();
// BACKWARD_FUNCTION only, until the first backward function (Capture drops
// it then): whether the job trains, once the step callback is gone.
at::CallbackHandle register_backward_watch();
at::CallbackHandle register_op_span_callback();

}  // namespace chakrashim::bridge
