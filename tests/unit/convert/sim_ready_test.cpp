// make_sim_ready on small hand-made ET+ node lists: ctrl deps on nodes not
// written go, host c10d collectives become COMM_COLL nodes off the CPU, the
// gaps between top-level ops are folded into the next op, and
// --chakra-exact changes nothing.
#include "convert/sim_ready.h"

#include <gtest/gtest.h>

#include <array>
#include <map>

#include "convert/chakra_et.pb.h"

namespace chakrashim::tools::convert {
namespace {

constexpr const char* kSimThread = "[pytorch|profiler|execution_trace|thread]";
constexpr const char* kSimProcess = "[pytorch|profiler|execution_trace|process]";

EtPlusNode sim_node(std::uint64_t id, std::int64_t parent, std::string name, std::int64_t ts_ns = -1,
                    std::int64_t incl_ns = 0, std::int64_t excl_ns = 0) {
  EtPlusNode n;
  n.id = id;
  if (parent >= 0) n.parent = static_cast<std::uint64_t>(parent);
  n.name = std::move(name);
  n.comm_size = 0;
  if (ts_ns >= 0) {
    n.timed = true;
    n.ts_ns = ts_ns;
    n.inclusive_ns = incl_ns;
    n.exclusive_ns = excl_ns;
    n.exclusive_dur = excl_ns / 1000;
  }
  return n;
}

struct SimBuilt {
  ChakraGraph graph;
  SimReadyStats stats;
  std::map<std::uint64_t, const ChakraNode*> by_id;
  const ChakraNode& at(std::uint64_t id) const { return *by_id.at(id); }
};

SimBuilt sim_build(const EtPlus& trace, ConvertOptions options = {}) {
  NodeEncoder encoder;
  SimBuilt b;
  b.graph = build_chakra_graph(trace, encoder);
  EXPECT_TRUE(b.graph.ok) << b.graph.error;
  EXPECT_TRUE(make_sim_ready(trace, b.graph, encoder, options, &b.stats)) << b.graph.error;
  for (const auto& c : b.graph.nodes) b.by_id[c.id.value_or(trace.nodes[c.index].id)] = &c;
  return b;
}

// One thread: forward [0, 10 us), a 5 us gap, backward [15, 35) with
// a child [20, 30), a 2.5 us gap, the optimizer [37.5, 40).
EtPlus one_step() {
  EtPlus t;
  t.nodes = {sim_node(0, 0, kSimProcess), sim_node(1, 0, kSimThread),
             sim_node(2, 1, "forward", 0, 10000, 10000), sim_node(3, 1, "backward", 15000, 20000, 10000),
             sim_node(4, 3, "aten::mm", 20000, 10000, 10000),
             sim_node(5, 1, "Optimizer.step#SGD.step", 37500, 2500, 2500)};
  return t;
}

TEST(SimReady, DropsTheCtrlDepOnTheProcessRootThatIsNotWritten) {
  const EtPlus t = one_step();
  const SimBuilt exact = sim_build(t, {true, true});
  ASSERT_TRUE(exact.at(1).ctrl_dep.has_value()) << "Chakra keeps it: the feeder's 'not found in index'";
  EXPECT_EQ(*exact.at(1).ctrl_dep, 0u);
  EXPECT_FALSE(exact.by_id.count(0));
  const SimBuilt b = sim_build(t);
  EXPECT_FALSE(b.at(1).ctrl_dep.has_value());
  EXPECT_EQ(b.graph.stats.ctrl_deps_dropped, 1u);
  EXPECT_EQ(*b.at(3).ctrl_dep, 1u) << "a parent that is written stays";
}

TEST(SimReady, TheProcessGroupNodeIsWrittenAsCompute) {
  EtPlus t = one_step();
  t.nodes.push_back(sim_node(6, 1, "## process_group:init ##", 39000, 500, 500));
  EXPECT_EQ(sim_build(t, {true, true}).at(6).kind, NodeKind::metadata);
  const SimBuilt b = sim_build(t);
  EXPECT_EQ(b.at(6).kind, NodeKind::comp) << "ASTRA-sim asserts on METADATA nodes";
  EXPECT_EQ(b.graph.stats.metadata_as_comp, 1u);
}

TEST(SimReady, ChakraExactLeavesDurationsTailsAndKindsAlone) {
  EtPlus t = one_step();
  t.nodes.push_back(sim_node(6, 1, "c10d::allreduce_", 41000, 1000, 1000));
  t.nodes.back().comm_size = 4096;
  const SimBuilt b = sim_build(t, {true, true});
  for (const auto& c : b.graph.nodes) {
    EXPECT_FALSE(c.duration.has_value());
    EXPECT_TRUE(c.tail.empty());
    EXPECT_NE(c.kind, NodeKind::comm_coll);
  }
  EXPECT_EQ(b.graph.stats.host_collectives, 0u);
}

TEST(SimReady, FoldsEachGapIntoTheNextTopLevelOp) {
  const SimBuilt b = sim_build(one_step());
  EXPECT_EQ(b.stats.gap_ns, 7500u);
  EXPECT_EQ(b.stats.threads, 1u);
  EXPECT_EQ(*b.at(2).duration, 10u);
  EXPECT_EQ(*b.at(3).duration, 15u) << "10 us of its own and the 5 us gap";
  EXPECT_EQ(*b.at(4).duration, 10u);
  // 2.5 us own + 2.5 us gap: the optimizer keeps its time (Chakra zeroes it).
  EXPECT_EQ(*b.at(5).duration, 5u);
  std::uint64_t sum = 0;
  for (const auto& c : b.graph.nodes) sum += c.duration.value_or(0);
  EXPECT_EQ(sum, 40u) << "the thread's 40 us, first start to last end";
}

TEST(SimReady, WithoutGapsDurationsAreTheConvertersOwn) {
  const SimBuilt b = sim_build(one_step(), {false, false});
  for (const auto& c : b.graph.nodes) EXPECT_FALSE(c.duration.has_value());
  EXPECT_EQ(b.stats.gap_ns, 0u);
}

TEST(SimReady, RoundingKeepsTheThreadsTotal) {
  // 1000 ops of 1.4 us: int() per op gives 1000 us, the total is 1400 us.
  EtPlus t;
  t.nodes = {sim_node(0, 0, kSimProcess), sim_node(1, 0, kSimThread)};
  for (std::uint64_t i = 0; i < 1000; ++i) t.nodes.push_back(sim_node(2 + i, 1, "aten::add", 1400 * i, 1400, 1400));
  const SimBuilt b = sim_build(t);
  std::uint64_t sum = 0;
  for (const auto& c : b.graph.nodes) sum += c.duration.value_or(0);
  EXPECT_EQ(sum, 1400u);
  EXPECT_EQ(b.stats.gap_ns, 0u);
}

TEST(SimReady, TheRecordingCostComesOutWhereItLands) {
  // 1 us an op: forward, backward and the optimizer are top-level (their
  // cost sits in the gaps before them), aten::mm's in backward.
  ConvertOptions options;
  options.op_cost_ns = 1000;
  const SimBuilt b = sim_build(one_step(), options);
  EXPECT_EQ(b.stats.cost_ns, 4000u);
  EXPECT_EQ(*b.at(2).duration, 9u) << "the first op's cost: from its own time, as no gap is before it";
  EXPECT_EQ(*b.at(3).duration, 13u) << "10 own + 5 gap - its own cost - aten::mm's";
  EXPECT_EQ(*b.at(4).duration, 10u);
  EXPECT_EQ(*b.at(5).duration, 4u) << "2.5 own + 2.5 gap - 1";
  std::uint64_t sum = 0;
  for (const auto& c : b.graph.nodes) sum += c.duration.value_or(0);
  EXPECT_EQ(sum, 36u) << "40 us less 4 ops' cost";
}

TEST(SimReady, MicrosCarryRoundsTheRunningTotal) {
  MicrosCarry carry;
  EXPECT_EQ(carry.add(400), 0u);
  EXPECT_EQ(carry.add(400), 1u);
  EXPECT_EQ(carry.add(400), 0u);
  EXPECT_EQ(carry.add(2600), 3u);  // 3.8 us in all -> 4
  MicrosCarry negative;
  EXPECT_EQ(negative.add(3000), 3u);
  EXPECT_EQ(negative.add(-1500), 0u);
  EXPECT_EQ(negative.add(1000), 0u);
  EXPECT_EQ(negative.add(1000), 1u);  // 3.5 us in all -> 4
}

bool cpu_op_of(const std::string& tail) {
  et::Node n;
  EXPECT_TRUE(n.ParseFromString(tail));
  for (const auto& a : n.attr())
    if (a.name() == "is_cpu_op") return a.bool_val();
  ADD_FAILURE() << "no is_cpu_op";
  return true;
}

std::map<std::string, std::string> comm_attrs(const std::string& comm) {
  et::Node n;
  EXPECT_TRUE(n.ParseFromString(comm));
  std::map<std::string, std::string> out;
  for (const auto& a : n.attr())
    out[a.name()] = a.has_string_val() ? a.string_val() : std::to_string(a.int64_val());
  return out;
}

EtPlus gloo_step(NodeEncoder& encoder) {
  EtPlus t = one_step();
  TailFields tail;
  tail.op_schema = "c10d::allreduce_(Tensor[] tensors, ...)";
  t.nodes.push_back(sim_node(6, 3, "c10d::allreduce_", 25000, 1000, 1000));
  t.nodes.back().comm_size = 4 * 2120;
  t.nodes.push_back(sim_node(7, 3, "c10d::barrier", 27000, 500, 500));
  t.nodes.back().comm_size = 4;
  t.nodes.push_back(sim_node(8, 3, "c10d::broadcast_", 28000, 500, 500));
  t.nodes.back().comm_size = 64;
  t.nodes.back().pg_name = "1";
  for (auto& n : t.nodes) n.tail = encoder.tail(tail);
  return t;
}

TEST(SimReady, HostCollectivesBecomeCommNodesOffTheCpu) {
  NodeEncoder encoder;
  const EtPlus t = gloo_step(encoder);
  const SimBuilt b = sim_build(t);
  EXPECT_EQ(b.graph.stats.host_collectives, 2u);
  EXPECT_EQ(b.graph.stats.collectives, 2u);
  const ChakraNode& ar = b.at(6);
  EXPECT_EQ(ar.kind, NodeKind::comm_coll);
  EXPECT_FALSE(cpu_op_of(ar.tail)) << "ASTRA-sim: 'Comm node should not be on CPU'";
  const auto a = comm_attrs(ar.comm);
  EXPECT_EQ(a.at("comm_type"), "0");
  EXPECT_EQ(a.at("comm_size"), "8480");
  EXPECT_FALSE(a.count("pg_name")) << "no group known: the default one";
  EXPECT_FALSE(ar.duration.has_value()) << "its time is the network's";
  EXPECT_EQ(b.at(7).kind, NodeKind::comp) << "ASTRA-sim has no barrier";
  EXPECT_TRUE(cpu_op_of(t.nodes[7].tail));
  const auto bc = comm_attrs(b.at(8).comm);
  EXPECT_EQ(bc.at("comm_type"), "5");
  EXPECT_EQ(bc.at("pg_name"), "1");
  EXPECT_EQ(b.stats.groups.at("0"), 1u);
  EXPECT_EQ(b.stats.groups.at("1"), 1u);
}

// Stage 0 of a two-stage pipeline over gloo: it sends its activations to
// rank 1 and receives their gradients back, under the default group only.
EtPlus pipeline_stage(NodeEncoder& encoder, const std::string& groups_values) {
  EtPlus t = one_step();
  TailFields tail;
  tail.op_schema = "c10d::send(Tensor[] tensors, ProcessGroup process_group, int dst, int tag) -> Work";
  t.nodes.push_back(sim_node(6, 2, "c10d::send", 8000, 500, 500));
  t.nodes.back().comm_size = 512;
  t.nodes.back().p2p_peer = 1;
  t.nodes.back().p2p_tag = 0;
  t.nodes.push_back(sim_node(7, 3, "c10d::recv_", 16000, 800, 800));
  t.nodes.back().comm_size = 512;
  t.nodes.back().p2p_peer = 1;
  t.nodes.back().p2p_tag = 3;
  for (auto& n : t.nodes) n.tail = encoder.tail(tail);
  TailFields init;
  init.inputs.values = groups_values;
  t.nodes.push_back(sim_node(8, 1, "## process_group:init ##", 39000, 500, 500));
  t.nodes.back().tail = encoder.tail(init);
  return t;
}

TEST(SimReady, SendAndRecvBecomeCommNodesBetweenGlobalRanks) {
  NodeEncoder encoder;
  const EtPlus t = pipeline_stage(
      encoder, R"(['[{"pg_name": "0", "pg_desc": "default_pg", "ranks": [], "group_size": 2}]'])");
  ConvertOptions options;
  options.rank = 0;
  const SimBuilt b = sim_build(t, options);
  EXPECT_EQ(b.graph.stats.sends, 1u);
  EXPECT_EQ(b.graph.stats.receives, 1u);
  EXPECT_EQ(b.stats.p2p, 2u);
  EXPECT_EQ(b.stats.p2p_unmapped, 0u);
  const ChakraNode& send = b.at(6);
  EXPECT_EQ(send.kind, NodeKind::comm_send);
  EXPECT_FALSE(cpu_op_of(send.tail)) << "ASTRA-sim: 'Comm node should not be on CPU'";
  auto a = comm_attrs(send.comm);
  EXPECT_EQ(a.at("comm_src"), "0");
  EXPECT_EQ(a.at("comm_dst"), "1");
  EXPECT_EQ(a.at("comm_tag"), "0");
  EXPECT_EQ(a.at("comm_size"), "512");
  EXPECT_FALSE(a.count("comm_type")) << "a send is no collective";
  const ChakraNode& recv = b.at(7);
  EXPECT_EQ(recv.kind, NodeKind::comm_recv);
  a = comm_attrs(recv.comm);
  EXPECT_EQ(a.at("comm_src"), "1");
  EXPECT_EQ(a.at("comm_dst"), "0");
  EXPECT_EQ(a.at("comm_tag"), "3");
  EXPECT_FALSE(send.duration.has_value()) << "its time is the network's";
  EXPECT_FALSE(recv.duration.has_value());
  using Key = std::array<std::int64_t, 4>;
  EXPECT_EQ(b.stats.p2p_messages.at(Key{0, 1, 0, 512}).sends, 1u);
  EXPECT_EQ(b.stats.p2p_messages.at(Key{1, 0, 3, 512}).receives, 1u);
}

TEST(SimReady, SendAndRecvWhosePeerCannotBeToldStayComputeAndAreCounted) {
  NodeEncoder encoder;
  const EtPlus t = pipeline_stage(
      encoder, R"(['[{"pg_name": "0", "ranks": [], "group_size": 4}, {"pg_name": "1", "ranks": [1, 3], "group_size": 2}]'])");
  ConvertOptions options;
  options.rank = 1;
  const SimBuilt b = sim_build(t, options);
  EXPECT_EQ(b.at(6).kind, NodeKind::comp);
  EXPECT_EQ(b.at(7).kind, NodeKind::comp);
  EXPECT_EQ(b.stats.p2p_unmapped, 2u);
  EXPECT_NE(b.stats.p2p_unmapped_why.find("names no process group"), std::string::npos) << b.stats.p2p_unmapped_why;
  const SimBuilt unknown = sim_build(t);  // no rank given
  EXPECT_EQ(unknown.stats.p2p_unmapped, 2u);
}

// The end of a gloo DDP step: the last AccumulateGrad issues the bucket's
// all-reduce; gloo's async record opens under it and ends when gloo's
// thread is done, 5 us later; the thread waits, then copies the bucket back
// (nested under the record in the ET, as the thread ran it while the
// record was open) and steps the optimizer.
EtPlus ddp_step_end(NodeEncoder& encoder) {
  EtPlus t;
  t.nodes = {sim_node(0, 0, kSimProcess), sim_node(1, 0, kSimThread),
             sim_node(2, 1, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 0, 2000, 1000),
             sim_node(3, 2, "c10d::allreduce_", 1000, 500, 500),
             sim_node(4, 3, "gloo:all_reduce", 1200, 6000, 5000),
             sim_node(5, 4, "torch.distributed.ddp.reducer::copy_bucket_to_grad", 7500, 1000, 1000),
             sim_node(6, 1, "Optimizer.step#SGD.step", 9000, 2000, 2000)};
  t.nodes[3].comm_size = 4096;
  TailFields tail;
  for (auto& n : t.nodes) n.tail = encoder.tail(tail);
  return t;
}

TEST(SimReady, AsyncWorkRecordsAreNoComputeAndTheWaitIsTheCollectives) {
  NodeEncoder encoder;
  const SimBuilt b = sim_build(ddp_step_end(encoder));
  EXPECT_EQ(b.at(3).kind, NodeKind::comm_coll);
  EXPECT_EQ(b.at(4).kind, NodeKind::comp);
  EXPECT_EQ(*b.at(4).duration, 0u) << "its span is the all-reduce's, which the comm node simulates";
  EXPECT_EQ(b.stats.async_records, 1u);
  // The thread waited from the AccumulateGrad's end (2 us) to the copy
  // (7.5 us) while the all-reduce was outstanding (to 7.2 us): 5.2 us of
  // waiting left to the comm node, 0.3 us of gap folded into the copy,
  // which counts as a top-level op (it ran after the AccumulateGrad ended).
  EXPECT_EQ(b.stats.comm_wait_ns, 5200u);
  EXPECT_EQ(b.stats.gap_ns, 300u + 500u);  // and 0.5 us before the optimizer step
  EXPECT_EQ(*b.at(5).duration, 1u);        // 1 us of its own + 0.3 us of gap
  EXPECT_EQ(*b.at(6).duration, 3u);        // 2 us + 0.5 us, carried
  std::uint64_t host = 0;
  for (const auto& c : b.graph.nodes)
    if (c.kind == NodeKind::comp && c.duration) host += *c.duration;
  EXPECT_EQ(host, 5u) << "4.8 us of ops' own time and gaps; the 5.2 us of waiting is the comm node's";
}

TEST(SimReady, AFunctionalCollectivesWaitIsTheCollectivesNotCompute) {
  // Tensor parallel (DTensor): _c10d_functional::all_reduce issues the
  // all-reduce (c10d::allreduce_, gloo's record from 1.2 to 7.2 us), and
  // _c10d_functional::wait_tensor then waits for it, 2 to 7.5 us: its time
  // to 7.2 us is the collective's, which the comm node simulates. Counted
  // as compute, a 2-rank TP job simulated to 1.37 of its window.
  NodeEncoder encoder;
  EtPlus t = ddp_step_end(encoder);
  t.nodes[2].name = "_c10d_functional::all_reduce";
  t.nodes[5] = sim_node(5, 1, "_c10d_functional::wait_tensor", 2000, 5500, 5500);
  t.nodes[5].tail = t.nodes[4].tail;
  const SimBuilt b = sim_build(t);
  EXPECT_EQ(b.at(3).kind, NodeKind::comm_coll);
  EXPECT_EQ(*b.at(5).duration, 0u) << "5.2 of its 5.5 us waited for the all-reduce; 0.3 us rounds to 0";
  EXPECT_EQ(b.stats.comm_wait_ns, 5200u);
  // The same op with nothing outstanding keeps its time.
  EtPlus alone = t;
  alone.nodes[4].name = "aten::add";
  alone.nodes[4].inclusive_ns = alone.nodes[4].exclusive_ns = 100;
  const SimBuilt kept = sim_build(alone);
  EXPECT_EQ(*kept.at(5).duration, 6u) << "5.5 us of its own, and the gap before it, carried";
}

TEST(SimReady, ASendersWaitStaysForTheSimulatorDoesNotHoldASender) {
  // gloo holds a send until its receiver takes it; ASTRA-sim's send ends
  // when its bytes are out: the sender's wait is kept as time of its own.
  NodeEncoder encoder;
  EtPlus t = ddp_step_end(encoder);
  t.nodes[3].name = "c10d::send";
  t.nodes[4].name = "gloo:send";
  const SimBuilt b = sim_build(t);
  EXPECT_EQ(*b.at(4).duration, 0u);
  EXPECT_EQ(b.stats.comm_wait_ns, 0u);
  EXPECT_EQ(b.stats.gap_ns, 5500u + 500u);
}

TEST(SimReady, EachCommNodeIsSampledWithItsAsyncRecordsTime) {
  NodeEncoder encoder;
  const SimBuilt b = sim_build(ddp_step_end(encoder));
  ASSERT_EQ(b.stats.comm_samples.size(), 1u);
  const auto& [key, sample] = *b.stats.comm_samples.begin();
  EXPECT_EQ(key, "coll  0 #0") << "the default group's first all-reduce: the same key on every rank";
  EXPECT_EQ(sample.shape, CommShape::all_reduce);
  EXPECT_EQ(sample.npus, 0u) << "the world, known to the runner";
  EXPECT_EQ(sample.bytes, 4096);
  EXPECT_EQ(sample.took_ns, 6000) << "gloo:all_reduce from issue to completion";
}

TEST(SimReady, RanksWithNcclKernelsKeepTheirHostCollectivesAsCompute) {
  NodeEncoder encoder;
  EtPlus t = gloo_step(encoder);
  EtPlusNode kernel = sim_node(9, 6, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 25100, 800, 800);
  kernel.gpu = true;
  kernel.comm_size = 8480;
  kernel.tail = t.nodes[6].tail;
  t.nodes.push_back(kernel);
  const SimBuilt b = sim_build(t);
  EXPECT_EQ(b.graph.stats.host_collectives, 0u);
  EXPECT_EQ(b.graph.stats.collectives, 1u);
  EXPECT_EQ(b.at(6).kind, NodeKind::comp);
  EXPECT_EQ(b.at(9).kind, NodeKind::comm_coll);
  // Nothing waits for the kernel in Chakra's graph: the rank ends on a GPU
  // node of no time after it, not on the collective (sim_ready.h, 4.).
  const ChakraNode& done = b.graph.nodes.back();
  EXPECT_TRUE(done.comm_done);
  EXPECT_EQ(done.id, std::optional<std::uint64_t>(10));
  EXPECT_EQ(done.kind, NodeKind::comp);
  EXPECT_EQ(done.data_deps, std::vector<std::uint64_t>{9});
  EXPECT_EQ(done.duration, std::optional<std::uint64_t>(0));
  EXPECT_FALSE(cpu_op_of(done.tail));
  EXPECT_EQ(b.stats.comm_sinks, 1u);
  EXPECT_EQ(b.graph.stats.written, b.graph.nodes.size());
  // The kernel's time is the network fit's sample, as gloo's record is.
  ASSERT_EQ(b.stats.comm_samples.size(), 1u);
  const CommSample& s = b.stats.comm_samples.begin()->second;
  EXPECT_EQ(b.stats.comm_samples.begin()->first, "coll  0 #0");
  EXPECT_EQ(s.shape, CommShape::all_reduce);
  EXPECT_EQ(s.bytes, 8480);
  EXPECT_EQ(s.took_ns, 800);
}

TEST(SimReady, HostCommNodesNeedNoEndNode) {
  NodeEncoder encoder;
  const SimBuilt b = sim_build(gloo_step(encoder));
  EXPECT_EQ(b.stats.comm_sinks, 0u);
  for (const auto& c : b.graph.nodes) EXPECT_FALSE(c.comm_done);
  // Not even a thread that ends on a send nothing waits for: a gloo rank's
  // output stays what it was (its comm nodes are in the thread's chain).
  EtPlus t = pipeline_stage(encoder, R"(['[{"pg_name": "0", "ranks": [], "group_size": 2}]'])");
  t.nodes.push_back(sim_node(9, 1, "c10d::send", 45000, 500, 500));
  t.nodes.back().comm_size = 512;
  t.nodes.back().p2p_peer = 1;
  t.nodes.back().p2p_tag = 0;
  t.nodes.back().tail = t.nodes[6].tail;
  ConvertOptions options;
  options.rank = 0;
  const SimBuilt last_send = sim_build(t, options);
  EXPECT_EQ(last_send.at(9).kind, NodeKind::comm_send);
  EXPECT_EQ(last_send.stats.comm_sinks, 0u);
  for (const auto& c : last_send.graph.nodes) EXPECT_FALSE(c.comm_done);
}

}  // namespace
}  // namespace chakrashim::tools::convert
