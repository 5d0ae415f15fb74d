// Convert's in-memory link: a plain host ET read as convert reads it, then
// joined with a hand-made link plan. The e2e differential tests
// (tests/tools/test_convert.py InMemory) compare whole .et files with the
// ET+ file path; these pin each rule and each case left to that path.
#include "convert/linked_join.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "convert/chakra_et.pb.h"
#include "et_test_text.h"

namespace chakrashim::tools::convert {
namespace {

std::string host_node(int id, const std::string& parent, const std::string& name, const std::string& more = "",
                 const std::string& attr_extra = "") {
  const std::string io = R"j({"values": [[5, 6, 0, 4, 4, "cuda:0"]], "shapes": [[4]], "types": ["Tensor(float)"]})j";
  return R"({"id": )" + std::to_string(id) + R"(, "name": ")" + name + R"(", "ctrl_deps": )" + parent +
         R"(, "inputs": )" + io + R"(, "outputs": {"values": [], "shapes": [], "types": []}, )" + et_attrs(id, attr_extra) +
         more + "}";
}

std::string host_doc(const std::string& nodes) {
  return R"({"schema": "1.1.1-chakra.0.0.4", "pid": 7, "time": "t", "start_ts": 5, "nodes": [)" + nodes +
         R"(], "finish_ts": 9})";
}

class LinkedJoin : public ::testing::Test {
 protected:
  HostEtRead read(const std::string& text) { return read_host_et(file_.write(text)); }
  TempJsonFile file_{"linked_join"};

