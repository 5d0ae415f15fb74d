// Step numbers as ranges, for lines a person reads (the capture summary):
//   {3,4,6,7,9} -> "3-4,6-7,9";  {100..300} -> "100-300";  {} -> "".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chakrashim::writers {

// `steps` in any order, duplicates allowed.
std::string step_ranges(std::vector<std::uint64_t> steps);

}  // namespace chakrashim::writers
