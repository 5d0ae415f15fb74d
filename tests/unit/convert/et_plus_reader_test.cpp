// Reading an ET+ as chakra_converter's PyTorchNode reads it: the fields the
// graph needs, comm_size from inputs, the encoded tail, and one line for
// each kind of bad input.
#include "convert/et_plus_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "convert/chakra_et.pb.h"
#include "et_test_text.h"

namespace chakrashim::tools::convert {
namespace {

constexpr const char* kEmptyIo = R"({"values": [], "shapes": [], "types": [], "strides": []})";

std::string doc(const std::string& nodes, const std::string& schema = "1.1.1-chakra.0.0.4") {
  return R"({"schema": ")" + schema + R"(", "pid": 7, "time": "2026-01-01 00:00:00", "start_ts": 5, "nodes": [)" +
         nodes + R"(], "finish_ts": 9})";
}

std::string plain_node(int id, int parent, const std::string& name, const std::string& more = "") {
  return R"({"id": )" + std::to_string(id) + R"(, "name": ")" + name + R"(", "ctrl_deps": )" + std::to_string(parent) +
         R"(, "inputs": )" + kEmptyIo + R"(, "outputs": )" + kEmptyIo + ", " + et_attrs(id) + more + "}";
}

class EtPlusReader : public ::testing::Test {
 protected:
  EtPlusRead read_text(const std::string& text) { return read_et_plus(file_.write(text)); }
  TempJsonFile file_{"et_plus_reader"};
  const std::string& path_ = file_.path();
};

TEST_F(EtPlusReader, ReadsTheGraphFieldsAndMetadata) {
  const auto r = read_text(doc(plain_node(0, 0, "[pytorch|profiler|execution_trace|thread]") + "," +
                               plain_node(1, 0, "aten::mm", R"(, "exclusive_dur": 12.9, "inter_thread_dep": 4)") + "," +
                               plain_node(2, 1, "k", R"(, "exclusive_dur": 3, "cat": "kernel", "stream": 7, "pg_name": "0")")));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.trace.meta.schema, "1.1.1-chakra.0.0.4");
  EXPECT_EQ(r.trace.meta.pid, 7u);
  EXPECT_EQ(r.trace.meta.finish_ts, 9u);
  ASSERT_EQ(r.trace.nodes.size(), 3u);
  const auto& mm = r.trace.nodes[1];
  EXPECT_EQ(mm.parent, 0u);
  EXPECT_EQ(mm.exclusive_dur, 12);  // int() truncates
  EXPECT_EQ(mm.inter_thread_dep, 4u);
  EXPECT_FALSE(mm.gpu);
  const auto& k = r.trace.nodes[2];
  EXPECT_TRUE(k.gpu);
  EXPECT_EQ(k.pg_name, "0");
  chakrashim::et::Node tail;
  ASSERT_TRUE(tail.ParseFromString(k.tail));
  EXPECT_EQ(tail.inputs().values(), "[]");
  ASSERT_EQ(tail.attr_size(), 9);
  EXPECT_EQ(tail.attr(2).name(), "seq_id");
  EXPECT_EQ(tail.attr(2).int64_val(), -1);
  EXPECT_EQ(tail.attr(6).string_val(), "aten::x(Tensor a) -> Tensor");
  EXPECT_EQ(tail.attr(7).name(), "is_cpu_op");
  EXPECT_FALSE(tail.attr(7).bool_val());
  EXPECT_EQ(tail.attr(8).name(), "stream");
  EXPECT_EQ(tail.attr(8).int64_val(), 7);
  chakrashim::et::Node cpu_tail;
  ASSERT_TRUE(cpu_tail.ParseFromString(mm.tail));
  EXPECT_TRUE(cpu_tail.attr(7).bool_val());
  EXPECT_EQ(cpu_tail.attr(8).int64_val(), 0);  // a node without a stream gets 0
}

TEST_F(EtPlusReader, InputsAsPythonPrintsThemAndTheirCommSize) {
  const std::string io =
      R"j({"values": [[10, 11, 0, 256, 4, "cuda:0"], [[1, 2, 0, 8, 2, "cuda:0"], [3, 4, 0, 16, 2, "cuda:0"]], 1e-05, "it's", null, false],
          "shapes": [[16, 16], [[8], [16]], [], [], [], []],
          "types": ["Tensor(float)", "GenericList[Tensor(c10::Half),Tensor(c10::Half)]", "Double", "String", "None", "Bool"]})j";
  const std::string n = R"({"id": 1, "name": "nccl:all_reduce", "ctrl_deps": 0, "exclusive_dur": 1, "inputs": )" + io +
                        R"(, "outputs": )" + kEmptyIo + ", " + et_attrs(1) + "}";
  const auto r = read_text(doc(n));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.trace.nodes[0].comm_size, 256 * 4 + 8 * 2 + 16 * 2);
  chakrashim::et::Node tail;
  ASSERT_TRUE(tail.ParseFromString(r.trace.nodes[0].tail));
  EXPECT_EQ(tail.inputs().values(),
            "[[10, 11, 0, 256, 4, 'cuda:0'], [[1, 2, 0, 8, 2, 'cuda:0'], [3, 4, 0, 16, 2, 'cuda:0']], 1e-05, "
            "\"it's\", None, False]");
  EXPECT_EQ(tail.inputs().shapes(), "[[16, 16], [[8], [16]], [], [], [], []]");
  EXPECT_EQ(tail.inputs().types(),
            "['Tensor(float)', 'GenericList[Tensor(c10::Half),Tensor(c10::Half)]', 'Double', 'String', 'None', 'Bool']");
}

