// The ET+ writer: fields copied as read, Chakra's additions in its key
// order, GPU children as copies of their parent, pg_name on NCCL kernels,
// nodes in id order whatever the file order.
#include "link/et_plus_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "link/device_ops.h"
#include "link/et_plus_linker.h"
#include "files/gzip_sink.h"
#include "support/builders.h"

namespace chakrashim::tools::link {
namespace {

using json = nlohmann::json;

std::string node(int id, int parent, int rf, const std::string& name) {
  return R"({"id": )" + std::to_string(id) + R"(, "name": ")" + name + R"(", "ctrl_deps": )" +
         std::to_string(parent) + R"j(, "inputs": {"values": [[1, 2.50]], "shapes": [[2]], "types": ["Tensor(float)"]},)j" +
         R"( "outputs": {"values": []}, "attrs": [{"name": "rf_id", "type": "uint64", "value": )" + std::to_string(rf) +
         R"(}, {"name": "op_schema", "type": "string", "value": "a\"b"}]})";
}

// Thread 1 of process 0.
TraceEvent ev(const char* cat, const char* name, std::int64_t ts_ns, std::int64_t dur_ns) {
  return testing_support::complete_event(cat, name, ts_ns, dur_ns, 0, 1);
}

struct Linked {
  std::vector<HostNode> host;
  DeviceOps device;
  LinkPlan plan;
  std::string text;
};

Linked link_text(const std::string& et_text, bool nccl) {
  Linked l;
  l.host = {{2, 1, 0}, {3, 2, 10}, {1, 1, 0}};  // root last, as torch writes it
  DeviceOpsBuilder b;
  TraceEvent op = ev("cpu_op", "record_param_comms", 1000500, 100000);
  op.record_function_id = {true, 10};
  op.external_id = {true, 100};
  b.add(op);
  TraceEvent launch = ev("cuda_runtime", "cudaLaunchKernel", 1001000, 1000);
  launch.correlation = {true, 5};
  b.add(launch);
  TraceEvent k = ev("kernel", nccl ? "ncclDevKernel_AllReduce" : "gemm", 1200001, 30000);
  k.correlation = {true, 5};
  k.external_id = {true, 100};
  k.stream = {true, 20};
  k.has_process_group_name = true;
  k.process_group_name = "0";
  b.add(k);
  l.device = std::move(b).finish();
  l.plan = link_et_plus(l.host, l.device);
  std::istringstream in(et_text);
  files::StringSink sink;
  const WriteOutcome out = write_et_plus(in, l.plan, l.device, sink, "/tmp");
  EXPECT_TRUE(out.ok) << out.error;
  l.text = sink.text();
  return l;
}

const std::string kEt = R"({"schema": "1.1.1-chakra.0.0.4", "pid": 7, "time": "t", "start_ts": 1, "nodes": [)" +
                        node(2, 1, 0, "[pytorch|profiler|execution_trace|thread]") + ", " +
                        node(3, 2, 10, "record_param_comms") + ", " +
                        node(1, 1, 0, "[pytorch|profiler|execution_trace|process]") + R"(], "finish_ts": 2})";

TEST(EtPlusWriter, WritesNodesInIdOrderWithChakrasFieldsAndKeepsEverythingElse) {
  const Linked l = link_text(kEt, true);
  const json doc = json::parse(l.text);
  EXPECT_EQ(doc["schema"], "1.1.1-chakra.0.0.4");
  EXPECT_EQ(doc["finish_ts"], 2);
  const auto& nodes = doc["nodes"];
  ASSERT_EQ(nodes.size(), 4u);
  for (std::size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(nodes[i]["id"], i);
  EXPECT_EQ(nodes[0]["ctrl_deps"], 0);
  EXPECT_FALSE(nodes[1].contains("ts"));  // the thread node has no op
  const auto& op = nodes[2];
  EXPECT_EQ(op["name"], "record_param_comms");
  EXPECT_EQ(op["ctrl_deps"], 1);
  EXPECT_DOUBLE_EQ(op["ts"].get<double>(), 1000.5);
  EXPECT_DOUBLE_EQ(op["inclusive_dur"].get<double>(), 100.0);
  EXPECT_TRUE(op["inter_thread_dep"].is_null());
  EXPECT_EQ(op["attrs"][1]["value"], "a\"b");
  // A float keeps its text.
  EXPECT_NE(l.text.find("[[1,2.50]]"), std::string::npos);
}

TEST(EtPlusWriter, AGpuChildIsACopyOfItsParentWithTheGpuOpsFieldsAppendedInChakrasOrder) {
  const Linked l = link_text(kEt, true);
  const json child = json::parse(l.text)["nodes"][3];
  EXPECT_EQ(child["name"], "ncclDevKernel_AllReduce");
  EXPECT_EQ(child["ctrl_deps"], 2);
  EXPECT_EQ(child["cat"], "kernel");
  EXPECT_EQ(child["ph"], "X");
  EXPECT_EQ(child["stream"], 20);
  EXPECT_EQ(child["pg_name"], "0");
  EXPECT_DOUBLE_EQ(child["ts"].get<double>(), 1200.001);
  EXPECT_DOUBLE_EQ(child["exclusive_dur"].get<double>(), 30.0);
  EXPECT_EQ(child["inputs"]["types"][0], "Tensor(float)");
  // nlohmann orders keys alphabetically, so check the order in the text.
  const auto at = [&](const char* k) { return l.text.rfind(std::string("\"") + k + "\":"); };
  EXPECT_LT(at("attrs"), at("inclusive_dur"));
  EXPECT_LT(at("inter_thread_dep"), at("cat"));
  EXPECT_LT(at("cat"), at("ph"));
  EXPECT_LT(at("ph"), at("stream"));
  EXPECT_LT(at("stream"), at("pg_name"));
}

TEST(EtPlusWriter, PgNameIsOnlyForNcclDevKernels) {
  const Linked l = link_text(kEt, false);
  const json child = json::parse(l.text)["nodes"][3];
  EXPECT_EQ(child["name"], "gemm");
  EXPECT_FALSE(child.contains("pg_name"));
}

TEST(EtPlusWriter, GzipSinkWritesAGzipStream) {
  const Linked l = link_text(kEt, true);
  files::StringSink packed;
  files::GzipSink gz(packed);
  ASSERT_TRUE(gz.write(l.text));
  ASSERT_TRUE(gz.finish());
  ASSERT_GT(packed.text().size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(packed.text()[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(packed.text()[1]), 0x8b);
}

TEST(EtPlusWriter, AnEtThatChangedBetweenTheTwoReadsIsAnError) {
  Linked l = link_text(kEt, true);
  const std::string fewer = R"({"schema": "x", "nodes": [)" + node(1, 1, 0, "root") + "]}";
  std::istringstream in(fewer);
  files::StringSink sink;
  const WriteOutcome out = write_et_plus(in, l.plan, l.device, sink, "/tmp");
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.error.find("fewer nodes"), std::string::npos);
}

}  // namespace
}  // namespace chakrashim::tools::link
