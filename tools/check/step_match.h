// Do the two files hold the same steps? In the device trace, step N is there
// when a ProfilerStep#N event exists. In the ET, each outermost step-marker
// node (Optimizer.step#...) is mapped by its rf_id to the device event with
// that Record function id; the ProfilerStep#N whose span holds that event
// (on the same thread when one does) is the node's step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/device_facts.h"
#include "check/et_facts.h"

namespace chakrashim::tools::check {

struct StepComparison {
  std::vector<std::uint64_t> et_steps;      // sorted, unique; from joined markers
  std::vector<std::uint64_t> device_steps;  // sorted, unique
  std::uint64_t markers = 0;                // outermost marker nodes in the ET
  std::uint64_t markers_unjoined = 0;       // rf_id not found in the device trace
  std::uint64_t markers_outside = 0;        // found, but inside no ProfilerStep#N
  // No marker joined at all: only the counts can be compared.
  bool by_count() const { return markers > 0 && markers_unjoined == markers; }
};

// The numbers of a file's ProfilerStep#N in their order (by start time in
// the device trace, by node id in the ET): "" when each number appears
// once and they ascend, else what is wrong ("3,4,5,6,3,4,5: 3,4,5 more
// than once"). A job that runs its own torch.profiler has a ProfilerStep#N
// of its own in each step, numbered from wherever its profiler started;
// Chakra's linker and HTA then take the wrong spans for steps.
std::string step_order_problem(const std::vector<std::uint64_t>& steps);

StepComparison compare_steps(const std::vector<EtMarker>& markers,
                             const std::vector<MarkerHit>& hits,
                             const std::vector<StepEvent>& steps);

}  // namespace chakrashim::tools::check
