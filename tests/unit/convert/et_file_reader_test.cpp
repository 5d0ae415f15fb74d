// read_et_file on .et bytes written by convert's own record writer: the
// nodes check judges come back (deps, type, is_cpu_op, comm attributes, the
// process groups' world), and a file cut short, a gzip file and a file of
// something else each give a read error; ranks from PREFIX.R.et names.
#include "convert/et_file_reader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "convert/et_encoding.h"
#include "et_test_text.h"
#include "files/byte_sink.h"

namespace chakrashim::tools::convert {
namespace {

std::string et_bytes() {
  files::StringSink sink;
  NodeEncoder encoder;
  EtRecordWriter writer(sink);
  writer.metadata({"1.1.1-chakra.0.0.4", "", 1, 0, 0});
  TailFields tail;
  tail.op_schema = "x";
  tail.inputs.values = R"(['[{"pg_name": "0", "ranks": [], "group_size": 4}]'])";
  std::vector<std::uint64_t> none, deps{1};
  HeadFields head;
  head.id = 1;
  head.name = "## process_group:init ##";
  head.kind = NodeKind::metadata;
  head.data_deps = &none;
  writer.record({encoder.head(head), encoder.tail(tail)});
  tail.inputs.values = "[]";
  tail.is_cpu_op = false;
  head.id = 2;
  head.name = "c10d::allreduce_";
  head.kind = NodeKind::comm_coll;
  head.ctrl_dep = 1;
  head.data_deps = &deps;
  writer.record({encoder.head(head), encoder.tail(tail), encoder.comm(CollKind::all_reduce, 4096, "1")});
  writer.flush();
  return sink.text();
}

TEST(EtFileReader, ReadsWhatCheckJudges) {
  TempJsonFile file("et_reader");
  const std::string path = file.write(et_bytes());
  const check::EtFile f = read_et_file(path);
  ASSERT_EQ(f.read_error, "");
  ASSERT_EQ(f.nodes.size(), 2u);
  EXPECT_EQ(f.nodes[0].type, 1);
  EXPECT_EQ(f.nodes[0].world, 4u);
  EXPECT_EQ(f.nodes[0].is_cpu_op, true);
  const check::EtFileNode& c = f.nodes[1];
  EXPECT_EQ(c.id, 2u);
  EXPECT_EQ(c.type, 7);
  EXPECT_EQ(c.ctrl_deps, std::vector<std::uint64_t>{1});
  EXPECT_EQ(c.data_deps, std::vector<std::uint64_t>{1});
  EXPECT_EQ(c.is_cpu_op, false);
  EXPECT_EQ(c.comm_type, 0);
  EXPECT_EQ(c.comm_size, 4096);
  EXPECT_EQ(c.pg_name, "1");
}

TEST(EtFileReader, AFileCutShortGzipOrOtherBytesIsAReadError) {
  TempJsonFile file("et_reader_bad");
  const std::string bytes = et_bytes();
  EXPECT_NE(read_et_file(file.write(bytes.substr(0, bytes.size() - 3))).read_error.find("ends early"),
            std::string::npos);
  EXPECT_NE(read_et_file(file.write("\x1f\x8b\x08 gzip")).read_error.find("gzip"), std::string::npos);
  EXPECT_NE(read_et_file(file.write("{\"nodes\": []}")).read_error, "");
  EXPECT_NE(read_et_file(file.write("")).read_error, "");
  EXPECT_NE(read_et_file(file.path() + ".none").read_error, "");
}

TEST(EtFileReader, RanksFromPrefixDotRankDotEt) {
  EXPECT_EQ(et_file_rank("/t/0_et/rank.3.et"), 3u);
  EXPECT_EQ(et_file_rank("llm.12.et"), 12u);
  EXPECT_EQ(et_file_rank("linked.et"), std::nullopt);
}

}  // namespace
}  // namespace chakrashim::tools::convert
