// NCCL's send/recv kernels as ASTRA-sim messages (nccl_p2p.h), on small
// hand-made ET+ node lists shaped as ProcessGroupNCCL records them: each
// c10d::send / c10d::recv_ opens record_param_comms, under which the link
// hangs the ncclDevKernel_SendRecv kernel it launched; a batch_isend_irecv
// group's one kernel hangs under its last op.
#include "convert/nccl_p2p.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "convert/chakra_et.pb.h"
#include "convert/sim_ready.h"

namespace chakrashim::tools::convert {
namespace {

constexpr const char* kThread = "[pytorch|profiler|execution_trace|thread]";
constexpr const char* kProcess = "[pytorch|profiler|execution_trace|process]";
constexpr const char* kSendRecv = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
constexpr std::int64_t kCompute = 7, kNccl = 20;  // streams

class Trace {
 public:
  explicit Trace(std::string groups = R"(['[{"pg_name": "0", "pg_desc": "default_pg", "ranks": [], "group_size": 2}]'])")
      : groups_(std::move(groups)) {
    add(0, 0, kProcess);
    add(1, 0, kThread);
  }

  EtPlusNode& add(std::uint64_t id, std::uint64_t parent, std::string name, std::int64_t ts_us = -1,
                  std::int64_t dur_us = 0) {
    EtPlusNode n;
    n.id = id;
    n.parent = parent;
    n.name = std::move(name);
    n.comm_size = 0;
    if (ts_us >= 0) {
      n.timed = true;
      n.ts_ns = ts_us * 1000;
      n.inclusive_ns = n.exclusive_ns = dur_us * 1000;
      n.exclusive_dur = dur_us;
    }
    t_.nodes.push_back(std::move(n));
    return t_.nodes.back();
  }
  // c10d::send or recv_ (id), its record_param_comms (id + 1) and, when
  // `kernel`, the SendRecv kernel (id + 2) on the NCCL stream.
  void p2p(std::uint64_t id, const std::string& op, std::int64_t peer, std::int64_t tag, std::int64_t bytes,
           std::int64_t ts_us, bool kernel, std::int64_t kernel_ts_us = -1, std::string pg = "0") {
    EtPlusNode& n = add(id, 1, op, ts_us, 20);
    n.p2p_peer = peer;
    n.p2p_tag = tag;
    n.comm_size = bytes;
    n.pg_name = pg;
    add(id + 1, id, "record_param_comms", ts_us + 2, 10).comm_size = bytes;
    if (kernel) gpu(id + 2, id + 1, kSendRecv, kernel_ts_us < 0 ? ts_us + 30 : kernel_ts_us, 50, kNccl).comm_size = bytes;
  }
  EtPlusNode& gpu(std::uint64_t id, std::uint64_t parent, std::string name, std::int64_t ts_us, std::int64_t dur_us,
                  std::int64_t stream) {
    EtPlusNode& n = add(id, parent, std::move(name), ts_us, dur_us);
    n.gpu = true;
    n.stream = stream;
    return n;
  }

  EtPlus& t() { return t_; }
  const EtPlus& done(NodeEncoder& encoder) {
    TailFields tail;
    for (auto& n : t_.nodes) {
      tail.is_cpu_op = !n.gpu;
      n.tail = encoder.tail(tail);
    }
    TailFields init;
    init.inputs.values = groups_;
    add(999, 1, "## process_group:init ##", 0, 1).tail = encoder.tail(init);
    return t_;
  }

