// A node written as head + tail + comm parts is byte for byte the Node
// built and serialized at once, which is what Chakra's Python writes.
#include "convert/et_encoding.h"

#include <gtest/gtest.h>

#include "convert/chakra_et.pb.h"
#include "files/byte_sink.h"

namespace chakrashim::tools::convert {
namespace {

namespace pb = chakrashim::et;

TEST(EtEncoding, PartsConcatenateToTheWholeNode) {
  TailFields t;
  t.inputs = {"[[1, 2, 0, 4, 4, 'cuda:0']]", "[[4]]", "['Tensor(float)']"};
  t.outputs = {"[]", "[]", "[]"};
  t.rf_id = 9;
  t.seq_id = -1;
  t.tid = 2;
  t.op_schema = "";
  t.is_cpu_op = false;
  t.stream = 7;
  const std::vector<std::uint64_t> deps = {3, 300};
  HeadFields h;
  h.id = 12;
  h.name = "ncclKernel_AllReduce";
  h.kind = NodeKind::comm_coll;
  h.ctrl_dep = 11;
  h.data_deps = &deps;
  h.duration_micros = 31;
  NodeEncoder e;
  const std::string parts = e.head(h) + e.tail(t) + e.comm(CollKind::all_reduce, 16, "0");

  pb::Node whole;
  whole.set_id(12);
  whole.set_name("ncclKernel_AllReduce");
  whole.set_type(pb::COMM_COLL_NODE);
  whole.add_ctrl_deps(11);
  whole.add_data_deps(3);
  whole.add_data_deps(300);
  whole.set_duration_micros(31);
  whole.mutable_inputs()->set_values(t.inputs.values);
  whole.mutable_inputs()->set_shapes(t.inputs.shapes);
  whole.mutable_inputs()->set_types(t.inputs.types);
  whole.mutable_outputs()->set_values("[]");
  whole.mutable_outputs()->set_shapes("[]");
  whole.mutable_outputs()->set_types("[]");
  const auto add = [&](const char* name) {
    auto* a = whole.add_attr();
    a->set_name(name);
    return a;
  };
  add("rf_id")->set_int64_val(9);
  add("fw_parent")->set_int64_val(0);
  add("seq_id")->set_int64_val(-1);
  add("scope")->set_int64_val(0);
  add("tid")->set_int64_val(2);
  add("fw_tid")->set_int64_val(0);
  add("op_schema")->set_string_val("");
  add("is_cpu_op")->set_bool_val(false);
  add("stream")->set_int64_val(7);
  add("comm_type")->set_int64_val(pb::ALL_REDUCE);
  add("comm_size")->set_int64_val(16);
  add("pg_name")->set_string_val("0");
  EXPECT_EQ(parts, whole.SerializeAsString());
}

TEST(EtEncoding, RecordsAreLengthDelimited) {
  files::StringSink sink;
  EtRecordWriter w(sink);
  MetadataFields m;
  m.schema = "1.1.1-chakra.0.0.4";
  m.pid = 1;
  m.time = "t";
  w.metadata(m);
  const std::string big(300, 'x');
  w.record({big});
  ASSERT_TRUE(w.flush());
  const std::string& out = sink.text();
  pb::GlobalMetadata meta;
  const auto first = static_cast<unsigned char>(out[0]);
  ASSERT_LT(first, 0x80);
  ASSERT_TRUE(meta.ParseFromString(out.substr(1, first)));
  ASSERT_EQ(meta.attr_size(), 5);
  EXPECT_EQ(meta.attr(0).string_val(), "1.1.1-chakra.0.0.4");
  EXPECT_EQ(meta.attr(1).uint64_val(), 1u);
  // 300 is the two-byte varint ac 02.
  EXPECT_EQ(static_cast<unsigned char>(out[1 + first]), 0xac);
  EXPECT_EQ(static_cast<unsigned char>(out[2 + first]), 0x02);
  EXPECT_EQ(out.size(), 1 + first + 2 + 300u);
}

}  // namespace
}  // namespace chakrashim::tools::convert
