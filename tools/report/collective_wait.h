// Communication wait across the ranks of one run: the n-th collective of
// each rank's stepping thread is the same collective (every rank of a
// data-parallel job issues the same ones, in the same order). For each, the
// rank whose start is latest arrived last; every other rank waited for it
// from its own start to that arrival (at most its own time in the
// collective). Times are compared across ranks as they are: ranks on one
// host share a clock; across hosts the figures are as good as the hosts'
// clock sync. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "report/step_phases.h"

namespace chakrashim::tools::report {

struct RankWait {
  std::uint64_t rank = 0;
  std::uint64_t collectives = 0;
  std::uint64_t arrived_last = 0;      // collectives this rank arrived last at
  std::int64_t in_collectives_ns = 0;  // its stepping thread's time in them
  std::int64_t waiting_ns = 0;         // of that, waiting for the last rank to arrive
  std::vector<std::pair<std::uint64_t, std::int64_t>> waiting_by_step;  // (step, ns), by step
};

struct CollectiveWaits {
  bool matched = false;   // every rank has the same collectives, by name, in order
  std::string unmatched;  // why not: "rank 1 has 4 collectives, rank 0 has 6"
  std::vector<RankWait> ranks;  // in the order given
};

// ranks: (rank, its collectives by start). With fewer than two ranks, or
// collectives that do not match, only the per-rank time in collectives is
// filled in.
//   rank 0: allreduce [0, 10]; rank 1: allreduce [6, 12]
//   -> rank 0 waited 6 (for rank 1, last), rank 1 waited 0 and arrived last
CollectiveWaits collective_waits(const std::vector<std::pair<std::uint64_t, const std::vector<CollectiveSpan>*>>& ranks);

}  // namespace chakrashim::tools::report
