// Unit tests for the GPU work classification of tools/report/kernel_kind.h.
#include "report/kernel_kind.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::report {
namespace {

TEST(GpuKind, NcclKernelsAreCommunication) {
  EXPECT_EQ(gpu_kind("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"), GpuKind::communication);
  EXPECT_EQ(gpu_kind("kernel", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            GpuKind::communication);
  EXPECT_EQ(gpu_kind("kernel", "void ncclDevKernel_Broadcast_RING_LL(int)"), GpuKind::communication);
}

TEST(GpuKind, OtherKernelsAreCompute) {
  EXPECT_EQ(gpu_kind("kernel", "void at::native::vectorized_elementwise_kernel<4>()"), GpuKind::compute);
  // Only the name's start counts: a compute kernel may mention nccl later.
  EXPECT_EQ(gpu_kind("kernel", "void gemm_after_ncclKernel()"), GpuKind::compute);
}

TEST(GpuKind, MemcpysAndMemsetsAreMemory) {
  EXPECT_EQ(gpu_kind("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)"), GpuKind::memory);
  EXPECT_EQ(gpu_kind("gpu_memset", "Memset (Device)"), GpuKind::memory);
}

TEST(GpuKind, HostEventsAndGpuAnnotationsAreNotGpuWork) {
  EXPECT_FALSE(gpu_kind("cpu_op", "ncclKernel_AllReduce"));
  EXPECT_FALSE(gpu_kind("cuda_runtime", "cudaLaunchKernel"));
  EXPECT_FALSE(gpu_kind("gpu_user_annotation", "## backward ##"));
}

TEST(KindName, NamesEachKind) {
  EXPECT_EQ(kind_name(GpuKind::compute), "compute");
  EXPECT_EQ(kind_name(GpuKind::communication), "communication");
  EXPECT_EQ(kind_name(GpuKind::memory), "memory");
}

}  // namespace
}  // namespace chakrashim::tools::report
