// Ranks a capture should hold but does not, for the commands that read a
// capture without checking it (link, convert, report): the world size and
// the CHAKRA_RANKS filter that a device trace's metadata records, against
// the ranks that have files. `check` has its own rule for it
// (ranks.missing); the others say it in one warning line, so that a missing
// rank is never passed over in silence (issue #38).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/capture_scan.h"

namespace chakrashim::tools {

struct RankExpectation {
  std::optional<std::uint64_t> world_size;
  std::optional<std::string> filter;  // CHAKRA_RANKS as given; nullopt: every rank
};

// From the end of a device trace, where the writer puts its metadata:
//   "...\"chakrashim\": {..., \"ranks\": {\"filter\": \"0,2\", \"world_size\": 4}, ...}\n}"
//     -> {4, "0,2"}
//   a tail without a "chakrashim" object (torch.profiler's trace) -> nullopt
std::optional<RankExpectation> expectation_from_tail(std::string_view tail);

// The ranks below the world size that the filter lets through and that have
// no file in `group`, in order.
std::vector<std::uint64_t> missing_ranks(const CaptureGroup& group, const RankExpectation& expected);

// "1-3,5" for {1,2,3,5}: how every command writes a set of ranks.
std::string rank_ranges(const std::vector<std::uint64_t>& ranks);

// One line for the user, empty when no rank is missing or the files do not
// say the world size (one device trace's end is read):
//   "run 0: rank 1 of world size 2 has no files (only rank 0 is there); `chakrashim check` says more"
std::string missing_ranks_line(const CaptureGroup& group);

}  // namespace chakrashim::tools
