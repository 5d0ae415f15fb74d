// Where each step's time went on the stepping thread, by training phase,
// from the names torch already records (docs/report.md, "Step phases"), by
// what runs, wherever it sits (issue #49: Lightning runs forward and
// backward inside optimizer.step's closure, and gradient accumulation runs
// several of them a step):
//   communication  c10d collectives (c10d::*, record_param_comms, nccl:*,
//                  gloo:*) on the stepping thread: time it spent in them
//   data           enumerate(DataLoader)#... (the DataLoader's next batch)
//   backward       each backward pass: autograd's spans (*Backward<N>,
//                  autograd::engine::evaluate_function: ...,
//                  torch::autograd::AccumulateGrad), joined while no other
//                  work starts between them
//   optimizer      Optimizer.zero_grad#..., and Optimizer.step#... after
//                  the step's last backward pass
//   forward        the rest before the step's last backward pass (every
//                  micro-batch's forward, in a closure or not); without a
//                  backward pass, the rest before the optimizer's step
//   other          the rest (gradient clipping, logging, an eval's forward
//                  after the last backward pass, ...)
// Each instant of the step counts once, in the first phase of that list
// that covers it, so the phases add up to the step's time exactly. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/event_table.h"

namespace chakrashim::tools::report {

enum class Phase : std::uint8_t { forward, backward, optimizer, data, communication, other };
inline constexpr int kPhases = 6;
using PhaseTimes = std::array<std::int64_t, kPhases>;

// "forward", "backward", "optimizer", "data", "communication", "other"
std::string_view phase_name(Phase p);

// What a span's name marks, by torch's own names:
//   "Optimizer.step#SGD.step" -> optimizer, "AddmmBackward0" -> backward,
//   "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" -> data,
//   "c10d::allreduce_" -> communication, "aten::mm" -> none
enum class SpanRole : std::uint8_t { none, backward, optimizer, data, communication };
SpanRole role_of(std::string_view name);

// One collective as the stepping thread saw it: the outermost
// communication span (a c10d op holds its record_param_comms).
struct CollectiveSpan {
  std::uint64_t step = 0;
  std::int64_t start = 0, end = 0;
  std::string name;
};

struct StepPhases {
  std::vector<PhaseTimes> per_step;  // in the order of `steps`
  std::vector<CollectiveSpan> collectives;  // by start
};

// `steps`: as unique_steps() gives them (one per number, by start).
StepPhases step_phases(const EventTable& table, const std::vector<StepSpan>& steps);

// The job's record_function scopes, where it has any: the user_annotation
// spans that mark no phase (not Optimizer.*, DataLoader, collectives) and
// are no "## ... ##" bookkeeping record (process_group:init), such
// as DDP's "DistributedDataParallel.forward" or a module's own
// record_function("encoder.layers.3.attn"); not the "nn.Module: ..."
// scopes, which module_totals.h reports. Per name: calls and total
// (inclusive) time, all threads, largest first (docs/report.md, "Top
// scopes").
struct ScopeTotal {
  std::uint32_t name = 0;  // index into EventTable::names
  std::uint64_t calls = 0;
  std::int64_t total_ns = 0;
};
std::vector<ScopeTotal> scope_totals(const EventTable& table);

}  // namespace chakrashim::tools::report
