// Where every command changes its manner: up to this many ranks, each rank
// is shown (check's verdicts, link's and convert's lines, report's blocks
// and bars); above, a summary leads and a rank's detail comes on request
// (--verbose, --all, --ranks) or when something is wrong with it. One number,
// so that the commands agree on what a "large" capture is.
#pragma once

#include <cstddef>

namespace chakrashim::tools {

inline constexpr std::size_t kRanksShownOneByOne = 8;

}  // namespace chakrashim::tools
