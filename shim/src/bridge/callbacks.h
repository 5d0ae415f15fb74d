// The two RecordFunction callbacks (DESIGN.md sections 3, 4.4 and 4.9):
//   step callback     USER_SCOPE only, no ids, registered at attach for the
//                     life of the process: counts outermost step markers.
//   op-span callback  every scope, asks for ids, registered only while
//                     armed: records host spans carrying the rf_id.
// Outside the window only the first exists, so ordinary ops stay on
// PyTorch's fast path (no callback for their scope).
#pragma once

#include <ATen/record_function.h>

namespace chakrashim::bridge {

at::CallbackHandle register_step_callback();
at::CallbackHandle register_op_span_callback();

}  // namespace chakrashim::bridge