  // Host nodes at file positions 0 (process root, id 1) and 1 (an op, id 2,
  // under it), renumbered 0 and 1; the op is timed and has two GPU children.
  static link::LinkPlan plan() {
    link::LinkPlan p;
    p.nodes.resize(2);
    p.nodes[0].new_id = 0;
    p.nodes[1].new_id = 1;
    p.nodes[1].new_parent = 0;
    p.nodes[1].timing = 0;
    p.nodes[1].first_child = 0;
    p.nodes[1].children = 2;
    p.timings.push_back({1000, 12'999, 7'500, 42});
    p.child_ops = {1, 0};
    return p;
  }
  static link::DeviceOps device() {
    link::DeviceOps d;
    const auto name = d.names.intern("ncclDevKernel_AllReduce_Sum_f32");
    const auto other = d.names.intern("gemm");
    const auto cat = d.names.intern("kernel"), ph = d.names.intern("X"), pg = d.names.intern("pg7");
    d.gpu.push_back({2000, 3'900, 1, 1, 7, name, cat, ph, pg});
    d.gpu.push_back({3000, 999, 2, 1, std::nullopt, other, cat, ph, pg});
    return d;
  }
};

TEST_F(LinkedJoin, HostNodesAndTheirGpuChildrenAsTheEtPlusReaderSeesThem) {
  HostEtRead host = read(host_doc(host_node(1, "null", "[pytorch|profiler|execution_trace|process]") + "," +
                                  host_node(2, "1", "aten::mm")));
  ASSERT_TRUE(host.ok) << host.error;
  EXPECT_TRUE(host.ordinary);
  ASSERT_EQ(host.nodes.size(), 2u);
  EXPECT_TRUE(host.nodes[1].node.tail.empty()) << "kept as fields, not encoded";
  NodeEncoder encoder;
  const link::LinkPlan p = plan();
  const link::DeviceOps d = device();
  const auto joined = join_linked(host, p, d, encoder);
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->meta.pid, 7u);
  ASSERT_EQ(joined->nodes.size(), 4u);
  const EtPlusNode& root = joined->nodes[0];
  EXPECT_EQ(root.id, 0u);
  EXPECT_FALSE(root.parent) << "ctrl_deps null stays none";
  EXPECT_EQ(root.exclusive_dur, 0);
  const EtPlusNode& op = joined->nodes[1];
  EXPECT_EQ(op.id, 1u);
  EXPECT_EQ(op.parent, 0u);
  EXPECT_EQ(op.exclusive_dur, 7);  // int(7.500)
  EXPECT_EQ(op.inter_thread_dep, 42u);
  EXPECT_EQ(op.comm_size, 16);
  et::Node op_tail;
  ASSERT_TRUE(op_tail.ParseFromString(op.tail));
  EXPECT_EQ(op_tail.attr(7).name(), "is_cpu_op");
  EXPECT_TRUE(op_tail.attr(7).bool_val());
  EXPECT_EQ(op_tail.attr(8).int64_val(), 0);  // the converter's default stream
  // Children in the plan's order: GPU op 1 (gemm, no stream), then GPU op 0.
  const EtPlusNode& gemm = joined->nodes[2];
  EXPECT_EQ(gemm.id, 2u);
  EXPECT_EQ(gemm.parent, 1u);
  EXPECT_EQ(gemm.name, "gemm");
  EXPECT_TRUE(gemm.gpu);
  EXPECT_EQ(gemm.exclusive_dur, 0);  // int(0.999)
  EXPECT_EQ(gemm.pg_name, "") << "pg_name only on NCCL kernels";
  EXPECT_EQ(gemm.comm_size, 16);
  et::Node gemm_tail;
  ASSERT_TRUE(gemm_tail.ParseFromString(gemm.tail));
  EXPECT_EQ(gemm_tail.inputs().values(), "[[5, 6, 0, 4, 4, 'cuda:0']]");
  EXPECT_FALSE(gemm_tail.attr(7).bool_val());
  EXPECT_EQ(gemm_tail.attr_size(), 8) << "a null stream: no stream attribute";
  const EtPlusNode& nccl = joined->nodes[3];
  EXPECT_EQ(nccl.id, 3u);
  EXPECT_EQ(nccl.exclusive_dur, 3);  // int(3.900)
  EXPECT_EQ(nccl.pg_name, "pg7");
  et::Node nccl_tail;
  ASSERT_TRUE(nccl_tail.ParseFromString(nccl.tail));
  EXPECT_EQ(nccl_tail.attr(8).int64_val(), 7);
  EXPECT_TRUE(host.nodes.empty()) << "consumed";
}

TEST_F(LinkedJoin, NodesComeInThePlansWriteOrder) {
  HostEtRead host = read(host_doc(host_node(2, "1", "aten::mm") + "," + host_node(1, "null", "root")));
  ASSERT_TRUE(host.ok) << host.error;
  link::LinkPlan p;
  p.nodes.resize(2);
  p.nodes[0] = {1, 0, 0, 0, 0};
  p.nodes[1] = {0, std::nullopt, std::nullopt, 0, 0};
  p.timings.push_back({0, 2000, 2000, std::nullopt});
  p.in_file_order = false;
  p.write_order = {1, 0};
  NodeEncoder encoder;
  const auto joined = join_linked(host, p, link::DeviceOps{}, encoder);
  ASSERT_TRUE(joined);
  ASSERT_EQ(joined->nodes.size(), 2u);
  EXPECT_EQ(joined->nodes[0].name, "root");
  EXPECT_EQ(joined->nodes[0].id, 0u);
  EXPECT_EQ(joined->nodes[1].name, "aten::mm");
  EXPECT_EQ(joined->nodes[1].exclusive_dur, 2);
  EXPECT_EQ(joined->nodes[1].inter_thread_dep, 0u) << "null: none";
}

// Each case the join leaves to the ET+ file path.
TEST_F(LinkedJoin, KeysItDoesNotModelMakeTheEtNotOrdinary) {
  for (const auto& [more, attr] : std::vector<std::pair<std::string, std::string>>{
           {R"(, "stream": 3)", ""},
           {R"(, "cat": "kernel")", ""},
           {R"(, "pg_name": "0")", ""},
           {R"(, "exclusive_dur": 1)", ""},
           {R"(, "inter_thread_dep": 1)", ""},
           {R"(, "name": "again")", ""},
           {R"(, "ctrl_deps": 1)", ""},
           {"", R"(, {"name": "stream", "type": "int", "value": 3})"}}) {
    const HostEtRead host = read(host_doc(host_node(1, "null", "root") + "," + host_node(2, "1", "aten::mm", more, attr)));
    ASSERT_TRUE(host.ok) << more << attr << ": " << host.error;
    EXPECT_FALSE(host.ordinary) << more << attr;
  }
  const HostEtRead plain = read(host_doc(host_node(1, "null", "root", R"(, "ts": 5, "inclusive_dur": 3, "ph": "X")")));
  ASSERT_TRUE(plain.ok);
  EXPECT_TRUE(plain.ordinary) << "keys the reader ignores do not matter";
  // A pg_name attr (chakrashim's recorder names each c10d op's group) is
  // joined in memory: both ways give the same bytes (tools.convert).
  const HostEtRead named = read(host_doc(host_node(1, "null", "root") + "," +
                                         host_node(2, "1", "c10d::allreduce_", "",
                                                   R"(, {"name": "pg_name", "type": "string", "value": "3"})")));
  ASSERT_TRUE(named.ok) << named.error;
  EXPECT_TRUE(named.ordinary);
}

TEST_F(LinkedJoin, CasesLeftToTheFilePath) {
  NodeEncoder encoder;
  const link::DeviceOps d = device();
  const std::string two = host_doc(host_node(1, "null", "root") + "," + host_node(2, "1", "aten::mm"));
  {
    HostEtRead host = read(two);
    host.ordinary = false;
    EXPECT_FALSE(join_linked(host, plan(), d, encoder));
  }
  {
    HostEtRead host = read(host_doc(host_node(1, "null", "root")));
    EXPECT_FALSE(join_linked(host, plan(), d, encoder)) << "a node count unlike the plan's";
  }
  {
    HostEtRead host = read(two);
    link::LinkPlan p = plan();
    p.timings[0].exclusive = -1500;  // the reader's "exclusive_dur is negative"
    EXPECT_FALSE(join_linked(host, p, d, encoder));
  }
  {
    HostEtRead host = read(two);
    link::LinkPlan p = plan();
    p.timings[0].exclusive = -999;  // int(-0.999) is 0: no error
    EXPECT_TRUE(join_linked(host, p, d, encoder));
  }
  {
    HostEtRead host = read(two);
    link::LinkPlan p = plan();
    p.nodes[1].timing.reset();
    p.nodes[1].children = 0;  // nothing linked: the reader's "never linked"
    EXPECT_FALSE(join_linked(host, p, d, encoder));
  }
  {
    HostEtRead host = read(R"({"schema": "1.1.1-chakra.0.0.4", "nodes": [)");
    EXPECT_FALSE(host.ok);
    EXPECT_FALSE(join_linked(host, plan(), d, encoder));
  }
}

TEST_F(LinkedJoin, HostReadErrorsAreTheReadersOwn) {
  const HostEtRead host = read(host_doc(R"({"id": 1, "name": "x", "ctrl_deps": 0})"));
  EXPECT_FALSE(host.ok);
  EXPECT_EQ(host.error, "node 1: no 'inputs'");
  EXPECT_TRUE(host.nodes.empty());
}

}  // namespace
}  // namespace chakrashim::tools::convert
