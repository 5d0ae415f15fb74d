// Unit tests for GPU busy time, time by kind and comm/compute overlap
// (tools/report/gpu_stats.h), on hand-built event tables.
#include "report/gpu_stats.h"

#include <gtest/gtest.h>

#include "support/builders.h"

namespace chakrashim::tools::report {
namespace {

void gpu(EventTable& t, const char* cat, const char* name, std::int64_t ts, std::int64_t dur, std::int64_t device,
         std::int64_t stream) {
  t.add(testing_support::gpu_event(cat, name, ts, dur, device, stream));
}

// Window [0, 100) on device 0: compute [10,40) and [30,50) on two streams,
// NCCL [45,70), a memcpy [80,90) and one [60,65) under the NCCL kernel.
EventTable one_device() {
  EventTable t;
  gpu(t, "kernel", "void gemm()", 10, 30, 0, 7);
  gpu(t, "kernel", "void relu()", 30, 20, 0, 8);
  gpu(t, "kernel", "ncclKernel_AllReduce_RING_LL_Sum_float()", 45, 25, 0, 20);
  gpu(t, "gpu_memcpy", "Memcpy HtoD", 80, 10, 0, 7);
  gpu(t, "gpu_memset", "Memset", 60, 5, 0, 7);
  gpu(t, "kernel", "void outside()", 200, 10, 0, 7);
  return t;
}

TEST(GpuStats, BusyIsTheUnionOfAllGpuOpsInTheWindow) {
  const GpuStats g = gpu_stats(one_device(), 0, 100);
  EXPECT_EQ(g.devices, 1u);
  EXPECT_EQ(g.ops, 5u);
  EXPECT_EQ(g.window_ns, 100);
  EXPECT_EQ(g.busy_ns, (70 - 10) + 10);
  EXPECT_DOUBLE_EQ(g.busy_share(), 0.7);
}

TEST(GpuStats, TimeByKindSumsDurations) {
  const GpuStats g = gpu_stats(one_device(), 0, 100);
  EXPECT_EQ(g.kind_ns[static_cast<int>(GpuKind::compute)], 30 + 20);
  EXPECT_EQ(g.kind_ns[static_cast<int>(GpuKind::communication)], 25);
  EXPECT_EQ(g.kind_ns[static_cast<int>(GpuKind::memory)], 10 + 5);
  EXPECT_EQ(g.kind_ops[static_cast<int>(GpuKind::compute)], 2u);
}

TEST(GpuStats, OverlapIsCommunicationUnderCompute) {
  const GpuStats g = gpu_stats(one_device(), 0, 100);
  EXPECT_EQ(g.comm_ns, 25);
  EXPECT_EQ(g.overlap_ns, 5);  // [45,50)
  EXPECT_DOUBLE_EQ(g.overlap_share(), 0.2);
}

TEST(GpuStats, BreakdownPartsAddUpToTheWindow) {
  const GpuStats g = gpu_stats(one_device(), 0, 100);
  const auto& b = g.breakdown;
  EXPECT_EQ(b.compute_ns, 40);        // [10,50)
  EXPECT_EQ(b.exposed_comm_ns, 20);   // [50,70)
  EXPECT_EQ(b.memory_only_ns, 10);    // [80,90); the memset hides under NCCL
  EXPECT_EQ(b.idle_ns, 30);
  EXPECT_EQ(b.compute_ns + b.exposed_comm_ns + b.memory_only_ns + b.idle_ns, g.window_ns * g.devices);
}

TEST(GpuStats, ClipsOpsToTheWindow) {
  const GpuStats g = gpu_stats(one_device(), 20, 60);
  EXPECT_EQ(g.busy_ns, 40);
  EXPECT_EQ(g.kind_ns[static_cast<int>(GpuKind::compute)], 20 + 20);
  EXPECT_EQ(g.kind_ns[static_cast<int>(GpuKind::communication)], 15);
}

TEST(GpuStats, DevicesAreMeasuredApart) {
  EventTable t;
  gpu(t, "kernel", "void a()", 0, 50, 0, 7);
  gpu(t, "kernel", "ncclDevKernel_AllReduce()", 0, 50, 1, 7);  // another device: no overlap
  const GpuStats g = gpu_stats(t, 0, 100);
  EXPECT_EQ(g.devices, 2u);
  EXPECT_EQ(g.busy_ns, 100);
  EXPECT_DOUBLE_EQ(g.busy_share(), 0.5);
  EXPECT_EQ(g.overlap_ns, 0);
}

TEST(GpuStats, NoCommunicationMeansNoOverlapShare) {
  EventTable t;
  gpu(t, "kernel", "void a()", 0, 50, 0, 7);
  EXPECT_DOUBLE_EQ(gpu_stats(t, 0, 100).overlap_share(), 0.0);
}

}  // namespace
}  // namespace chakrashim::tools::report