TEST_F(EtPlusReader, SendAndRecvKeepTheirPeerAndTag) {
  const std::string io =
      R"j({"values": [[[36, 42, 0, 128, 4, "cpu"]], "<Object>", 1, 7], "shapes": [[[4, 32]], [], [], []],
          "types": ["GenericList[Tensor(float)]", "Object", "Int", "Int"]})j";
  std::string nodes;
  for (const char* name : {"c10d::send", "c10d::recv_", "aten::add"}) {
    const int id = static_cast<int>(nodes.size() % 97) + 1;  // distinct ids
    nodes += (nodes.empty() ? "" : ",") + std::string(R"({"id": )") + std::to_string(id) + R"(, "name": ")" + name +
             R"(", "ctrl_deps": 0, "exclusive_dur": 1, "inputs": )" + io + R"(, "outputs": )" + kEmptyIo + ", " +
             et_attrs(id) + "}";
  }
  const auto r = read_text(doc(nodes));
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.trace.nodes.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(r.trace.nodes[i].p2p_peer, 1) << r.trace.nodes[i].name;
    EXPECT_EQ(r.trace.nodes[i].p2p_tag, 7) << r.trace.nodes[i].name;
    EXPECT_EQ(r.trace.nodes[i].comm_size, 128 * 4);
  }
  EXPECT_FALSE(r.trace.nodes[2].p2p_peer.has_value()) << "only point-to-point ops";
}

