// chakra_converter's type rules from names.
#include "convert/node_rules.h"

#include <gtest/gtest.h>

namespace chakrashim::tools::convert {
namespace {

TEST(NodeRules, CollectiveTypeFromTheKernelName) {
  EXPECT_EQ(collective_kind("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            CollKind::all_reduce);
  EXPECT_EQ(collective_kind("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            CollKind::all_gather);
  EXPECT_EQ(collective_kind("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL"), CollKind::reduce_scatter);
  EXPECT_EQ(collective_kind("ncclKernel_Broadcast_RING_LL_Sum_int8_t"), CollKind::broadcast);
  EXPECT_EQ(collective_kind("nccl:all-to-all"), CollKind::all_to_all);
  EXPECT_EQ(collective_kind("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"), CollKind::all_to_all);
  // Order matters as in the converter: "allreduce" is looked for first.
  EXPECT_EQ(collective_kind("all_reduce_then_all_gather"), CollKind::all_reduce);
  EXPECT_FALSE(collective_kind("ncclDevKernel_Reduce_Sum_f32_RING_LL"));
  EXPECT_FALSE(collective_kind("void gemm_kernel()"));
}

TEST(NodeRules, GpuNodeTypes) {
  EXPECT_EQ(gpu_node_kind("void at::native::vectorized_elementwise_kernel<4>()", ""), NodeKind::comp);
  EXPECT_EQ(gpu_node_kind("ncclKernel_AllReduce_RING_LL_Sum_float", "nccl:all_reduce"), NodeKind::comm_coll);
  EXPECT_EQ(gpu_node_kind("ncclDevKernel_SendRecv(ncclDevComm*)", "nccl:send"), NodeKind::comm_send);
  EXPECT_EQ(gpu_node_kind("ncclDevKernel_SendRecv(ncclDevComm*)", "nccl:recv"), NodeKind::comm_recv);
  EXPECT_EQ(gpu_node_kind("ncclDevKernel_SendRecv(ncclDevComm*)", "nccl:all_to_all"), NodeKind::comm_coll);
  // A SendRecv kernel under anything else is still an NCCL kernel.
  EXPECT_EQ(gpu_node_kind("ncclDevKernel_SendRecv(ncclDevComm*)", "aten::mm"), NodeKind::comm_coll);
}

TEST(NodeRules, RootsMetadataAndZeroedDurations) {
  EXPECT_TRUE(is_root_name("[pytorch|profiler|execution_trace|thread]"));
  EXPECT_TRUE(is_root_name("[pytorch|profiler|execution_graph|thread]"));
  EXPECT_FALSE(is_root_name("[pytorch|profiler|execution_trace|process]"));
  EXPECT_TRUE(is_metadata_name("## process_group:init ##"));
  EXPECT_TRUE(zero_duration_name("Optimizer.step#SGD.step"));
  EXPECT_FALSE(zero_duration_name("Optimizer.zero_grad#SGD.zero_grad"));
  EXPECT_TRUE(launcher_is_grandparent("record_param_comms"));
  EXPECT_FALSE(launcher_is_grandparent("record_param_comms_x"));
}

TEST(NodeRules, HostCollectiveKindsFromC10dNames) {
  EXPECT_EQ(host_collective_kind("c10d::allreduce_"), CollKind::all_reduce);
  EXPECT_EQ(host_collective_kind("c10d::_allgather_base_"), CollKind::all_gather);
  EXPECT_EQ(host_collective_kind("c10d::reduce_scatter_"), CollKind::reduce_scatter);
  EXPECT_EQ(host_collective_kind("c10d::alltoall_base_"), CollKind::all_to_all);
  EXPECT_EQ(host_collective_kind("c10d::broadcast_"), CollKind::broadcast);
  EXPECT_EQ(host_collective_kind("c10d::barrier"), std::nullopt);
  EXPECT_EQ(host_collective_kind("c10d::reduce_"), std::nullopt);
  EXPECT_EQ(host_collective_kind("aten::allreduce_like"), std::nullopt) << "c10d ops only";
}

TEST(NodeRules, HostPointToPointKinds) {
  EXPECT_EQ(host_p2p_kind("c10d::send"), NodeKind::comm_send);
  EXPECT_EQ(host_p2p_kind("c10d::recv_"), NodeKind::comm_recv);
  EXPECT_EQ(host_p2p_kind("c10d::recv_any_source_"), std::nullopt) << "its peer is known only as it runs";
  EXPECT_EQ(host_p2p_kind("gloo:send"), std::nullopt) << "gloo's own record, under c10d::send";
  EXPECT_EQ(host_collective_kind("c10d::send"), std::nullopt);
}

}  // namespace
}  // namespace chakrashim::tools::convert