 private:
  std::string groups_;
  EtPlus t_;
};

struct Built {
  ChakraGraph graph;
  SimReadyStats stats;
  std::map<std::uint64_t, const ChakraNode*> by_id;  // the id written
  const EtPlus* trace = nullptr;
  const ChakraNode& at(std::uint64_t id) const { return *by_id.at(id); }
  std::map<std::string, std::string> comm(std::uint64_t id) const {
    et::Node n;
    EXPECT_TRUE(n.ParseFromString(at(id).comm));
    std::map<std::string, std::string> out;
    for (const auto& a : n.attr()) out[a.name()] = a.has_string_val() ? a.string_val() : std::to_string(a.int64_val());
    return out;
  }
  bool depends(std::uint64_t id, std::uint64_t on) const {
    const auto& d = at(id).data_deps;
    return std::find(d.begin(), d.end(), on) != d.end();
  }
};

Built build_sim(const EtPlus& t, NodeEncoder& encoder, std::optional<std::uint64_t> rank) {
  Built b;
  b.trace = &t;
  b.graph = build_chakra_graph(t, encoder);
  EXPECT_TRUE(b.graph.ok) << b.graph.error;
  ConvertOptions options;
  options.rank = rank;
  EXPECT_TRUE(make_sim_ready(t, b.graph, encoder, options, &b.stats)) << b.graph.error;
  for (const auto& c : b.graph.nodes) b.by_id[c.id.value_or(t.nodes[c.index].id)] = &c;
  return b;
}

TEST(NcclP2p, AKernelUnderItsSendOrRecvGetsTheEndsAndTagOfItsOp) {
  // Stage 0 of two: it sends activations to rank 1 (tag 0) and receives
  // their gradients (tag 3).
  Trace trace;
  trace.p2p(10, "c10d::send", 1, 0, 512, 100, true);
  trace.p2p(20, "c10d::recv_", 1, 3, 256, 300, true);
  NodeEncoder encoder;
  const EtPlus& t = trace.done(encoder);
  const Built b = build_sim(t, encoder, 0);
  EXPECT_EQ(b.graph.stats.sends, 1u);
  EXPECT_EQ(b.graph.stats.receives, 1u);
  EXPECT_EQ(b.stats.p2p, 2u);
  EXPECT_EQ(b.stats.p2p_unmapped, 0u) << b.stats.p2p_unmapped_why;
  EXPECT_EQ(b.at(12).kind, NodeKind::comm_send);
  auto a = b.comm(12);
  EXPECT_EQ(a.at("comm_src"), "0");
  EXPECT_EQ(a.at("comm_dst"), "1");
  EXPECT_EQ(a.at("comm_tag"), "0");
  EXPECT_EQ(a.at("comm_size"), "512");
  EXPECT_EQ(a.at("pg_name"), "0");
  EXPECT_EQ(b.at(22).kind, NodeKind::comm_recv);
  a = b.comm(22);
  EXPECT_EQ(a.at("comm_src"), "1");
  EXPECT_EQ(a.at("comm_dst"), "0");
  EXPECT_EQ(a.at("comm_tag"), "3");
  EXPECT_EQ(a.at("comm_size"), "256");
  EXPECT_EQ(b.at(10).kind, NodeKind::comp) << "the host op is the launcher only";
  // No node added but the rank's end after its messages (sim_ready.h, 4.),
  // which nothing in Chakra's graph waits for.
  EXPECT_EQ(b.graph.nodes.size(), build_chakra_graph(t, encoder).nodes.size() + 1);
  EXPECT_TRUE(b.graph.nodes.back().comm_done);
  EXPECT_EQ(b.graph.nodes.back().data_deps, (std::vector<std::uint64_t>{22}))
      << "the receive, after the send on NCCL's stream";
  EXPECT_TRUE(b.depends(22, 12));
  using Key = std::array<std::int64_t, 4>;
  EXPECT_EQ(b.stats.p2p_messages.at(Key{0, 1, 0, 512}).sends, 1u);
  EXPECT_EQ(b.stats.p2p_messages.at(Key{1, 0, 3, 256}).receives, 1u);
  // The network fit's samples: each message's kernel time.
  ASSERT_EQ(b.stats.comm_samples.size(), 2u);
  const CommSample& sent = b.stats.comm_samples.at("p2p 0>1 tag 0 bytes 512 #0");
  EXPECT_EQ(sent.shape, CommShape::p2p);
  EXPECT_EQ(sent.bytes, 512);
  EXPECT_EQ(sent.took_ns, 50000);
  EXPECT_EQ(b.stats.comm_samples.at("p2p 1>0 tag 3 bytes 256 #0").took_ns, 50000);
}

TEST(NcclP2p, ThePeerIsAGroupRankMappedToTheGlobalOne) {
  // Rank 3 of a 4-rank job, in the pipeline group of ranks 1 and 3 (group
  // rank 1): its receive from group rank 0 comes from global rank 1.
  Trace trace(R"(['[{"pg_name": "0", "ranks": [], "group_size": 4}, {"pg_name": "5", "ranks": [1, 3], "group_size": 2}]'])");
  trace.p2p(10, "c10d::recv_", 0, 0, 64, 100, true, -1, "5");
  NodeEncoder encoder;
  const Built b = build_sim(trace.done(encoder), encoder, 3);
  const auto a = b.comm(12);
  EXPECT_EQ(a.at("comm_src"), "1");
  EXPECT_EQ(a.at("comm_dst"), "3");
  EXPECT_EQ(a.at("pg_name"), "5");
}

TEST(NcclP2p, ABatchGroupsOneKernelIsWrittenAsAMessagePerOpThatGoOutTogether) {
  // batch_isend_irecv([isend to 1, irecv from 1]): one kernel, launched
  // after both ops, under the last (the receive); then a compute kernel
  // under the next op, which depends on the SendRecv kernel in the graph.
  Trace trace;
  trace.p2p(10, "c10d::send", 1, 0, 512, 100, false);
  trace.p2p(20, "c10d::recv_", 1, 0, 256, 150, true, 400);
  trace.add(30, 1, "aten::mm", 200, 10);
  trace.gpu(31, 30, "void gemm_kernel<float>()", 500, 40, kCompute);
  // A later single send, with its own kernel: not part of the group.
  trace.p2p(40, "c10d::send", 1, 1, 128, 600, true);
  NodeEncoder encoder;
  const EtPlus& t = trace.done(encoder);
  const Built b = build_sim(t, encoder, 0);
  EXPECT_EQ(b.stats.nccl_group_kernels, 1u);
  EXPECT_EQ(b.stats.nccl_group_messages, 2u);
  EXPECT_EQ(b.stats.p2p, 3u);
  EXPECT_EQ(b.graph.stats.sends, 2u);
  EXPECT_EQ(b.graph.stats.receives, 1u);
  // The kernel is the group's first op, the send; its copy the receive,
  // with an id after every other.
  EXPECT_EQ(b.at(22).kind, NodeKind::comm_send);
  EXPECT_EQ(b.comm(22).at("comm_size"), "512");
  const std::uint64_t copy = 1000;  // the metadata node, 999, is the largest id
  ASSERT_TRUE(b.by_id.count(copy)) << "the receive's own node";
  EXPECT_EQ(b.at(copy).kind, NodeKind::comm_recv);
  const auto a = b.comm(copy);
  EXPECT_EQ(a.at("comm_src"), "1");
  EXPECT_EQ(a.at("comm_dst"), "0");
  EXPECT_EQ(a.at("comm_size"), "256");
  EXPECT_EQ(b.at(copy).data_deps, b.at(22).data_deps) << "they go out together";
  EXPECT_FALSE(b.depends(copy, 22)) << "not chained";
  EXPECT_EQ(b.graph.nodes[b.graph.nodes.size() - 2].id, copy) << "after every other, in id order";
  EXPECT_TRUE(b.graph.nodes.back().comm_done) << "then the rank's end";
  EXPECT_EQ(b.graph.nodes.back().id, std::optional<std::uint64_t>(copy + 1));
  EXPECT_EQ(b.at(42).kind, NodeKind::comm_send);
  EXPECT_EQ(b.comm(42).at("comm_tag"), "1");
  // Whatever waits for the kernel waits for both messages.
  for (const auto& [id, c] : b.by_id) {
    if (b.depends(id, 22)) {
      EXPECT_TRUE(b.depends(id, copy)) << "node " << id;
    }
  }
  EXPECT_TRUE(b.depends(31, 22)) << "the compute after the receive waits for it";
  EXPECT_TRUE(b.depends(31, copy));
}

TEST(NcclP2p, ABatchGroupIsOneSampleItsLargestMessageAgainstTheKernelsTime) {
  // batch_isend_irecv([isend of 512 bytes to 1, irecv of 256 from 1]): one
  // kernel of 50 us moved both at once, and the simulator sends them at
  // once: the group takes as long as its larger message there. Each
  // message with the kernel's whole time made the 256 bytes as slow as
  // the 512 for the fit.
  Trace trace;
  trace.p2p(10, "c10d::send", 1, 0, 512, 100, false);
  trace.p2p(20, "c10d::recv_", 1, 0, 256, 150, true, 400);
  NodeEncoder encoder;
  const Built b = build_sim(trace.done(encoder), encoder, 0);
  ASSERT_EQ(b.stats.comm_samples.size(), 1u);
  const auto& [key, s] = *b.stats.comm_samples.begin();
  EXPECT_EQ(key, "p2p group [p2p 0>1 tag 0 bytes 512; p2p 1>0 tag 0 bytes 256] #0");
  EXPECT_EQ(s.bytes, 512);
  EXPECT_EQ(s.took_ns, 50000);
  // Rank 1's kernel of the same group (its receive, then its send) is
  // keyed alike: the fit takes the least time of the two ranks.
  Trace peer;
  peer.p2p(10, "c10d::recv_", 0, 0, 512, 100, false);
  peer.p2p(20, "c10d::send", 0, 0, 256, 150, true, 400);
  NodeEncoder peer_encoder;
  const Built p = build_sim(peer.done(peer_encoder), peer_encoder, 1);
  ASSERT_EQ(p.stats.comm_samples.size(), 1u);
  EXPECT_EQ(p.stats.comm_samples.begin()->first, key);
}

TEST(NcclP2p, AMessageWaitsForTheWorkBeforeItAndTheWorkAfterAReceiveWaitsForIt) {
  // forward's last kernel [100, 150) on the compute stream, then the send's
  // kernel at 160 on NCCL's; a receive's kernel [300, 350), then the
  // backward's kernels at 360 and 400.
  Trace trace;
  trace.add(5, 1, "aten::linear", 50, 10);
  trace.gpu(6, 5, "void gemm_fwd()", 100, 50, kCompute);
  trace.p2p(10, "c10d::send", 1, 0, 512, 90, true, 160);
  trace.p2p(20, "c10d::recv_", 1, 3, 512, 200, true, 300);
  trace.add(30, 1, "aten::mm", 210, 10);
  trace.gpu(31, 30, "void gemm_bwd()", 360, 20, kCompute);
  trace.gpu(32, 30, "void gemm_bwd2()", 400, 20, kCompute);
  NodeEncoder encoder;
  const Built b = build_sim(trace.done(encoder), encoder, 0);
  EXPECT_TRUE(b.depends(12, 6)) << "the send leaves once its data is made";
  EXPECT_TRUE(b.depends(22, 12)) << "the NCCL stream runs in order";
  EXPECT_TRUE(b.depends(22, 6));
  EXPECT_TRUE(b.depends(31, 22)) << "the backward waits for the gradient received";
  EXPECT_FALSE(b.depends(32, 22)) << "only the first node after it, per stream";
  EXPECT_FALSE(b.depends(6, 12)) << "nothing waits for a send";
}

TEST(NcclP2p, AKernelWhoseMessageCannotBeToldIsComputeOnTheGpuAndSaid) {
  Trace trace;
  trace.p2p(10, "c10d::send", 1, 0, 512, 100, true);
  NodeEncoder encoder;
  const EtPlus& t = trace.done(encoder);
  const Built unknown_rank = build_sim(t, encoder, std::nullopt);
  EXPECT_EQ(unknown_rank.at(12).kind, NodeKind::comp) << "a send without ends stops ASTRA-sim";
  EXPECT_TRUE(unknown_rank.at(12).comm.empty());
  EXPECT_EQ(unknown_rank.graph.stats.sends, 0u);
  EXPECT_EQ(unknown_rank.stats.p2p_unmapped, 1u);
  EXPECT_NE(unknown_rank.stats.p2p_unmapped_why.find("rank is not known"), std::string::npos);

  Trace subgroup(R"(['[{"pg_name": "0", "ranks": [], "group_size": 4}, {"pg_name": "1", "ranks": [1, 3], "group_size": 2}]'])");
  subgroup.p2p(10, "c10d::send", 1, 0, 512, 100, true, -1, "");
  const Built unnamed = build_sim(subgroup.done(encoder), encoder, 1);
  EXPECT_EQ(unnamed.at(12).kind, NodeKind::comp);
  EXPECT_NE(unnamed.stats.p2p_unmapped_why.find("names no process group"), std::string::npos)
      << unnamed.stats.p2p_unmapped_why;

  // A kernel the link hung under some other op: no guess.
  Trace elsewhere;
  elsewhere.add(10, 1, "c10d::recv_", 100, 20);
  elsewhere.add(11, 10, "record_param_comms", 102, 10);
  elsewhere.gpu(12, 11, kSendRecv, 130, 50, kNccl).comm_size = 8;
  const Built orphan = build_sim(elsewhere.done(encoder), encoder, 0);
  EXPECT_EQ(orphan.at(12).kind, NodeKind::comp);
  EXPECT_NE(orphan.stats.p2p_unmapped_why.find("inputs are not"), std::string::npos) << orphan.stats.p2p_unmapped_why;
}

TEST(NcclP2p, AGroupsOpsAreNeverHandedToTheNextGroupsKernel) {
  // Group 1 (send, recv): its kernel hung under an op that ran after them,
  // which the converter writes as an all-to-all; group 2 (send, recv): its
  // kernel under its last op, as usual.
  Trace trace;
  trace.p2p(10, "c10d::send", 1, 0, 512, 100, false);
  trace.p2p(20, "c10d::recv_", 1, 0, 256, 150, false);
  trace.add(25, 1, "aten::empty", 180, 5);
  trace.gpu(26, 25, kSendRecv, 300, 50, kNccl).comm_size = 8;
  trace.p2p(30, "c10d::send", 1, 0, 512, 400, false);
  trace.p2p(40, "c10d::recv_", 1, 0, 256, 450, true, 600);
  NodeEncoder encoder;
  const Built b = build_sim(trace.done(encoder), encoder, 0);
  EXPECT_EQ(b.at(26).kind, NodeKind::comm_coll) << "the converter's own reading of it, left alone";
  EXPECT_EQ(b.stats.nccl_group_messages, 2u) << "group 2's kernel carries group 2 only";
  EXPECT_EQ(b.stats.p2p, 2u);
  EXPECT_EQ(b.stats.p2p_unmapped, 2u) << "group 1's ops, said";
  EXPECT_NE(b.stats.p2p_unmapped_why.find("node 10 (c10d::send)"), std::string::npos) << b.stats.p2p_unmapped_why;
  EXPECT_EQ(b.graph.stats.sends, 1u);
  EXPECT_EQ(b.graph.stats.receives, 1u);
}

TEST(NcclP2p, OpsWhoseKernelIsNotInTheWindowAreCounted) {
  Trace trace;
  trace.p2p(10, "c10d::send", 1, 0, 512, 100, true);
  trace.p2p(20, "c10d::send", 1, 0, 512, 300, false);  // the window ended before its launch
  NodeEncoder encoder;
  const Built b = build_sim(trace.done(encoder), encoder, 0);
  EXPECT_EQ(b.stats.p2p, 1u);
  EXPECT_EQ(b.stats.p2p_unmapped, 1u);
  EXPECT_NE(b.stats.p2p_unmapped_why.find("no NCCL kernel"), std::string::npos) << b.stats.p2p_unmapped_why;
}

TEST(NcclP2p, ReceivesOfNoTimeAtOneInstantDoNotWaitForEachOther) {
  Trace trace;
  trace.p2p(10, "c10d::recv_", 1, 0, 64, 100, false);
  trace.gpu(12, 11, kSendRecv, 300, 0, kNccl).comm_size = 64;
  trace.p2p(20, "c10d::recv_", 1, 1, 64, 150, false);
  trace.gpu(22, 21, kSendRecv, 300, 0, kNccl + 1).comm_size = 64;
  NodeEncoder encoder;
  const Built b = build_sim(trace.done(encoder), encoder, 0);
  ASSERT_EQ(b.stats.p2p, 2u);
  EXPECT_FALSE(b.depends(12, 22) && b.depends(22, 12)) << "a cycle: ASTRA-sim would wait for ever";
  EXPECT_TRUE(b.depends(22, 12)) << "the later in the graph waits";
}

TEST(NcclP2p, AMessageWaitsForTheLastNodeThatEndedNotTheOneStillRunning) {
  Trace trace;
  trace.add(5, 1, "aten::linear", 50, 10);
  trace.gpu(6, 5, "void gemm_a()", 100, 100, kCompute);  // [100, 200)
  trace.gpu(7, 5, "void gemm_b()", 210, 190, kCompute);  // [210, 400): running at 300
  trace.p2p(10, "c10d::send", 1, 0, 512, 90, true, 300);
  NodeEncoder encoder;
  const Built b = build_sim(trace.done(encoder), encoder, 0);
  EXPECT_TRUE(b.depends(12, 6));
  EXPECT_FALSE(b.depends(12, 7)) << "it had not ended when the send began";
}

TEST(NcclP2p, EachMessageOfAKindIsItsOwnSample) {
  Trace trace;
  trace.p2p(10, "c10d::send", 1, 0, 512, 100, true, 200);
  trace.p2p(20, "c10d::send", 1, 0, 512, 300, true, 400);
  trace.t().nodes.back().inclusive_ns = 70000;
  NodeEncoder encoder;
  const Built b = build_sim(trace.done(encoder), encoder, 0);
  EXPECT_EQ(b.stats.comm_samples.at("p2p 0>1 tag 0 bytes 512 #0").took_ns, 50000);
  EXPECT_EQ(b.stats.comm_samples.at("p2p 0>1 tag 0 bytes 512 #1").took_ns, 70000);
}

TEST(NcclP2p, RanksWithoutSendRecvKernelsAreLeftAlone) {
  Trace trace;
  trace.add(5, 1, "aten::linear", 50, 10);
  trace.gpu(6, 5, "void gemm_fwd()", 100, 50, kCompute);
  NodeEncoder encoder;
  const EtPlus& t = trace.done(encoder);
  const Built b = build_sim(t, encoder, 0);
  EXPECT_EQ(b.stats.p2p, 0u);
  EXPECT_EQ(b.stats.p2p_unmapped, 0u);
  EXPECT_TRUE(b.at(6).data_deps == std::vector<std::uint64_t>{5});
}

}  // namespace
}  // namespace chakrashim::tools::convert
