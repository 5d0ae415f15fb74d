// What `chakrashim simulate` prints: each rank's simulated time beside the
// window it captured, from ASTRA-sim's output and what convert put in each
// .et (et_encoding.h's GlobalMetadata attributes). Pure: no files, no
// processes.
//
// The simulation is measured against the captured window less the
// recording cost convert took out of the timeline: that is the time the
// converted trace stands for, so a ratio off 1 is what the simulation
// added or lost (communication modelled on another network, a message
// never received, ops ASTRA-sim ran in another order), not the shim's cost.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chakrashim::tools::simulate {

// ASTRA-sim's "sys[R] finished, N cycles" lines (a cycle is a nanosecond),
// the last one per R. Its exit status is not reliable (it may abort after
// the last line, in its statistics), so these lines are the verdict.
//   "[...] sys[1] finished, 6986635 cycles, exposed ..." -> {1: 6986635}
std::map<std::uint64_t, std::uint64_t> finished_cycles(std::string_view output);

// One rank, as its .et describes it.
struct RankWindow {
  std::uint64_t rank = 0;
  std::optional<std::uint64_t> window_ns, window_steps, cost_taken_ns;
};

struct RankRow {
  std::uint64_t rank = 0;
  std::optional<std::uint64_t> captured_ns, steps, cost_ns;
  std::optional<std::uint64_t> expected_ns;   // captured less cost, when both are known
  std::optional<std::uint64_t> simulated_ns;  // nullopt: ASTRA-sim did not finish this rank
  std::optional<double> ratio;                // simulated / expected
  bool beyond = false;                        // |ratio - 1| > tolerance
};

// Rows for the given ranks; `tolerance` 0.15 is the ±15% beyond which a
// ratio is warned about.
std::vector<RankRow> compare(const std::vector<RankWindow>& ranks,
                             const std::map<std::uint64_t, std::uint64_t>& finished, double tolerance);

// The table, a header then a line per rank:
//   "rank   captured  steps  cost taken out   expected  simulated   ratio"
//   "   0   33.10 ms      4         2.00 ms   31.10 ms   30.90 ms   0.994"
// "-" where a figure is unknown.
std::vector<std::string> table_lines(const std::vector<RankRow>& rows);

// A line per problem, without a "warning:" prefix:
//   "rank 1 simulated to 1.310 of its expected window (captured 33.10 ms less 2.00 ms of recording cost):
//    beyond ±15% (docs/simulate.md, "When the simulation does not match")"
//   "rank 2 did not finish in ASTRA-sim"
//   "rank 0's .et has no captured window (converted by another tool, or from an ET+ file): nothing to compare"
// Ranks beyond the 8th are counted, not listed, per kind.
std::vector<std::string> problem_lines(const std::vector<RankRow>& rows, double tolerance);

// "33.10 ms", "812.4 us", "1.234 s"
std::string duration_text(std::uint64_t ns);

}  // namespace chakrashim::tools::simulate