TEST_F(EtPlusReader, ATensorWithoutNumelHasNoCommSize) {
  const std::string io = R"j({"values": [[10, 11]], "shapes": [[1]], "types": ["Tensor(float)"]})j";
  const auto r = read_text(doc(R"({"id": 1, "name": "x", "ctrl_deps": 0, "exclusive_dur": 1, "inputs": )" + io +
                               R"(, "outputs": )" + kEmptyIo + ", " + et_attrs(1) + "}"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.trace.nodes[0].comm_size.has_value());
}

TEST_F(EtPlusReader, AttrsOverrideStreamAndGiveSendRecvTheirGroup) {
  const auto r = read_text(doc(plain_node(
      1, 0, "record_param_comms",
      R"(, "exclusive_dur": 1, "attrs": [{"name": "rf_id", "value": 1}, {"name": "fw_parent", "value": 0},
         {"name": "seq_id", "value": 0}, {"name": "scope", "value": 0}, {"name": "tid", "value": 1},
         {"name": "fw_tid", "value": 0}, {"name": "op_schema", "value": ""}, {"name": "pg_name", "value": "3"},
         {"name": "stream", "value": 2}])")));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.trace.nodes[0].pg_name, "3");
  chakrashim::et::Node tail;
  ASSERT_TRUE(tail.ParseFromString(r.trace.nodes[0].tail));
  EXPECT_EQ(tail.attr(tail.attr_size() - 1).int64_val(), 2);
}

// --- bad input: one line each -------------------------------------------------

TEST_F(EtPlusReader, ADeviceTraceIsNamed) {
  const auto r = read_text(R"({"schemaVersion": 1, "traceEvents": []})");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("a device trace (Kineto format"), std::string::npos) << r.error;
}

TEST_F(EtPlusReader, AnUnknownSchemaIsNamed) {
  const auto r = read_text(doc(plain_node(1, 0, "x", R"(, "exclusive_dur": 1)"), "1.0.3"));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("ET schema '1.0.3' is not one chakra_converter reads (1.0.2-chakra.0.0.4"), std::string::npos)
      << r.error;
  // Listed by the converter but never parsed by it.
  EXPECT_FALSE(read_text(doc(plain_node(1, 0, "x", R"(, "exclusive_dur": 1)"), "1.1.1-chakra.1.0.0")).ok);
  EXPECT_TRUE(read_text(doc(plain_node(1, 0, "x", R"(, "exclusive_dur": 1)"), "1.0.2-chakra.0.0.4")).ok);
}

TEST_F(EtPlusReader, AnEtThatWasNeverLinkedIsNamed) {
  const auto r = read_text(doc(plain_node(0, 0, "[pytorch|profiler|execution_trace|thread]") + "," + plain_node(1, 0, "x")));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("a host ET that was never linked"), std::string::npos) << r.error;
}

TEST_F(EtPlusReader, InvalidAndTruncatedJsonAreTold) {
  const std::string good = doc(plain_node(1, 0, "x", R"(, "exclusive_dur": 1)"));
  auto r = read_text(good.substr(0, good.size() / 2));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("ends early", 0), 0u) << r.error;
  std::string bad = good;
  bad.replace(bad.find("\"pid\": 7"), 8, "\"pid\": 7x");
  r = read_text(bad);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("invalid JSON", 0), 0u) << r.error;
}

TEST_F(EtPlusReader, ATruncatedGzipIsTold) {
  const std::string good = doc(plain_node(1, 0, "x", R"(, "exclusive_dur": 1)"));
  const std::string gz_path = path_ + ".gz";
  gzFile f = gzopen(gz_path.c_str(), "wb");
  gzwrite(f, good.data(), static_cast<unsigned>(good.size()));
  gzclose(f);
  std::ifstream in(gz_path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(gz_path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 12);
  const auto r = read_et_plus(gz_path);
  std::remove(gz_path.c_str());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("truncated"), std::string::npos) << r.error;
}

TEST_F(EtPlusReader, NodesTheConverterWouldFailOnAreNamed) {
  auto r = read_text(doc(R"({"id": 3, "name": "x", "inputs": {}, "outputs": {}})"));
  EXPECT_EQ(r.error, "node 3: no 'ctrl_deps'");
  r = read_text(doc(std::string(R"({"id": 4, "name": "x", "ctrl_deps": 0, "exclusive_dur": 1, "inputs": )") + kEmptyIo +
                    R"(, "outputs": )" + kEmptyIo + R"(, "attrs": [{"name": "rf_id", "value": 1}]})"));
  EXPECT_EQ(r.error, "node 4: no attr fw_parent");
  r = read_text(doc(plain_node(5, 0, "x", R"(, "exclusive_dur": null)")));
  EXPECT_EQ(r.error, "node 5: its exclusive_dur is not a number");
  r = read_text(R"({"schema": "1.1.1-chakra.0.0.4", "pid": 1, "time": "t", "start_ts": 1, "nodes": []})");
  EXPECT_NE(r.error.find("no top-level 'finish_ts'"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace chakrashim::tools::convert
