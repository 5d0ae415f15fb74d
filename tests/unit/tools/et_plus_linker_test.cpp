// chakra_trace_link's rules, each on a small hand-built ET and device trace.
#include "link/et_plus_linker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "link/cpu_threads.h"
#include "link/device_ops.h"
#include "link/exclusive_durations.h"
#include "link/inter_thread_deps.h"
#include "link/partial_step.h"
#include "support/builders.h"

namespace chakrashim::tools::link {
namespace {

constexpr std::int64_t kUs = 1000;  // ns

using testing_support::int_arg;

// Times in us; process 0.
TraceEvent event(std::string cat, std::string name, std::int64_t tid, std::int64_t ts_us, std::int64_t dur_us) {
  return testing_support::complete_event(std::move(cat), std::move(name), ts_us * kUs, dur_us * kUs, 0, tid);
}

TraceEvent cpu(std::string name, std::int64_t tid, std::int64_t ts, std::int64_t dur, std::int64_t rf,
               std::int64_t ext) {
  TraceEvent e = event("cpu_op", std::move(name), tid, ts, dur);
  e.record_function_id = int_arg(rf);
  e.external_id = int_arg(ext);
  return e;
}

TraceEvent launch(std::int64_t tid, std::int64_t ts, std::int64_t corr, std::int64_t ext,
                  std::string name = "cudaLaunchKernel") {
  TraceEvent e = event("cuda_runtime", std::move(name), tid, ts, 1);
  e.correlation = int_arg(corr);
  e.external_id = int_arg(ext);
  return e;
}

TraceEvent gpu(std::string cat, std::string name, std::int64_t ts, std::int64_t corr, std::int64_t ext) {
  TraceEvent e = event(std::move(cat), std::move(name), 7, ts, 5);
  e.correlation = int_arg(corr);
  e.external_id = int_arg(ext);
  e.stream = int_arg(7);
  return e;
}

DeviceOps device_of(const std::vector<TraceEvent>& events) {
  DeviceOpsBuilder b;
  for (const auto& e : events) b.add(e);
  return std::move(b).finish();
}

// Root 1, thread node 2, then `ops` as {id, parent, rf_id}.
std::vector<HostNode> host_of(std::vector<HostNode> ops) {
  std::vector<HostNode> nodes{{1, 1, 0}, {2, 1, 0}};
  nodes.insert(nodes.end(), ops.begin(), ops.end());
  return nodes;
}

const LinkedNode& node_with_id(const LinkPlan& plan, const std::vector<HostNode>& host, std::uint64_t id) {
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (host[i].id == id) return plan.nodes[i];
  }
  throw std::runtime_error("no node " + std::to_string(id));
}

TEST(EtPlusLinker, AKernelJoinsItsLaunchByCorrelationAndTheOpWithTheSameTidAndExternalId) {
  const auto host = host_of({{3, 2, 10}, {4, 2, 11}});
  const auto device = device_of({cpu("aten::mm", 1, 100, 50, 10, 100), cpu("aten::add", 1, 160, 50, 11, 101),
                                 launch(1, 170, 900, 101), gpu("kernel", "add_kernel", 300, 900, 101)});
  const LinkPlan plan = link_et_plus(host, device);
  ASSERT_TRUE(plan.error.empty());
  EXPECT_EQ(node_with_id(plan, host, 3).children, 0u);
  const LinkedNode& add = node_with_id(plan, host, 4);
  ASSERT_EQ(add.children, 1u);
  EXPECT_EQ(device.names.at(device.gpu[plan.child_ops[add.first_child]].name), "add_kernel");
  EXPECT_EQ(plan.stats.gpu_unlinked, 0u);
}

TEST(EtPlusLinker, WithoutAnExternalIdMatchTheLatestOpOnTheLaunchThreadIsTheParent) {
  const auto host = host_of({{3, 2, 10}, {4, 2, 11}, {5, 2, 12}});
  // The kernel's External id (77) is on no op; tid 2's op is later than the launch.
  const auto device = device_of({cpu("a", 1, 100, 10, 10, 100), cpu("b", 1, 120, 10, 11, 101),
                                 cpu("c", 2, 140, 10, 12, 102), launch(1, 135, 5, 77),
                                 gpu("kernel", "k", 200, 5, 77)});
  const LinkPlan plan = link_et_plus(host, device);
  EXPECT_EQ(node_with_id(plan, host, 4).children, 1u);
  EXPECT_EQ(node_with_id(plan, host, 3).children + node_with_id(plan, host, 5).children, 0u);
}

TEST(EtPlusLinker, NcclKernelsSkipNcclCoalescedOps) {
  const auto host = host_of({{3, 2, 10}, {4, 2, 11}});
  const auto device = device_of({cpu("record_param_comms", 1, 100, 10, 10, 100),
                                 cpu("nccl:coalesced", 1, 120, 10, 11, 200), launch(1, 125, 5, 200),
                                 gpu("kernel", "ncclDevKernel_AllReduce", 200, 5, 200)});
  const LinkPlan plan = link_et_plus(host, device);
  EXPECT_EQ(node_with_id(plan, host, 3).children, 1u);
  EXPECT_EQ(node_with_id(plan, host, 4).children, 0u);
}

TEST(EtPlusLinker, MemcpysAreLinkedAndMemsetsAreNot) {
  const auto host = host_of({{3, 2, 10}});
  TraceEvent memset_launch = launch(1, 106, 6, 100, "cudaMemsetAsync");
  const auto device = device_of({cpu("aten::copy_", 1, 100, 50, 10, 100), launch(1, 102, 5, 100, "cudaMemcpyAsync"),
                                 gpu("gpu_memcpy", "Memcpy HtoD", 200, 5, 100), memset_launch,
                                 gpu("gpu_memset", "Memset", 210, 6, 100)});
  const LinkPlan plan = link_et_plus(host, device);
  EXPECT_EQ(node_with_id(plan, host, 3).children, 1u);
  EXPECT_EQ(plan.stats.memsets, 1u);
  EXPECT_EQ(plan.stats.gpu_ops, 1u);
}

TEST(EtPlusLinker, RepeatedLaunchCorrelationsAreRefusedAsChakraRefusesThem) {
  const auto device = device_of({launch(1, 1, 5, 1), launch(1, 2, 5, 2)});
  EXPECT_NE(link_et_plus(host_of({}), device).error.find("correlation 5"), std::string::npos);
}

TEST(ExclusiveDurations, ChildrenAreSubtractedOnceEvenWhenNested) {
  const auto device = device_of({cpu("p", 1, 0, 100, 1, 1), cpu("c1", 1, 10, 30, 2, 2), cpu("g", 1, 15, 10, 3, 3),
                                 cpu("c2", 1, 50, 20, 4, 4), cpu("other_thread", 2, 0, 100, 5, 5)});
  const CpuThreads threads(device.cpu);
  const auto excl = exclusive_durations(device.cpu, threads);
  // By ts, stable: p, other_thread, c1, g, c2.
  EXPECT_EQ(excl[0], 50 * kUs);   // 100 - 30 - 20
  EXPECT_EQ(excl[1], 100 * kUs);  // other threads are not children
  EXPECT_EQ(excl[2], 20 * kUs);   // c1: 30 - 10 (g)
}

TEST(ExclusiveDurations, AChildStartingWithItsParentSortsFirstAndIsNotSubtracted) {
  const auto device = device_of({cpu("p", 1, 0, 10, 1, 1), cpu("c", 1, 0, 4, 2, 2)});
  const CpuThreads threads(device.cpu);
  const auto excl = exclusive_durations(device.cpu, threads);
  EXPECT_EQ(excl[0], 10 * kUs);
  EXPECT_EQ(excl[1], 4 * kUs);
}

TEST(ExclusiveDurations, OverlappingChildrenAreMergedBeforeSubtracting) {
  // Two children of p that overlap each other (async annotations do).
  const auto device = device_of({cpu("p", 1, 0, 100, 1, 1), cpu("a", 1, 10, 30, 2, 2), cpu("b", 1, 20, 40, 3, 3)});
  const auto excl = exclusive_durations(device.cpu, CpuThreads(device.cpu));
  EXPECT_EQ(excl[0], 50 * kUs);  // [10, 60) covered
}

TEST(InterThreadDeps, AGroupAfterAGapDependsOnTheLatestEarlierOpOfAnotherThread) {
  const auto device = device_of({cpu("a1", 1, 100, 10, 5, 1), cpu("a2", 1, 300, 10, 6, 2),
                                 cpu("b1", 2, 400, 10, 7, 3), cpu("b2", 2, 420, 10, 8, 4),
                                 cpu("b3", 2, 5000, 10, 9, 5)});
  const auto deps = inter_thread_rf_ids(device.cpu, CpuThreads(device.cpu));
  EXPECT_FALSE(deps[0].has_value());  // nothing earlier elsewhere
  EXPECT_FALSE(deps[1].has_value());  // same group as a1 (gap < 1 ms)
  EXPECT_EQ(deps[2], 6);              // b1 starts its thread: a2 is the latest on thread 1
  EXPECT_EQ(deps[3], 6);              // b2 is in b1's group
  EXPECT_EQ(deps[4], 6);              // b3 after a 4.5 ms gap: still a2
}

TEST(EtPlusLinker, HostNodesGetTimesAndTheirInterThreadDependencyAsANewId) {
  const auto host = host_of({{3, 2, 6}, {4, 2, 7}});
  const auto device = device_of({cpu("a", 1, 100, 10, 6, 1), cpu("b", 2, 400, 10, 7, 2)});
  const LinkPlan plan = link_et_plus(host, device);
  const LinkedNode& b = node_with_id(plan, host, 4);
  ASSERT_TRUE(b.timing.has_value());
  const NodeTiming& t = plan.timings[*b.timing];
  EXPECT_EQ(t.ts, 400 * kUs);
  EXPECT_EQ(t.inclusive, 10 * kUs);
  EXPECT_EQ(t.exclusive, 10 * kUs);
  EXPECT_EQ(t.inter_thread_dep, node_with_id(plan, host, 3).new_id);
}

TEST(EtPlusLinker, AHostOnlyTraceTimesHostNodesAndAddsNoChildren) {
  const auto host = host_of({{3, 2, 10}, {4, 3, 11}});
  const auto device = device_of({cpu("outer", 1, 0, 100, 10, 1), cpu("inner", 1, 10, 20, 11, 2)});
  const LinkPlan plan = link_et_plus(host, device);
  ASSERT_TRUE(plan.error.empty());
  EXPECT_EQ(plan.stats.timed, 2u);
  EXPECT_TRUE(plan.child_ops.empty());
  EXPECT_EQ(plan.timings[*node_with_id(plan, host, 3).timing].exclusive, 80 * kUs);
}

TEST(EtPlusLinker, ProfilerStepsAndNodesUnreachableFromTheRootAreNotTimed) {
  const auto host = host_of({{3, 2, 10}, {4, 99, 11}});
  TraceEvent step = cpu("ProfilerStep#3", 1, 0, 100, 10, 1);
  step.cat = "user_annotation";
  const auto device = device_of({step, cpu("x", 1, 10, 5, 11, 2)});
  const LinkPlan plan = link_et_plus(host, device);
  EXPECT_FALSE(node_with_id(plan, host, 3).timing.has_value());
  EXPECT_FALSE(node_with_id(plan, host, 4).timing.has_value());
}

TEST(EtPlusLinker, IdsAreRenumberedInIdOrderWithGpuChildrenRightAfterTheirParent) {
  // File order as torch writes it: children first, root last.
  const std::vector<HostNode> host{{4, 3, 11}, {3, 2, 10}, {2, 1, 0}, {5, 2, 12}, {1, 1, 0}};
  const auto device = device_of({cpu("outer", 1, 0, 100, 10, 1), cpu("inner", 1, 10, 20, 11, 2),
                                 launch(1, 12, 5, 2), gpu("kernel", "k1", 50, 5, 2), launch(1, 14, 6, 2),
                                 gpu("kernel", "k2", 60, 6, 2), cpu("last", 1, 200, 5, 12, 3)});
  const LinkPlan plan = link_et_plus(host, device);
  EXPECT_FALSE(plan.in_file_order);
  EXPECT_EQ(node_with_id(plan, host, 1).new_id, 0u);
  EXPECT_EQ(node_with_id(plan, host, 2).new_id, 1u);
  EXPECT_EQ(node_with_id(plan, host, 3).new_id, 2u);
  EXPECT_EQ(node_with_id(plan, host, 4).new_id, 3u);  // children 4 and 5
  EXPECT_EQ(node_with_id(plan, host, 4).children, 2u);
  EXPECT_EQ(node_with_id(plan, host, 5).new_id, 6u);
  EXPECT_EQ(node_with_id(plan, host, 4).new_parent, 2u);
  EXPECT_EQ(node_with_id(plan, host, 1).new_parent, 0u);  // the root's own id
  EXPECT_EQ(plan.write_order, (std::vector<std::uint32_t>{4, 2, 1, 0, 3}));
}

TEST(EtPlusLinker, AParentThatIsNoNodeGetsAFreshIdPastTheEnd) {
  const std::vector<HostNode> host{{1, 1, 0}, {2, 42, 0}, {3, 42, 0}, {4, 43, 0}};
  const LinkPlan plan = link_et_plus(host, device_of({}));
  EXPECT_EQ(plan.nodes[1].new_parent, 4u);
  EXPECT_EQ(plan.nodes[2].new_parent, 4u);
  EXPECT_EQ(plan.nodes[3].new_parent, 5u);
}

// Issue #49: the partial step at a window's end is left out. Ops from 100 us
// on are the partial step's: the op at 120 (rf 11) and its child node go,
// with the kernel it launched; the kernel launched at 50 and running past
// the cut stays, under its op.
TEST(PartialStep, WhatStartsInItGoesWithItsNodesAndItsGpuWork) {
  DeviceOps device = device_of({cpu("aten::mm", 1, 40, 20, 10, 100), launch(1, 50, 1, 100),
                                gpu("kernel", "gemm", 90, 1, 100), cpu("aten::item", 1, 120, 10, 11, 101),
                                launch(1, 122, 2, 101), gpu("kernel", "copy", 125, 2, 101)});
  const auto host = host_of({{3, 2, 10}, {4, 2, 11}, {5, 4, 0}});
  const PartialCut cut = cut_partial_step(100 * kUs, host, device);
  EXPECT_EQ(cut.cpu_ops, 1u);
  EXPECT_EQ(cut.gpu_ops, 1u);
  EXPECT_EQ(cut.host_nodes, 2u);
  EXPECT_EQ(cut.host_dropped, (std::vector<bool>{false, false, false, true, true}));
  const LinkPlan plan = link_et_plus(host, device, &cut.host_dropped);
  ASSERT_TRUE(plan.error.empty()) << plan.error;
  EXPECT_EQ(plan.stats.dropped, 2u);
  EXPECT_EQ(plan.stats.gpu_children, 1u);  // the gemm, under node 3
  EXPECT_EQ(plan.stats.gpu_unlinked, 0u);
  EXPECT_EQ(plan.write_order, (std::vector<std::uint32_t>{0, 1, 2}));
  // Ids stay dense: root 0, thread 1, op 2, its kernel 3.
  EXPECT_EQ(plan.nodes[2].new_id, 2u);
  EXPECT_EQ(plan.nodes[2].children, 1u);
  EXPECT_TRUE(plan.nodes[3].dropped && plan.nodes[4].dropped);
}

}  // namespace
}  // namespace chakrashim::tools::link
