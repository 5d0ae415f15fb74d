// Step numbers as ranges, for lines a person reads (the capture summary):
//   {3,4,6,7,9} -> "3-4,6-7,9";  {100..300} -> "100-300";  {} -> "".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "writers/kineto_trace_writer.h"

namespace chakrashim::writers {

// `steps` in any order, duplicates allowed.
std::string step_ranges(std::vector<std::uint64_t> steps);

// The opening of the capture line (to the open parenthesis and the count):
//   captured {2,3}                       -> "captured steps [2-3] (2 steps"
//   captured {2,3}, partial 4, reason exit -> "captured steps [2-3] + partial step 4, cut by exit (2 steps"
//   captured {}, partial 3, window 3..4, reason exit -> "captured no whole step of the window
//     [3-4]: the job ended during step 3, before any optimizer step completed it (an iteration
//     whose optimizer.step() does not run is no step, as when a GradScaler skips it on inf or
//     nan gradients), so only that partial step is kept (0 steps"
//   the same, reason signal:SIGTERM -> "captured no whole step of the window [3-4]: it ended
//     (signal:SIGTERM) during step 3, so only that partial step is kept (0 steps"
// Before issue #38 the second said "captured steps [] (0 steps", which hid
// why a window full of iterations kept nothing whole.
std::string captured_text(const StepsMeta& steps);

}  // namespace chakrashim::writers
