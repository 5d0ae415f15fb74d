// Unit tests for the step phases of tools/report/step_phases.h and the
// communication wait of tools/report/collective_wait.h.
#include "report/step_phases.h"

#include <gtest/gtest.h>

#include "report/collective_wait.h"
#include "report/step_stats.h"
#include "support/builders.h"

namespace chakrashim::tools::report {
namespace {

// A table of one stepping thread (pid 1, tid 1) and one other thread.
struct PhaseTable {
  EventTable table;
  void span(const char* name, std::int64_t start, std::int64_t end, std::int64_t tid = 1,
            const char* cat = "cpu_op") {
    table.add(testing_support::complete_event(cat, name, start, end - start, 1, tid));
  }
  void step(std::uint64_t n, std::int64_t start, std::int64_t end) {
    span(("ProfilerStep#" + std::to_string(n)).c_str(), start, end, 1, "user_annotation");
  }
  StepPhases phases() { return step_phases(table, unique_steps(table.steps)); }
};

std::int64_t phase_at(const PhaseTimes& t, Phase p) { return t[static_cast<int>(p)]; }

TEST(StepPhases, NamesWhatTorchRecords) {
  EXPECT_EQ(role_of("Optimizer.step#AdamW.step"), SpanRole::optimizer);
  EXPECT_EQ(role_of("Optimizer.zero_grad#SGD.zero_grad"), SpanRole::optimizer);
  EXPECT_EQ(role_of("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), SpanRole::data);
  EXPECT_EQ(role_of("c10d::allreduce_"), SpanRole::communication);
  EXPECT_EQ(role_of("record_param_comms"), SpanRole::communication);
  EXPECT_EQ(role_of("nccl:all_reduce"), SpanRole::communication);
  EXPECT_EQ(role_of("AddmmBackward0"), SpanRole::backward);
  EXPECT_EQ(role_of("MulBackward12"), SpanRole::backward);
  EXPECT_EQ(role_of("autograd::engine::evaluate_function: AddmmBackward0"), SpanRole::backward);
  EXPECT_EQ(role_of("torch::autograd::AccumulateGrad"), SpanRole::backward);
  EXPECT_EQ(role_of("Backward0"), SpanRole::none);  // no node name before it
  EXPECT_EQ(role_of("AddmmBackward"), SpanRole::none);
  EXPECT_EQ(role_of("aten::mm"), SpanRole::none);
  EXPECT_EQ(role_of("DistributedDataParallel.forward"), SpanRole::none);
}

TEST(StepPhases, SplitATrainingStepAndAddUpToIt) {
  PhaseTable t;
  t.step(3, 0, 1000);
  t.span("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 100);
  t.span("Optimizer.zero_grad#SGD.zero_grad", 100, 150);
  t.span("aten::linear", 150, 400);                   // forward
  t.span("autograd::engine::evaluate_function: AddmmBackward0", 420, 600);
  t.span("AddmmBackward0", 430, 590);
  t.span("c10d::allreduce_", 500, 560);               // inside backward: communication
  t.span("record_param_comms", 510, 550);             // inside it: one collective
  t.span("torch::autograd::AccumulateGrad", 640, 700);
  t.span("aten::clamp", 720, 760);                    // gradient clipping: other
  t.span("Optimizer.step#SGD.step", 800, 1000);
  t.span("aten::mm", 0, 1000, /*tid=*/2);              // another thread: not counted
  const StepPhases p = t.phases();
  ASSERT_EQ(p.per_step.size(), 1u);
  const PhaseTimes& s = p.per_step[0];
  EXPECT_EQ(phase_at(s, Phase::data), 100);
  EXPECT_EQ(phase_at(s, Phase::optimizer), 50 + 200);
  EXPECT_EQ(phase_at(s, Phase::forward), 420 - 150);        // up to the first backward node
  EXPECT_EQ(phase_at(s, Phase::communication), 60);
  EXPECT_EQ(phase_at(s, Phase::backward), 700 - 420 - 60);  // first to last node, less the collective
  EXPECT_EQ(phase_at(s, Phase::other), 800 - 700);
  std::int64_t sum = 0;
  for (const auto v : s) sum += v;
  EXPECT_EQ(sum, 1000);
  ASSERT_EQ(p.collectives.size(), 1u);
  EXPECT_EQ(p.collectives[0].name, "c10d::allreduce_");
  EXPECT_EQ(p.collectives[0].step, 3u);
  EXPECT_EQ(p.collectives[0].end - p.collectives[0].start, 60);
}

// Issue #49 case 7: Lightning runs forward and backward inside the
// optimizer's step (its closure); they were counted as optimizer time, and
// backward as 0.
TEST(StepPhases, ForwardAndBackwardInsideTheOptimizersClosureAreTheirOwn) {
  PhaseTable t;
  t.step(4, 0, 1000);
  t.span("Optimizer.step#AdamW.step", 100, 1000);
  t.span("aten::linear", 120, 400);  // training_step's forward, in the closure
  t.span("Optimizer.zero_grad#AdamW.zero_grad", 400, 420);
  t.span("autograd::engine::evaluate_function: AddmmBackward0", 430, 700);
  t.span("torch::autograd::AccumulateGrad", 705, 760);
  t.span("aten::_foreach_add_", 800, 950);  // the update, after the closure
  const PhaseTimes s = t.phases().per_step.at(0);
  EXPECT_EQ(phase_at(s, Phase::forward), 100 + (400 - 100) + (430 - 420));  // the loop's tail and the closure's
  EXPECT_EQ(phase_at(s, Phase::optimizer), 20 + (1000 - 760));
  EXPECT_EQ(phase_at(s, Phase::backward), 760 - 430);
  EXPECT_EQ(phase_at(s, Phase::other), 0);
}

// Gradient accumulation: four micro-batches a step. The backward phase ran
// from the first autograd node to the last, so three forwards counted as
// backward; each backward pass is its own now.
TEST(StepPhases, EachMicroBatchHasItsForwardAndItsBackward) {
  PhaseTable t;
  t.step(2, 0, 1000);
  for (int m = 0; m < 4; ++m) {
    const std::int64_t at = m * 200;
    t.span("aten::linear", at, at + 120);                                        // forward
    t.span("autograd::engine::evaluate_function: AddmmBackward0", at + 120, at + 180);
    t.span("torch::autograd::AccumulateGrad", at + 182, at + 200);               // same pass
  }
  t.span("Optimizer.step#SGD.step", 800, 1000);
  const PhaseTimes s = t.phases().per_step.at(0);
  EXPECT_EQ(phase_at(s, Phase::forward), 4 * 120);
  EXPECT_EQ(phase_at(s, Phase::backward), 4 * 80);
  EXPECT_EQ(phase_at(s, Phase::optimizer), 200);
}

TEST(StepPhases, WithoutBackwardTheRestIsForwardUntilTheOptimizer) {
  PhaseTable t;
  t.step(1, 0, 100);
  t.step(2, 100, 300);
  t.span("aten::linear", 10, 40);
  t.span("Optimizer.step#SGD.step", 60, 90);
  t.span("aten::linear", 110, 120);  // step 2: no optimizer span at all
  const StepPhases p = t.phases();
  ASSERT_EQ(p.per_step.size(), 2u);
  EXPECT_EQ(phase_at(p.per_step[0], Phase::forward), 60);
  EXPECT_EQ(phase_at(p.per_step[0], Phase::optimizer), 30);
  EXPECT_EQ(phase_at(p.per_step[0], Phase::other), 10);
  EXPECT_EQ(phase_at(p.per_step[1], Phase::forward), 200);
}

TEST(StepPhases, SpansPastTheStepAreCutAtItsEdges) {
  PhaseTable t;
  t.step(5, 100, 200);
  t.span("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 50, 150);
  t.span("Optimizer.step#SGD.step", 180, 260);
  const PhaseTimes s = t.phases().per_step.at(0);
  EXPECT_EQ(phase_at(s, Phase::data), 50);
  EXPECT_EQ(phase_at(s, Phase::forward), 30);
  EXPECT_EQ(phase_at(s, Phase::optimizer), 20);
}

TEST(ScopeTotals, TheJobsRecordFunctionScopesButNotThePhaseMarkers) {
  PhaseTable t;
  t.step(1, 0, 1000);
  t.span("DistributedDataParallel.forward", 0, 300, 1, "user_annotation");
  t.span("encoder.layers.3.attn", 10, 60, 1, "user_annotation");
  t.span("encoder.layers.3.attn", 100, 130, 2, "user_annotation");  // any thread
  t.span("Optimizer.step#SGD.step", 800, 1000, 1, "user_annotation");
  t.span("gloo:all_reduce", 400, 500, 2, "user_annotation");
  t.span("aten::mm", 20, 50);  // an op, not a scope
  t.span("## process_group:init ##", 0, 1, 1, "user_annotation");
  const std::vector<ScopeTotal> s = scope_totals(t.table);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(t.table.names[s[0].name], "DistributedDataParallel.forward");
  EXPECT_EQ(s[0].total_ns, 300);
  EXPECT_EQ(t.table.names[s[1].name], "encoder.layers.3.attn");
  EXPECT_EQ(s[1].calls, 2u);
  EXPECT_EQ(s[1].total_ns, 80);
}

std::vector<CollectiveSpan> wait_spans(std::initializer_list<std::pair<std::int64_t, std::int64_t>> spans,
                                  const char* name = "c10d::allreduce_") {
  std::vector<CollectiveSpan> out;
  std::uint64_t step = 1;
  for (const auto& [s, e] : spans) out.push_back({step++, s, e, name});
  return out;
}

TEST(CollectiveWait, TheLastToArriveIsWaitedFor) {
  const auto a = wait_spans({{0, 10}, {100, 130}}), b = wait_spans({{6, 12}, {90, 130}}), c = wait_spans({{2, 11}, {95, 131}});
  const CollectiveWaits w = collective_waits({{0, &a}, {1, &b}, {2, &c}});
  ASSERT_TRUE(w.matched);
  ASSERT_EQ(w.ranks.size(), 3u);
  // Collective 1: rank 1 last (6); collective 2: rank 0 last (100).
  EXPECT_EQ(w.ranks[0].arrived_last, 1u);
  EXPECT_EQ(w.ranks[1].arrived_last, 1u);
  EXPECT_EQ(w.ranks[2].arrived_last, 0u);
  EXPECT_EQ(w.ranks[0].waiting_ns, 6 + 0);
  EXPECT_EQ(w.ranks[1].waiting_ns, 0 + 10);
  EXPECT_EQ(w.ranks[2].waiting_ns, 4 + 5);
  EXPECT_EQ(w.ranks[0].in_collectives_ns, 10 + 30);
  const std::vector<std::pair<std::uint64_t, std::int64_t>> by_step = {{1, 4}, {2, 5}};
  EXPECT_EQ(w.ranks[2].waiting_by_step, by_step);
}

TEST(CollectiveWait, WaitingNeverExceedsTheRanksOwnTimeInIt) {
  // Rank 0 left before rank 1 arrived (clocks of two hosts): it waited its whole 5.
  const auto a = wait_spans({{0, 5}}), b = wait_spans({{20, 30}});
  const CollectiveWaits w = collective_waits({{0, &a}, {1, &b}});
  EXPECT_EQ(w.ranks[0].waiting_ns, 5);
}

TEST(CollectiveWait, CollectivesThatDoNotMatchAreSaidAndNotPaired) {
  const auto a = wait_spans({{0, 10}, {20, 30}}), b = wait_spans({{0, 10}});
  const CollectiveWaits w = collective_waits({{0, &a}, {1, &b}});
  EXPECT_FALSE(w.matched);
  EXPECT_EQ(w.unmatched, "rank 1 has 1 collectives, rank 0 has 2");
  EXPECT_EQ(w.ranks[1].in_collectives_ns, 10);
  EXPECT_EQ(w.ranks[0].waiting_ns, 0);
  const auto c = wait_spans({{0, 10}}, "c10d::broadcast_");
  const CollectiveWaits named = collective_waits({{0, &b}, {1, &c}});
  EXPECT_FALSE(named.matched);
  EXPECT_EQ(named.unmatched, "collective 1 is c10d::broadcast_ on rank 1 but c10d::allreduce_ on rank 0");
}

TEST(CollectiveWait, OneRankWaitsForNobody) {
  const auto a = wait_spans({{0, 10}});
  const CollectiveWaits w = collective_waits({{0, &a}});
  EXPECT_FALSE(w.matched);
  EXPECT_EQ(w.ranks[0].in_collectives_ns, 10);
}

}  // namespace
}  // namespace chakrashim::tools::report
