// Unit tests for the streaming ET reader (tools/common/et_reader.h).
#include "common/et_reader.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

namespace chakrashim::tools {
namespace {

constexpr const char* kNode =
    R"({"id": 5, "name": "aten::mm", "ctrl_deps": 3,
        "inputs": {"values": [[1, 2]], "shapes": [], "types": [], "strides": [], "id": 99},
        "outputs": {"values": [], "shapes": [], "types": [], "strides": []},
        "attrs": [{"name": "rf_id", "type": "uint64", "value": 41},
                  {"name": "fw_parent", "type": "uint64", "value": 0},
                  {"name": "seq_id", "type": "int64", "value": -1},
                  {"name": "scope", "type": "uint64", "value": 0},
                  {"name": "tid", "type": "uint64", "value": 1},
                  {"name": "fw_tid", "type": "uint64", "value": 0},
                  {"name": "op_schema", "type": "string", "value": ""},
                  {"name": "kernel_file", "type": "string", "value": ""}]})";

EtSummary read(const std::string& text, std::vector<EtNode>& nodes) {
  std::istringstream in(text);
  return read_execution_trace(in, [&](const EtNode& n) { nodes.push_back(n); });
}

TEST(EtReader, ReadsIdsParentRfIdAndTheSevenAttrs) {
  std::vector<EtNode> nodes;
  const auto s = read(std::string(R"({"schema": "1.1.1-chakra.0.0.4", "pid": 1, "time": "t", "start_ts": 1, "nodes": [)") +
                          kNode + R"(], "finish_ts": 2})",
                      nodes);
  ASSERT_TRUE(s.parse.ok);
  EXPECT_EQ(s.schema, "1.1.1-chakra.0.0.4");
  EXPECT_EQ(s.top_keys, (std::vector<std::string>{"schema", "pid", "time", "start_ts", "nodes", "finish_ts"}));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].id, 5u);  // not the "id" inside inputs
  EXPECT_EQ(nodes[0].parent, 3u);
  EXPECT_EQ(nodes[0].rf_id, 41u);
  EXPECT_EQ(nodes[0].name, "aten::mm");
  EXPECT_EQ(nodes[0].attr_mask, 0x7f);
}

TEST(EtReader, MarksAMissingAttr) {
  std::string node = kNode;
  node.replace(node.find("\"fw_tid\""), 8, "\"other\"");
  std::vector<EtNode> nodes;
  read(R"({"nodes": [)" + node + "]}", nodes);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].attr_mask, 0x7f & ~(1 << 5));
}

TEST(EtReader, SeesAnUnfinalizedFileAsCutOff) {
  std::vector<EtNode> nodes;
  const auto s = read(std::string(R"({"schema": "1.1.1-chakra.0.0.4", "nodes": [)") + kNode + ",\n", nodes);
  EXPECT_FALSE(s.parse.ok);
  EXPECT_TRUE(s.parse.truncated);
  EXPECT_EQ(nodes.size(), 1u);
}

TEST(EtReader, KeepsOnlyTheProcessGroupNodesFirstInputValue) {
  // torch's pg_config_info, as the observer writes it: one JSON string.
  const std::string pg =
      R"({"id": 2, "name": "## process_group:init ##", "ctrl_deps": 1,
          "inputs": {"values": ["[{\"pg_name\": \"0\", \"group_size\": 4}]", "second"],
                     "shapes": [[]], "types": ["String"], "strides": [[]]},
          "outputs": {"values": ["not this"], "shapes": [], "types": [], "strides": []}, "attrs": []})";
  std::string op = kNode;
  op.replace(op.find("[[1, 2]]"), 8, R"(["a string", [["nested"]]])");
  std::vector<EtNode> nodes;
  ASSERT_TRUE(read(R"({"nodes": [)" + pg + "," + op + "]}", nodes).parse.ok);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].process_groups, R"([{"pg_name": "0", "group_size": 4}])");
  EXPECT_FALSE(nodes[1].process_groups);  // an op's string input is not kept
  EXPECT_EQ(nodes[1].id, 5u);
  EXPECT_EQ(nodes[1].rf_id, 41u);
}

}  // namespace
}  // namespace chakrashim::tools
