// chakra_converter's graph rules on small hand-made ET+ node lists: ctrl
// deps, data deps from the walk, GPU children, inter-thread deps, dangling
// nodes, comm nodes, and the failures (cycle, missing dep, unknown
// collective).
#include "convert/chakra_graph.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace chakrashim::tools::convert {
namespace {

constexpr const char* kThread = "[pytorch|profiler|execution_trace|thread]";
constexpr const char* kProcess = "[pytorch|profiler|execution_trace|process]";

EtPlusNode node(std::uint64_t id, std::int64_t parent, std::string name, bool gpu = false) {
  EtPlusNode n;
  n.id = id;
  if (parent >= 0) n.parent = static_cast<std::uint64_t>(parent);
  n.name = std::move(name);
  n.gpu = gpu;
  n.comm_size = 0;
  return n;
}

struct Built {
  ChakraGraph graph;
  std::map<std::uint64_t, const ChakraNode*> by_id;
  const EtPlus* trace = nullptr;
  std::vector<std::uint64_t> ids() const {
    std::vector<std::uint64_t> out;
    for (const auto& c : graph.nodes) out.push_back(trace->nodes[c.index].id);
    return out;
  }
  const ChakraNode& at(std::uint64_t id) const { return *by_id.at(id); }
};

Built build(const EtPlus& trace) {
  NodeEncoder encoder;
  Built b;
  b.trace = &trace;
  b.graph = build_chakra_graph(trace, encoder);
  for (const auto& c : b.graph.nodes) b.by_id[trace.nodes[c.index].id] = &c;
  return b;
}

using Deps = std::vector<std::uint64_t>;

// Two threads: on thread 1, A(3) calls a1(4), which launches k1(5) and
// k2(8); then B(6). On thread 2, C(7) waits for B (inter_thread_dep).
EtPlus two_threads() {
  EtPlus t;
  t.nodes = {node(0, 0, kProcess), node(1, 0, kThread), node(2, 0, kThread),    node(3, 1, "A"),
             node(4, 3, "a1"),     node(5, 4, "k1", true), node(6, 1, "B"),      node(7, 2, "C"),
             node(8, 4, "k2", true)};
  t.nodes[7].inter_thread_dep = 6;
  return t;
}

TEST(ChakraGraph, WalkTurnsCallOrderIntoDataDeps) {
  const EtPlus t = two_threads();
  const Built b = build(t);
  ASSERT_TRUE(b.graph.ok) << b.graph.error;
  // The process node has no deps and nothing depends on it: dropped.
  EXPECT_EQ(b.ids(), (Deps{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(b.graph.stats.dropped_dangling, 1u);
  EXPECT_EQ(b.graph.stats.dropped_roots, 1u);  // the root, its own parent: said to be harmless
  EXPECT_EQ(b.at(1).data_deps, Deps{});
  EXPECT_EQ(b.at(3).data_deps, Deps{1});
  EXPECT_EQ(b.at(4).data_deps, Deps{3});
  // A GPU node depends on the node visited before it; the one after a GPU
  // node falls back to the last CPU node.
  EXPECT_EQ(b.at(5).data_deps, Deps{4});
  EXPECT_EQ(b.at(8).data_deps, Deps{4});
  EXPECT_EQ(b.at(6).data_deps, Deps{4});
  // The inter-thread dep comes first, then the walk's.
  EXPECT_EQ(b.at(7).data_deps, (Deps{6, 2}));
}

TEST(ChakraGraph, CtrlDepIsTheParentWhenConvertedBefore) {
  EtPlus t = two_threads();
  // D(9) names as parent E(10), which comes later in the file: no ctrl dep.
  t.nodes.push_back(node(9, 10, "D"));
  t.nodes.push_back(node(10, 1, "E"));
  const Built b = build(t);
  ASSERT_TRUE(b.graph.ok) << b.graph.error;
  EXPECT_EQ(b.at(1).ctrl_dep, 0u);  // on the dropped process node, as Chakra writes it
  EXPECT_EQ(b.at(3).ctrl_dep, 1u);
  EXPECT_EQ(b.at(5).ctrl_dep, 4u);  // a GPU child right after its parent
  EXPECT_FALSE(b.at(9).ctrl_dep.has_value());
  EXPECT_EQ(b.at(10).ctrl_dep, 1u);
  EXPECT_EQ(b.at(3).kind, NodeKind::comp);
  EXPECT_EQ(b.at(5).kind, NodeKind::comp);
}

TEST(ChakraGraph, GpuNodesUnderGpuNodesAreNotConverted) {
  EtPlus t = two_threads();
  t.nodes.push_back(node(9, 5, "inner", true));
  const Built b = build(t);
  ASSERT_TRUE(b.graph.ok) << b.graph.error;
  EXPECT_EQ(b.by_id.count(9), 0u);
}

TEST(ChakraGraph, CollectivesCarryTypeSizeAndGroup) {
  EtPlus t = two_threads();
  t.nodes.push_back(node(9, 6, "nccl:all_reduce"));
  t.nodes.push_back(node(10, 9, "record_param_comms"));
  t.nodes.push_back(node(11, 10, "ncclKernel_AllReduce_RING_LL_Sum_float", true));
  t.nodes.back().comm_size = 4096;
  t.nodes.back().pg_name = "0";
  const Built b = build(t);
  ASSERT_TRUE(b.graph.ok) << b.graph.error;
  EXPECT_EQ(b.at(11).kind, NodeKind::comm_coll);
  EXPECT_FALSE(b.at(11).comm.empty());
  EXPECT_EQ(b.graph.stats.collectives, 1u);
  NodeEncoder e;
  EXPECT_EQ(b.at(11).comm, e.comm(CollKind::all_reduce, 4096, "0"));
}

TEST(ChakraGraph, SendAndRecvTakeTheirTypeFromTheLauncherAndTheGroupFromRecordParamComms) {
  EtPlus t = two_threads();
  t.nodes.push_back(node(9, 6, "nccl:send"));
  t.nodes.push_back(node(10, 9, "record_param_comms"));
  t.nodes.back().pg_name = "7";
  t.nodes.push_back(node(11, 10, "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", true));
  t.nodes.back().comm_size = 64;
  t.nodes.push_back(node(12, 6, "nccl:recv"));
  t.nodes.push_back(node(13, 12, "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", true));
  t.nodes.back().comm_size = 32;
  const Built b = build(t);
  ASSERT_TRUE(b.graph.ok) << b.graph.error;
  EXPECT_EQ(b.at(11).kind, NodeKind::comm_send);
  EXPECT_EQ(b.at(13).kind, NodeKind::comm_recv);
  NodeEncoder e;
  EXPECT_EQ(b.at(11).comm, e.comm(std::nullopt, 64, "7"));
  EXPECT_EQ(b.at(13).comm, e.comm(std::nullopt, 32, ""));
  EXPECT_EQ(b.graph.stats.sends, 1u);
  EXPECT_EQ(b.graph.stats.receives, 1u);
}

TEST(ChakraGraph, ACollectiveWithoutAKnownTypeIsRefused) {
  EtPlus t = two_threads();
  t.nodes.push_back(node(9, 6, "ncclDevKernel_Reduce_Sum_f32", true));
  const Built b = build(t);
  EXPECT_FALSE(b.graph.ok);
  EXPECT_NE(b.graph.error.find("node 9 (ncclDevKernel_Reduce_Sum_f32): a collective whose type"), std::string::npos)
      << b.graph.error;
}

TEST(ChakraGraph, ACommNodeWhoseInputsCannotBeSizedIsRefused) {
  EtPlus t = two_threads();
  t.nodes.push_back(node(9, 6, "ncclKernel_AllGather", true));
  t.nodes.back().comm_size.reset();
  const Built b = build(t);
  EXPECT_FALSE(b.graph.ok);
  EXPECT_NE(b.graph.error.find("comm_size"), std::string::npos) << b.graph.error;
}

TEST(ChakraGraph, ACycleIsRefusedWithItsNodes) {
  EtPlus t = two_threads();
  t.nodes[3].inter_thread_dep = 7;  // A waits for C, and C for B after A
  t.nodes[7].inter_thread_dep = 3;
  const Built b = build(t);
  EXPECT_FALSE(b.graph.ok);
  EXPECT_NE(b.graph.error.find("dependency cycle: "), std::string::npos) << b.graph.error;
  EXPECT_NE(b.graph.error.find("node 3 (A)"), std::string::npos) << b.graph.error;
  EXPECT_NE(b.graph.error.find("node 7 (C)"), std::string::npos) << b.graph.error;
}

TEST(ChakraGraph, ADepOnANodeThatIsNotThereIsRefused) {
  EtPlus t = two_threads();
  t.nodes[7].inter_thread_dep = 99;
  const Built b = build(t);
  EXPECT_FALSE(b.graph.ok);
  EXPECT_NE(b.graph.error.find("node 7 (C) depends on node 99"), std::string::npos) << b.graph.error;
}

TEST(ChakraGraph, DuplicateIdsAreRefused) {
  EtPlus t = two_threads();
  t.nodes.push_back(node(4, 1, "again"));
  EXPECT_FALSE(build(t).graph.ok);
}

TEST(ChakraGraph, SparseIdsWork) {
  EtPlus t = two_threads();
  for (auto& n : t.nodes) n.id = n.id * 1000000007ull;
  for (auto& n : t.nodes) {
    if (n.parent) *n.parent *= 1000000007ull;
    n.inter_thread_dep *= 1000000007ull;
  }
  const Built b = build(t);
  ASSERT_TRUE(b.graph.ok) << b.graph.error;
  EXPECT_EQ(b.at(7 * 1000000007ull).data_deps, (Deps{6 * 1000000007ull, 2 * 1000000007ull}));
}

}  // namespace
}  // namespace chakrashim::tools::convert
